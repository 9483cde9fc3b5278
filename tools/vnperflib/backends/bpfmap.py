"""Reads an array map of a loaded BPF program by the program's id (what
`tc filter show` names): the bpf(2) syscall through ctypes, as Debian has
no bpftool package for the runner to call. Root (CAP_SYS_ADMIN) only.
Layouts: include/uapi/linux/bpf.h (union bpf_attr, struct bpf_prog_info,
struct bpf_map_info)."""

import ctypes
import os
import struct

SYS_BPF = 321   # x86_64 (arch/x86/entry/syscalls/syscall_64.tbl)
BPF_MAP_LOOKUP_ELEM = 1
BPF_PROG_GET_FD_BY_ID = 13
BPF_MAP_GET_FD_BY_ID = 14
BPF_OBJ_GET_INFO_BY_FD = 15
MAX_MAPS = 16
# struct bpf_prog_info: nr_map_ids (u32) at 52, map_ids (u64 pointer) at 56
PROG_INFO_LEN = 64
# struct bpf_map_info: value_size at 12, max_entries at 16, name[16] at 24
MAP_INFO_LEN = 40

_libc = ctypes.CDLL(None, use_errno=True)


def _bpf(cmd, attr):
    """bpf(cmd, attr): its result; an OSError on failure."""
    buf = ctypes.create_string_buffer(bytes(attr), len(attr))
    rc = _libc.syscall(SYS_BPF, cmd, buf, len(attr))
    if rc < 0:
        e = ctypes.get_errno()
        raise OSError(e, "bpf(%d): %s" % (cmd, os.strerror(e)))
    return rc, buf.raw


def _fd_by_id(cmd, obj_id):
    return _bpf(cmd, struct.pack("=III", obj_id, 0, 0))[0]


def _info(fd, info):
    """BPF_OBJ_GET_INFO_BY_FD into the bytes info (the kernel fills what
    it has room for)."""
    buf = ctypes.create_string_buffer(info, len(info))
    _bpf(BPF_OBJ_GET_INFO_BY_FD, struct.pack("=IIQ", fd, len(info), ctypes.addressof(buf)))
    return buf.raw


def _map_ids(prog_fd):
    ids = (ctypes.c_uint32 * MAX_MAPS)()
    info = bytearray(PROG_INFO_LEN)
    struct.pack_into("=IQ", info, 52, MAX_MAPS, ctypes.addressof(ids))
    n = struct.unpack_from("=I", _info(prog_fd, bytes(info)), 52)[0]
    return list(ids[:min(n, MAX_MAPS)])


def _lookup(map_fd, key, value_size):
    value = ctypes.create_string_buffer(value_size)
    k = ctypes.c_uint32(key)
    _bpf(BPF_MAP_LOOKUP_ELEM, struct.pack("=IIQQQ", map_fd, 0, ctypes.addressof(k),
                                          ctypes.addressof(value), 0))
    return value.raw


def array_values(prog_id, name):
    """Every value (bytes) of the array map called name that program
    prog_id uses, by index; OSError when the program or map is gone."""
    prog_fd = _fd_by_id(BPF_PROG_GET_FD_BY_ID, prog_id)
    try:
        for map_id in _map_ids(prog_fd):
            map_fd = _fd_by_id(BPF_MAP_GET_FD_BY_ID, map_id)
            try:
                info = _info(map_fd, bytes(MAP_INFO_LEN))
                size, entries = struct.unpack_from("=II", info, 12)
                if info[24:40].split(b"\0", 1)[0].decode() == name:
                    return [_lookup(map_fd, i, size) for i in range(entries)]
            finally:
                os.close(map_fd)
    finally:
        os.close(prog_fd)
    raise OSError("program %d has no map %s" % (prog_id, name))
