"""libvirt domain XML for one appliance: what qemucmd.build() says on a
QEMU command line, said to libvirt (https://libvirt.org/formatdomain.html).
Pure: no connection, so every mapping is unit-tested (tests/py).

Interfaces are Iface objects; iface_from_nic() turns the runner's backends'
QEMU -netdev values into them and refuses, with one line, what libvirt 9
cannot express."""

import xml.etree.ElementTree as ET

from ..errors import usage
from ..optypes import digits
from . import qemucmd

QEMU_NS = "http://libvirt.org/schemas/domain/qemu/1.0"
ET.register_namespace("qemu", QEMU_NS)

# libvirt's PCI machines; microvm has no PCI bus for the devices libvirt
# always adds ("XML error: No PCI buses available").
MACHINES = ("q35", "pc")
KINDS = ("udp", "user", "passt", "vhostuser", "network", "bridge", "ethernet")

# virtio-net properties libvirt has <driver> attributes for.
DRIVER_PROPS = ("event_idx", "rx_queue_size", "tx_queue_size", "packed")
# Properties only <qemu:override> can set (libvirt 8.2+): QEMU 7.2 under
# TCG crashes when vhost-user starts with MSI-X, so vectors=0.
OVERRIDE_PROPS = {"vectors": "unsigned"}


# Kinds libvirt gives several queue pairs (<driver queues='N'/>: it sets
# mq=on and the MSI-X vectors itself): the tap-based ones and vhost-user.
MQ_KINDS = ("vhostuser", "network", "bridge", "ethernet")


class Iface:
    """One virtio NIC: kind (KINDS), MAC, the kind's source attributes and
    device properties (qemucmd.Nic's props); queues: its queue pairs."""

    def __init__(self, kind, mac, props=None, queues=1, **source):
        if kind not in KINDS:
            raise ValueError("interface kind %r: one of %s" % (kind, ", ".join(KINDS)))
        self.kind = kind
        self.mac = mac
        self.props = dict(props or {})
        self.queues = queues or 1
        self.source = source
        if self.queues > 1 and kind not in MQ_KINDS:
            raise usage("libvirt: a %s interface has one queue pair (queues: %s)" % (
                kind, ", ".join(MQ_KINDS)))
        # mq=on is what <driver queues='N'/> says; PCI vectors libvirt
        # counts itself (2N+2), unless the backend pins them (vhost-user: 0)
        if self.props.pop("mq", None) is not None and self.queues < 2:
            raise usage("libvirt: mq=on without queue pairs to give it")
        if self.queues > 1 and self.props.get("vectors") == 2 * self.queues + 2:
            del self.props["vectors"]
        for k in self.props:
            if k not in DRIVER_PROPS and k not in OVERRIDE_PROPS:
                raise usage("libvirt: virtio-net property %s has no libvirt equivalent" % k)

    def element(self):
        e = ET.Element("interface", type=self.kind)
        ET.SubElement(e, "mac", address=self.mac)
        getattr(self, "_src_" + self.kind)(e)
        ET.SubElement(e, "model", type="virtio")
        drv = {k: _onoff(v) for k, v in self.props.items() if k in DRIVER_PROPS}
        if self.queues > 1:
            drv["queues"] = str(self.queues)
        if drv:
            ET.SubElement(e, "driver", **drv)
        return e

    def _src_udp(self, e):
        s = self.source
        src = ET.SubElement(e, "source", address=s["remote"][0], port=str(s["remote"][1]))
        ET.SubElement(src, "local", address=s["local"][0], port=str(s["local"][1]))

    def _src_user(self, e):
        if self.source.get("net"):
            addr, prefix = self.source["net"]
            ET.SubElement(e, "ip", family="ipv4", address=addr, prefix=str(prefix))

    def _src_passt(self, e):
        e.set("type", "user")
        ET.SubElement(e, "backend", type="passt")
        addr, prefix = self.source["ip"]
        ET.SubElement(e, "ip", family="ipv4", address=addr, prefix=str(prefix))
        for proto, host_port, guest_port in self.source.get("forwards", ()):
            pf = ET.SubElement(e, "portForward", proto=proto)
            ET.SubElement(pf, "range", start=str(host_port), to=str(guest_port))

    def _src_vhostuser(self, e):
        ET.SubElement(e, "source", type="unix", path=self.source["path"],
                      mode=self.source.get("mode", "client"))

    def _src_network(self, e):
        ET.SubElement(e, "source", network=self.source["name"])

    def _src_bridge(self, e):
        ET.SubElement(e, "source", bridge=self.source["name"])

    def _src_ethernet(self, e):
        if self.source.get("dev"):
            ET.SubElement(e, "target", dev=self.source["dev"],
                          managed="yes" if self.source.get("managed", True) else "no")


