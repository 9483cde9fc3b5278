"""Minimal QMP client over a unix socket (QEMU's JSON monitor protocol)."""

import json
import socket
import time


class QmpError(Exception):
    pass


class Qmp:
    def __init__(self, path, timeout=5.0):
        self.path = path
        self.timeout = timeout
        self.sock = None
        self._buf = b""

    def connect(self, wait_s=5.0, alive=None):
        """Connects (QEMU may still be creating the socket), reads the
        greeting and negotiates capabilities."""
        deadline = time.monotonic() + wait_s
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(self.timeout)
            try:
                s.connect(self.path)
                break
            except OSError as e:
                s.close()
                if time.monotonic() >= deadline or (alive is not None and not alive()):
                    raise QmpError("cannot connect to QMP at %s: %s" % (self.path, e))
                time.sleep(0.02)
        self.sock = s
        greeting = self._recv()
        if "QMP" not in greeting:
            raise QmpError("unexpected QMP greeting %r" % greeting)
        self.command("qmp_capabilities")
        return self

    def _recv(self):
        while b"\n" not in self._buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise QmpError("QMP connection closed")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def command(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            r = self._recv()
            if "return" in r:
                return r["return"]
            if "error" in r:
                raise QmpError("%s: %s" % (name, r["error"].get("desc", r["error"])))
            # asynchronous events are skipped

    def vcpu_threads(self):
        """{cpu index: host thread id} from query-cpus-fast."""
        return {c["cpu-index"]: c["thread-id"] for c in self.command("query-cpus-fast")}

    def close(self):
        if self.sock:
            self.sock.close()
            self.sock = None

    def driver_ok(self, qom_path):
        """True once the guest driver set DRIVER_OK on that virtio device
        (QEMU's x-query-virtio-status, 7.2+)."""
        st = self.command("x-query-virtio-status", path=qom_path)
        return any("DRIVER_OK" in x for x in st.get("status", {}).get("statuses", ()))
