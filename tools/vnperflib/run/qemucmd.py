"""QEMU command line for one guest."""

import functools
import os
import shlex
import subprocess

MACHINES = ("microvm", "q35", "pc")
BOOTS = ("pvh", "uefi")
DEFAULT_OVMF = "/usr/share/ovmf/OVMF.fd"
ACCELS = ("auto", "kvm", "tcg")
DEBUG_EXIT = "isa-debug-exit,iobase=0xf4,iosize=0x04"
DEFAULT_QEMU = "qemu-system-x86_64"


# The guest's RAM floor (README: selftest and gen run in 12 MiB).
MIN_MEMORY_MB = 12

# virtio-net rx_queue_size/tx_queue_size QEMU 7.2 takes: a power of two
# from 256 (VIRTIO_NET_RX_QUEUE_MIN_SIZE) to 1024 (VIRTQUEUE_MAX_SIZE),
# well inside the split ring's 32768 (virtio 1.2 s2.7).
QUEUE_SIZES = (256, 512, 1024)


def host_memory_mb():
    """This host's RAM in MiB: QEMU cannot set up a larger guest RAM under
    the kernel's default overcommit (it fails with ENOMEM, status 66)."""
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // (1 << 20)


def check_memory(memory_mb):
    """None, or the line that refuses --memory memory_mb on this host."""
    most = host_memory_mb()
    if memory_mb > most:
        return "--memory %d: more than this host's RAM (%d MiB)" % (memory_mb, most)
    return None


CONFIG_ENTRY = "opt/vnperf/config"


def qemu_escape(value):
    """QEMU option syntax: a comma inside a value is written as two."""
    return str(value).replace(",", ",,")


def fwcfg_args(spec):
    """-fw_cfg for the config line and spec's files, escaped for QEMU:
    the one way both engines hand them to the guest."""
    out = []
    cfg = config_string(spec.config)
    if cfg:
        out += ["-fw_cfg", "name=%s,string=%s" % (CONFIG_ENTRY, qemu_escape(cfg))]
    for name, text in spec.files:
        out += ["-fw_cfg", "name=%s,string=%s" % (name, qemu_escape(text))]
    return out


def config_string(words):
    """The config words as one line; rejects words the guest parser could
    not take apart (no key=value, embedded whitespace)."""
    out = []
    for w in words:
        if not isinstance(w, str) or "=" not in w or w.startswith("="):
            raise ValueError("config word %r is not key=value" % (w,))
        if any(c.isspace() for c in w):
            raise ValueError("config word %r contains whitespace" % (w,))
        out.append(w)
    return " ".join(out)


def merge_config(*groups):
    """Config words, later groups overriding earlier keys, order kept."""
    merged = {}
    for words in groups:
        for w in words:
            k, _, v = w.partition("=")
            merged.pop(k, None)
            merged[k] = v
    return ["%s=%s" % kv for kv in merged.items()]


def args_file(path):
    """--qemu-args-file: QEMU arguments as shell-like words (shlex), any
    number a line, # comments. OSError when unreadable; ValueError naming
    the line whose words are malformed."""
    with open(path) as f:
        lines = f.read().splitlines()
    words = []
    for n, line in enumerate(lines, 1):
        try:
            words += shlex.split(line, comments=True)
        except ValueError as e:
            raise ValueError("line %d: %s" % (n, e))
    return words


def own_nic(words):
    """True when extra QEMU arguments add a virtio-net device of their own
    (-device virtio-net-...): the guest's driver takes the first one."""
    return any(a in ("-device", "--device") and b.startswith("virtio-net")
               for a, b in zip(words, words[1:]))


class Nic:
    """One virtio-net NIC: the -netdev value and device properties."""

    def __init__(self, netdev, mac, props=None, fds=()):
        self.netdev = netdev          # e.g. "dgram,local.type=inet,..." without id
        self.mac = mac
        self.props = dict(props or {})  # device properties (rx_queue_size, event_idx, vectors)
        self.fds = tuple(fds)         # descriptors the netdev names, QEMU inherits them


class GuestSpec:
    def __init__(self, image, machine="microvm", memory_mb=128, accel="tcg",
                 config=(), nics=(), qmp_path=None, shared_mem=False, name="vnperf",
                 cmdline=None, extra=(), boot="pvh", esp=None, firmware=DEFAULT_OVMF,
                 smp=1, files=()):
        if machine not in MACHINES:
            raise ValueError("machine %r: one of %s" % (machine, ", ".join(MACHINES)))
        if boot not in BOOTS:
            raise ValueError("boot %r: one of %s" % (boot, ", ".join(BOOTS)))
        if machine_refusal(boot, machine):
            raise ValueError(machine_refusal(boot, machine))
        if boot == "uefi" and cmdline:
            raise ValueError("--boot uefi has no kernel command line: config goes through fw_cfg")
        if accel not in ("kvm", "tcg"):
            raise ValueError("accel %r: kvm or tcg" % accel)
        if memory_mb < MIN_MEMORY_MB:
            raise ValueError("memory %d MiB: at least %d" % (memory_mb, MIN_MEMORY_MB))
        self.image = image
        self.machine = machine
        self.memory_mb = memory_mb
        self.accel = accel
        self.config = list(config)
        self.nics = list(nics)
        self.qmp_path = qmp_path
        self.shared_mem = shared_mem
        self.name = name
        self.cmdline = cmdline
        self.extra = list(extra)
        self.boot = boot
        self.esp = esp or default_esp()
        self.firmware = firmware
        self.smp = smp                # vCPUs (-smp; 1: QEMU's default, not written)
        self.files = tuple(files)     # (fw_cfg name, text): e.g. the stream file's encoding