def _onoff(v):
    if v is True or v is False:
        return "on" if v else "off"
    return str(v)


def qemu_opts(text):
    """"dgram,local.port=5,a=b,,c" -> ("dgram", {"local.port": "5", "a": "b,c"})."""
    parts, cur, i = [], "", 0
    while i < len(text):
        if text[i] == "," and text[i + 1:i + 2] == ",":
            cur += ","
            i += 2
            continue
        if text[i] == ",":
            parts.append(cur)
            cur = ""
        else:
            cur += text[i]
        i += 1
    parts.append(cur)
    kind, opts = parts[0], {}
    for p in parts[1:]:
        k, _, v = p.partition("=")
        opts[k] = v
    return kind, opts


def _hostport(text, what):
    host, _, port = text.rpartition(":")
    if not host or not digits(port):
        raise usage("libvirt: %s %r is not HOST:PORT" % (what, text))
    return host, int(port)


def iface_from_nic(nic, chardevs):
    """The Iface for one qemucmd.Nic. chardevs: {id: path} of the
    -chardev socket options the backend gave (vhost-user)."""
    kind, o = qemu_opts(nic.netdev)
    if kind == "dgram" and o.get("local.type") == "inet" and o.get("remote.type") == "inet":
        # libvirt 9 has no dgram interface; <interface type='udp'> is QEMU's
        # socket,udp=: the same wire, one datagram per frame.
        return Iface("udp", nic.mac, nic.props,
                     local=(o["local.host"], int(o["local.port"])),
                     remote=(o["remote.host"], int(o["remote.port"])))
    if kind == "socket" and "udp" in o and "localaddr" in o:
        return Iface("udp", nic.mac, nic.props, local=_hostport(o["localaddr"], "localaddr"),
                     remote=_hostport(o["udp"], "udp"))
    if kind == "vhost-user" and o.get("chardev") in chardevs:
        queues = int(o["queues"]) if digits(o.get("queues", "")) else 1
        return Iface("vhostuser", nic.mac, nic.props, queues=queues,
                     path=chardevs[o["chardev"]], mode="client")
    raise usage("libvirt: -netdev %s has no libvirt 9 interface (%s)" % (
        kind, NO_INTERFACE.get(kind, "not one libvirt maps")))


NO_INTERFACE = {
    "hubport": "QEMU's hub is not a libvirt interface",
    "user": "libvirt's user interface has no restrict=on, so slirp would forward the "
            "guest's traffic to the host's sockets instead of dropping it",
    "stream": "libvirt starts passt itself (<backend type='passt'/>) and cannot join the "
              "runner's passt socket",
    "tap": "the runner's tap lives in a network namespace of its own, and libvirt starts "
           "QEMU in the host's",
}


def split_extra(extra):
    """(chardevs {id: path}, remaining QEMU args) from a backend's extra
    QEMU arguments: socket chardevs become vhostuser sources."""
    chardevs, rest, i = {}, [], 0
    while i < len(extra):
        if extra[i] == "-chardev" and i + 1 < len(extra):
            kind, o = qemu_opts(extra[i + 1])
            if kind == "socket" and "id" in o and "path" in o and o.get("server") != "on":
                chardevs[o["id"]] = o["path"]
                i += 2
                continue
        rest.append(extra[i])
        i += 1
    return chardevs, rest


def cpuset(cpus):
    return ",".join(str(c) for c in sorted(cpus))


