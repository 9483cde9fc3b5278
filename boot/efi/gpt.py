#!/usr/bin/python3
"""Writes a GPT disk image with one EFI System Partition, for efi.mk.

    gpt.py IMAGE SIZE_MIB

Prints the partition's size in 512-byte sectors (for mformat -T).
Creates IMAGE (SIZE_MIB MiB of zeros) with a protective MBR, the primary
and backup GPT (UEFI 2.10 s5.2-5.3) and one ESP from 1 MiB to the last
usable sector. The partition is left unformatted: efi.mk puts the FAT file
system at that offset (mformat -i IMAGE@@1M). A partitioned
stick boots on firmware that ignores "superfloppy" media. The GUIDs derive
from the image size so the same build gives the same bytes."""

import hashlib
import struct
import sys
import uuid
import zlib

SECTOR = 512
PART_START = 2048  # LBA of the ESP: 1 MiB, the usual alignment
ENTRIES = 128
ENTRY_SIZE = 128
ENTRY_SECTORS = ENTRIES * ENTRY_SIZE // SECTOR  # 32
ESP_TYPE = uuid.UUID("c12a7328-f81f-11d2-ba4b-00a0c93ec93b")


def stable_guid(name, total):
    h = hashlib.sha256(("vnperf-esp %s %d" % (name, total)).encode()).digest()
    return uuid.UUID(bytes=h[:16], version=4)


def header(current, backup, entries_lba, first, last, disk_guid, entries_crc):
    fields = [b"EFI PART", 0x00010000, 92, 0, 0, current, backup, first, last,
              disk_guid.bytes_le, entries_lba, ENTRIES, ENTRY_SIZE, entries_crc]
    fmt = "<8sIIII QQQQ 16s QII I"
    raw = struct.pack(fmt, *fields)
    fields[3] = zlib.crc32(raw)
    return struct.pack(fmt, *fields).ljust(SECTOR, b"\0")


def protective_mbr(total):
    mbr = bytearray(SECTOR)
    size = min(total - 1, 0xFFFFFFFF)
    # One partition of type 0xEE covering the disk (UEFI 2.10 s5.2.3).
    mbr[446:462] = struct.pack("<B3sB3sII", 0, b"\x00\x02\x00", 0xEE, b"\xff\xff\xff", 1, size)
    mbr[510:512] = b"\x55\xaa"
    return bytes(mbr)


def build(total):
    first_usable = 2 + ENTRY_SECTORS
    last_usable = total - 2 - ENTRY_SECTORS
    if last_usable <= PART_START:
        raise ValueError("image too small for an ESP at 1 MiB")
    name = "EFI System".encode("utf-16-le").ljust(72, b"\0")
    entry = struct.pack("<16s16sQQQ72s", ESP_TYPE.bytes_le,
                        stable_guid("part", total).bytes_le, PART_START, last_usable, 0, name)
    entries = entry.ljust(ENTRIES * ENTRY_SIZE, b"\0")
    crc = zlib.crc32(entries)
    disk = stable_guid("disk", total)
    primary = header(1, total - 1, 2, first_usable, last_usable, disk, crc)
    backup = header(total - 1, 1, total - 1 - ENTRY_SECTORS, first_usable, last_usable, disk,
                    crc)
    return {0: protective_mbr(total), 1: primary, 2: entries,
            total - 1 - ENTRY_SECTORS: entries, total - 1: backup}


def main(argv):
    if len(argv) != 3 or not argv[2].isdigit() or int(argv[2]) < 2:
        sys.exit("usage: gpt.py IMAGE SIZE_MIB (SIZE_MIB >= 2)")
    total = int(argv[2]) * 1024 * 1024 // SECTOR
    with open(argv[1], "wb") as f:
        f.truncate(total * SECTOR)
        for lba, data in build(total).items():
            f.seek(lba * SECTOR)
            f.write(data)
    print(total - 2 - ENTRY_SECTORS - PART_START + 1)


if __name__ == "__main__":
    main(sys.argv)