def pass_fds(spec):
    """The descriptors QEMU must inherit: those its NICs' netdevs name."""
    return tuple(fd for nic in spec.nics for fd in nic.fds)


# Queue pairs and vCPUs the guest drives (docs/config.md, queues= and
# vcpus=: 1..8).
MAX_QUEUES = 8


def mq_props(queues, machine):
    """Device properties for queues pairs: mq=on and, on PCI, an MSI-X
    vector per virtqueue (2N), the control queue's and the config
    interrupt's (QEMU's own rule for vectors, 2N+2)."""
    if not queues or queues < 2:
        return {}
    props = {"mq": "on"}
    if machine != "microvm":
        props["vectors"] = 2 * queues + 2
    return props


# QEMU's virtio-net properties for RSS and hash reports (VIRTIO_NET_F_RSS,
# VIRTIO_NET_F_HASH_REPORT): its own virtio-net hashes in software; the
# guest checks every reported hash (docs/driver.md, "Hash reports").
HASH_PROPS = {"rss": "on", "hash": "on"}


@functools.lru_cache(maxsize=None)
def device_props(qemu, driver):
    """The property names `QEMU -device DRIVER,help` lists; empty when it
    cannot say (no such binary or device)."""
    try:
        out = subprocess.run([qemu, "-device", driver + ",help"], capture_output=True,
                             text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    return frozenset(ln.split("=", 1)[0].strip() for ln in out.splitlines()
                     if ln.startswith("  ") and "=" in ln)


def hash_props(qemu, machine):
    """rss=on,hash=on where QEMU's virtio-net has both properties, else {}."""
    have = device_props(qemu, nic_device(machine))
    return dict(HASH_PROPS) if set(HASH_PROPS) <= have else {}


def nic_device(machine):
    # microvm has no PCI: virtio-mmio, found through virtio_mmio.device= words
    # that QEMU appends to the kernel command line.
    return "virtio-net-device" if machine == "microvm" else "virtio-net-pci"


def boot_args(spec):
    """PVH: QEMU loads the ELF itself. UEFI: OVMF boots EFI/BOOT/BOOTX64.EFI
    from the ESP image (boot/efi); snapshot=on never writes the image, so
    guests can share it."""
    if spec.boot == "uefi":
        return ["-bios", spec.firmware,
                "-drive", "format=raw,file=%s,snapshot=on" % qemu_escape(spec.esp)]
    return ["-kernel", spec.image]


def build(spec, qemu=DEFAULT_QEMU):
    """argv for QEMU. Serial on stdio, no other default devices; the guest
    leaves through isa-debug-exit; -no-reboot turns a triple fault into an
    exit instead of a boot loop."""
    argv = [qemu, "-M", spec.machine, "-accel", spec.accel, "-m", "%dM" % spec.memory_mb,
            "-nodefaults", "-display", "none", "-no-reboot",
            "-name", "%s,debug-threads=on" % qemu_escape(spec.name),
            "-serial", "stdio", "-device", DEBUG_EXIT] + boot_args(spec)
    if spec.accel == "kvm":
        argv += ["-cpu", "host"]
    if spec.smp > 1:
        argv += ["-smp", str(spec.smp)]
    if spec.shared_mem:
        # vhost-user maps guest RAM: it must be a shareable memfd.
        argv += ["-object", "memory-backend-memfd,id=mem,size=%dM,share=on" % spec.memory_mb,
                 "-numa", "node,memdev=mem"]
    if spec.cmdline:
        argv += ["-append", spec.cmdline]
    argv += fwcfg_args(spec)
    dev = nic_device(spec.machine)
    for i, nic in enumerate(spec.nics):
        nid = "n%d" % i
        argv += ["-netdev", "%s,id=%s" % (nic.netdev, nid)]
        props = "".join(",%s=%s" % (k, qemu_escape(v)) for k, v in nic.props.items())
        argv += ["-device", "%s,netdev=%s,id=nic%d,mac=%s%s" % (dev, nid, i, nic.mac, props)]
    if spec.qmp_path:
        argv += ["-qmp", "unix:%s,server=on,wait=off" % spec.qmp_path]
    return argv + spec.extra


def default_image():
    here = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))  # tools/
    return os.path.join(os.path.dirname(here), "build", "vnperf.elf")


def machine_refusal(boot, machine):
    """None, or why this machine cannot boot this way (the one copy of
    the line: options.build and GuestSpec both say it)."""
    if boot == "uefi" and machine == "microvm":
        return "--boot uefi needs --machine q35 or pc (OVMF does not run on microvm)"
    return None


def default_machine(boot):
    """microvm boots fastest, but OVMF needs a PC machine."""
    return "q35" if boot == "uefi" else "microvm"


def default_esp():
    return os.path.join(os.path.dirname(default_image()), "esp.img")
