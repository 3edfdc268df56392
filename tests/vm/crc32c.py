# SPDX-License-Identifier: GPL-2.0-or-later
"""CRC-32C (Castagnoli, reflected, as lib/crc32c.c computes it) for the VM
cases that check or reseal tierd's on-device records (lib/metadata.h).
A case imports it with tests/vm on its path."""

_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ (0x82F63B78 if _c & 1 else 0)
    _TABLE.append(_c)


def crc32c(data):
    c = 0xFFFFFFFF
    for x in data:
        c = _TABLE[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF
