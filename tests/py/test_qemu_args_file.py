"""--qemu-args-file without QEMU (issue 26): the user's own QEMU words,
shell-like, read as --qemu-arg's are; a virtio-net -device among them is the
guest's NIC (the runner adds none, gen only); a file that cannot be read or
taken apart is one line and status 64."""


import pytest

from vnpy import cli_opts, run_opts, run_vnperf, standin_image
from vnperflib import backends, exitcodes
from vnperflib.run import qemucmd, support
from vnperflib.errors import RunnerError

USAGE = exitcodes.RUNNER_USAGE
OWN = ["-device", "virtio-net-device,netdev=mine"]


def ns(**kw):
    base = dict(tap=None, bridge=None, qemu_args=list(OWN), app="gen", topology="host",
                config=[], backend="none", vhost_user_socket=None)
    return run_opts(**dict(base, **kw))


@pytest.mark.parametrize("args, line", [
    (["--backend", "dgram"], "a virtio-net -device of your own and --backend dgram: the "
                             "runner adds no NIC of its own then (--backend none)"),
    (["--tap", "t0"], "--tap t0 and a virtio-net -device of your own: the guest takes one "
                      "NIC (give its -netdev tap,ifname=... in your file instead)"),
    (["--app", "sink"], "sink over none: " + support.OWN_NIC),
])
def test_refusals_are_one_line_before_anything_starts(tmp_path, args, line):
    r = run_vnperf(["run", "--accel", "tcg", "--image", standin_image(tmp_path),
                    "--qemu-arg=-device", "--qemu-arg=virtio-net-pci"] + args, timeout=60)
    assert r.returncode == USAGE, (r.returncode, r.stderr)
    assert r.stderr == "vnperf: %s\n" % line and not r.stdout


@pytest.mark.parametrize("text, words", [
    ("-netdev hubport,id=a,hubid=0  # a comment\n\n# only a comment\n"
     "-device 'virtio-net-pci,netdev=a'\n",
     ["-netdev", "hubport,id=a,hubid=0", "-device", "virtio-net-pci,netdev=a"]),
    ('-object "memory-backend-file,id=m,mem-path=/my dir/f"\n',
     ["-object", "memory-backend-file,id=m,mem-path=/my dir/f"]),
    ("", []),
])
def test_args_file_words(tmp_path, text, words):
    f = tmp_path / "args"
    f.write_text(text)
    assert qemucmd.args_file(str(f)) == words


def test_args_file_malformed_or_unreadable_is_one_line_and_usage(tmp_path):
    bad = tmp_path / "bad"
    bad.write_text("-S\n-netdev 'hubport,id=a\n")
    img = standin_image(tmp_path)
    for path, why in ((str(bad), "%s: line 2: No closing quotation" % bad),
                      (str(tmp_path / "none"), "%s: No such file or directory"
                       % (tmp_path / "none")),
                      (str(tmp_path), "%s: Is a directory" % tmp_path)):
        r = run_vnperf(["run", "--image", img, "--qemu-args-file", path], timeout=60)
        assert r.returncode == USAGE, r.stderr
        assert r.stderr.startswith("vnperf: error: argument --qemu-args-file: %s (" % why), \
            r.stderr
        assert len(r.stderr.splitlines()) == 1


def test_args_file_words_join_qemu_arg_in_command_line_order(tmp_path):
    f = tmp_path / "args"
    f.write_text("-netdev hubport,id=a,hubid=0\n-device virtio-net-device,netdev=a\n")
    _, o = cli_opts("run", "--qemu-arg=-S", "--qemu-args-file", str(f), "--qemu-arg=-s")
    assert o.qemu_args == ["-S", "-netdev", "hubport,id=a,hubid=0", "-device",
                           "virtio-net-device,netdev=a", "-s"]


def test_own_nic_is_a_virtio_net_device_only():
    assert qemucmd.own_nic(["-device", "virtio-net-pci,netdev=x"])
    assert qemucmd.own_nic(["--device", "virtio-net-device"])
    assert not qemucmd.own_nic(["-device", "e1000"])
    assert not qemucmd.own_nic(["-netdev", "virtio-net-pci"])
    assert not qemucmd.own_nic(["virtio-net-pci"])


def test_own_nic_stands_for_no_backend_and_gen():
    assert backends.implied(ns(), []) == "none"
    mod, o = cli_opts("run", "--qemu-arg=-device", "--qemu-arg=virtio-net-pci")
    o = mod.options.RunOptions.from_cli(o)
    assert (o.backend, o.app) == ("none", "gen")
    own = backends.make("none", ns())
    assert own.nics(0) == [] and own.qemu_extra(0) == []
    assert [w.split("=")[0] for w in own.guest_config(0)] == ["ip", "dst_ip", "dst_mac"]
    assert type(backends.make("none", ns(qemu_args=["-S"]))) is backends.NoBackend


def test_own_nic_passes_support_for_gen_only():
    support.check(ns())
    for kw in ({"app": "rr"}, {"app": "sink"}, {"topology": "guests"}):
        with pytest.raises(RunnerError) as e:
            support.check(ns(**kw))
        assert e.value.status == USAGE and support.OWN_NIC in e.value.line
