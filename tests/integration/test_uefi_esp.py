"""build/esp.img as a real machine's firmware reads it (no QEMU): protective
MBR, primary and backup GPT with valid CRCs (UEFI 2.10 s5.2-5.3), one EFI
System Partition at 1 MiB holding a FAT file system with
EFI/BOOT/BOOTX64.EFI identical to build/vnperf.efi."""

import os
import struct
import subprocess
import uuid
import zlib

import pytest

import vnharness

ESP = os.path.join(vnharness.BUILD, "esp.img")
EFI_APP = os.path.join(vnharness.BUILD, "vnperf.efi")
SECTOR = 512
ESP_TYPE = uuid.UUID("c12a7328-f81f-11d2-ba4b-00a0c93ec93b")
HDR_FMT = "<8sIIII QQQQ 16s QII I"


@pytest.fixture(scope="module")
def disk():
    assert os.path.isfile(ESP), "%s missing: run make" % ESP
    with open(ESP, "rb") as f:
        return f.read()


def sector(disk, lba):
    return disk[lba * SECTOR:(lba + 1) * SECTOR]


def gpt_header(disk, lba):
    raw = sector(disk, lba)[:92]
    h = struct.unpack(HDR_FMT, raw)
    zeroed = raw[:16] + b"\0\0\0\0" + raw[20:]
    assert h[0] == b"EFI PART", "LBA %d: no GPT signature" % lba
    assert h[3] == zlib.crc32(zeroed), "LBA %d: header CRC" % lba
    return {"current": h[5], "backup": h[6], "first": h[7], "last": h[8], "guid": h[9],
            "entries": h[10], "n": h[11], "size": h[12], "entries_crc": h[13]}


def test_protective_mbr(disk):
    mbr = sector(disk, 0)
    assert mbr[510:512] == b"\x55\xaa"
    ptype, start, count = mbr[446 + 4], *struct.unpack("<II", mbr[446 + 8:446 + 16])
    assert ptype == 0xEE and start == 1
    assert count == min(len(disk) // SECTOR - 1, 0xFFFFFFFF)


def test_gpt_headers_and_esp_entry(disk):
    total = len(disk) // SECTOR
    primary, backup = gpt_header(disk, 1), gpt_header(disk, total - 1)
    assert (primary["current"], primary["backup"]) == (1, total - 1)
    assert (backup["current"], backup["backup"]) == (total - 1, 1)
    for key in ("first", "last", "guid", "n", "size", "entries_crc"):
        assert primary[key] == backup[key], key
    for h in (primary, backup):
        table = disk[h["entries"] * SECTOR:h["entries"] * SECTOR + h["n"] * h["size"]]
        assert zlib.crc32(table) == h["entries_crc"]
    # The backup entries end right before the backup header.
    assert backup["entries"] + backup["n"] * backup["size"] // SECTOR == total - 1
    table = disk[2 * SECTOR:2 * SECTOR + primary["n"] * primary["size"]]
    entries = [table[i:i + primary["size"]] for i in range(0, len(table), primary["size"])]
    used = [e for e in entries if e[:16] != b"\0" * 16]
    assert len(used) == 1
    tguid, _, first, last = struct.unpack("<16s16sQQ", used[0][:48])
    assert uuid.UUID(bytes_le=tguid) == ESP_TYPE
    assert first == 2048
    assert primary["first"] <= first < last <= primary["last"]


def test_fat_holds_the_loader(disk, tmp_path):
    boot = disk[2048 * SECTOR:2049 * SECTOR]
    assert boot[510:512] == b"\x55\xaa"
    assert boot[54:62] == b"FAT16   "
    assert struct.unpack("<I", boot[28:32])[0] == 2048  # hidden sectors = partition start
    out = tmp_path / "BOOTX64.EFI"
    env = dict(os.environ, MTOOLS_SKIP_CHECK="1")
    subprocess.run(["mcopy", "-i", "%s@@%d" % (ESP, 2048 * SECTOR),
                    "::/EFI/BOOT/BOOTX64.EFI", str(out)], check=True, env=env)
    with open(EFI_APP, "rb") as f:
        assert out.read_bytes() == f.read()