class Domain:
    """A transient domain for one GuestSpec. console: ("file", path) or
    ("pty",); pins: pinning.parse() roles (vcpu, main, qemu)."""

    def __init__(self, spec, name, ifaces, console, pins=None, emulator=None,
                 qemu_args=(), description=""):
        if spec.machine not in MACHINES:
            raise usage("libvirt: machine %s: one of %s (libvirt 9 adds PCI devices to every "
                        "machine, and microvm has no PCI bus)" % (spec.machine,
                                                                  ", ".join(MACHINES)))
        self.spec = spec
        self.name = name
        self.ifaces = list(ifaces)
        self.console = console
        self.pins = pins or {}
        self.emulator = emulator
        self.qemu_args = list(qemu_args)
        self.description = description
        self.files = {}  # host path -> the path the domain names (libvirtstage.py)
        self.overrides = []  # (alias, property, type, value)
        for k, nic in enumerate(self.ifaces):
            for p, t in OVERRIDE_PROPS.items():
                if p in nic.props:
                    self.overrides.append(("net%d" % k, p, t, str(nic.props[p])))

    def host_files(self):
        """The files on the host that the domain's QEMU opens itself."""
        if self.spec.boot == "uefi":
            return [self.spec.firmware, self.spec.esp]
        return [self.spec.image]

    def _host(self, path):
        return self.files.get(path, path)

    def xml(self):
        s = self.spec
        root = ET.Element("domain", type="kvm" if s.accel == "kvm" else "qemu")
        ET.SubElement(root, "name").text = self.name
        if self.description:
            ET.SubElement(root, "description").text = self.description
        ET.SubElement(root, "memory", unit="MiB").text = str(s.memory_mb)
        ET.SubElement(root, "vcpu").text = str(s.smp or 1)
        self._cputune(root)
        self._os(root)
        if s.shared_mem or any(i.kind == "vhostuser" for i in self.ifaces):
            mb = ET.SubElement(root, "memoryBacking")
            ET.SubElement(mb, "source", type="memfd")
            ET.SubElement(mb, "access", mode="shared")
        if s.accel == "kvm":
            ET.SubElement(root, "cpu", mode="host-passthrough")
        for ev in ("on_poweroff", "on_reboot", "on_crash"):
            ET.SubElement(root, ev).text = "destroy"
        self._devices(root)
        self._qemu(root)
        return ET.tostring(root, encoding="unicode")

    def _cputune(self, root):
        vcpu = self.pins.get("vcpu", self.pins.get("qemu"))
        emu = self.pins.get("main", self.pins.get("qemu"))
        if vcpu is None and emu is None:
            return
        ct = ET.SubElement(root, "cputune")
        if vcpu is not None:
            ET.SubElement(ct, "vcpupin", vcpu="0", cpuset=cpuset(vcpu))
        if emu is not None:
            # libvirt pins every non-vCPU thread together: main loop and helpers.
            ET.SubElement(ct, "emulatorpin", cpuset=cpuset(emu))

    def _os(self, root):
        s = self.spec
        os_ = ET.SubElement(root, "os")
        ET.SubElement(os_, "type", arch="x86_64", machine=s.machine).text = "hvm"
        if s.boot == "uefi":
            ET.SubElement(os_, "loader", readonly="yes", type="rom").text = self._host(s.firmware)
            return
        ET.SubElement(os_, "kernel").text = self._host(s.image)
        if s.cmdline:
            ET.SubElement(os_, "cmdline").text = s.cmdline

    def _devices(self, root):
        dev = ET.SubElement(root, "devices")
        if self.emulator:
            ET.SubElement(dev, "emulator").text = self.emulator
        if self.spec.boot == "uefi":
            # Read-only: guests share the ESP image, as -drive snapshot=on.
            d = ET.SubElement(dev, "disk", type="file", device="disk")
            ET.SubElement(d, "driver", name="qemu", type="raw")
            ET.SubElement(d, "source", file=self._host(self.spec.esp))
            ET.SubElement(d, "target", dev="vda", bus="virtio")
            ET.SubElement(d, "readonly")
        for k, i in enumerate(self.ifaces):
            e = i.element()
            # Fixed aliases: the runner finds NIC k at /machine/peripheral/net<k>.
            ET.SubElement(e, "alias", name="ua-net%d" % k)
            dev.append(e)
        kind = self.console[0]
        ser = ET.SubElement(dev, "serial", type=kind)
        if kind == "file":
            ET.SubElement(ser, "source", path=self.console[1])
        ET.SubElement(ser, "target", port="0")
        if kind == "pty":
            con = ET.SubElement(dev, "console", type="pty")
            ET.SubElement(con, "target", type="serial", port="0")
        ET.SubElement(dev, "controller", type="usb", model="none")
        ET.SubElement(dev, "memballoon", model="none")

    def _qemu(self, root):
        cl = ET.SubElement(root, "{%s}commandline" % QEMU_NS)
        # fw_cfg as QEMU's own arguments, escaped as qemucmd does: libvirt's
        # <sysinfo type='fwcfg'> passed a comma inside the config unescaped.
        args = ["-device", qemucmd.DEBUG_EXIT] + qemucmd.fwcfg_args(self.spec) + self.qemu_args
        for a in args:
            ET.SubElement(cl, "{%s}arg" % QEMU_NS, value=a)
        if not self.overrides:
            return
        ov = ET.SubElement(root, "{%s}override" % QEMU_NS)
        for alias, prop, typ, value in self.overrides:
            d = ET.SubElement(ov, "{%s}device" % QEMU_NS, alias="ua-" + alias)
            fe = ET.SubElement(d, "{%s}frontend" % QEMU_NS)
            ET.SubElement(fe, "{%s}property" % QEMU_NS, name=prop, type=typ, value=value)
