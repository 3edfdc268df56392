# SPDX-License-Identifier: GPL-2.0-or-later
"""Read and write tierd's on-device records (lib/metadata.h) from the VM
cases, for what no tierd command does: a slot of a version or with pieces
that tierd would not write itself, and a look at what it did write.

    slots.py show DEV...
        the newest valid slot over DEV...: "generation G version V
        containers C pieces P"
    slots.py pieces DEV...
        each piece out in the newest slot over DEV..., one a line:
        "LE PIECE PATH OFFSET", where its bytes are (PATH the device of its
        container, OFFSET in bytes)
    slots.py check DATA DEV...
        each piece out in the newest slot over DEV... holds the bytes DATA
        (a file of what the volume should read) has where the piece belongs
        on the volume; prints "N pieces hold their bytes in their slots", or
        names the first that does not and exits 1
    slots.py split DEV... -- LE:PIECE:SLOT...
        give a free SSD extent over to pieces (the first one no extent
        maps), copy each named 16 KiB piece from its extent's home to that
        slot of it, overwrite the home copy with random bytes, and write the
        newest generation plus one, as version 2 with those pieces, into
        every device's other slot: what a commit of piece moves would leave.
        Prints the container as "container DEV PE".

A case imports nothing from here; it runs it with tests/vm on its path."""

import os
import struct
import sys

sys.dont_write_bytecode = True  # the source tree is read-only in the VM
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from crc32c import crc32c  # noqa: E402

PIECE = 16384
MAGIC = b"TIERDMD1"
TIER_SSD = 1


def superblock(path):
    with open(path, "rb") as f:
        sb = f.read(4096)
    assert sb[:8] == b"TIERDSB1", f"{path}: no tierd superblock"
    return {
        "path": path,
        "dev_uuid": sb[32:48],
        "slots": struct.unpack_from("<QQ", sb, 144),
        "slot_bytes": struct.unpack_from("<Q", sb, 160)[0],
        "data_start": struct.unpack_from("<Q", sb, 168)[0],
    }


def read_slot(path, off):
    """The slot's record if it is whole (its crc right), else None."""
    with open(path, "rb") as f:
        f.seek(off)
        head = f.read(32)
        if head[:8] != MAGIC:
            return None
        payload = struct.unpack_from("<Q", head, 24)[0]
        f.seek(off)
        rec = f.read(32 + payload)
    sealed = bytearray(rec)
    sealed[12:16] = bytes(4)
    if len(rec) != 32 + payload or crc32c(sealed) != struct.unpack_from("<I", rec, 12)[0]:
        return None
    return rec


def newest(sbs):
    best = None
    for sb in sbs:
        for off in sb["slots"]:
            rec = read_slot(sb["path"], off)
            if rec is not None:
                gen = struct.unpack_from("<Q", rec, 16)[0]
                if best is None or gen > best[0]:
                    best = (gen, rec)
    assert best, "no valid slot on any device"
    return best


def layout(rec):
    nr_devs = struct.unpack_from("<I", rec, 144)[0]
    devs = [rec[152 + 48 * i:152 + 48 * i + 48] for i in range(nr_devs)]
    map_at = 152 + 48 * nr_devs
    nr_logical = struct.unpack_from("<I", rec, map_at)[0]
    return {
        "version": struct.unpack_from("<I", rec, 8)[0],
        "extent_size": struct.unpack_from("<Q", rec, 120)[0],
        "devs": devs,
        "map_at": map_at + 8,
        "nr_logical": nr_logical,
        "map_end": map_at + 8 + 8 * nr_logical,
    }


def show(paths):
    gen, rec = newest([superblock(p) for p in paths])
    lay = layout(rec)
    containers = pieces = 0
    if lay["version"] >= 2:
        _, containers, pieces, _ = struct.unpack_from("<IIII", rec, lay["map_end"])
    print(f"generation {gen} version {lay['version']} containers {containers} pieces {pieces}")


def pieces_out(paths):
    """(le, piece, path, offset) of each piece out in the newest slot."""
    sbs = [superblock(p) for p in paths]
    by_uuid = {sb["dev_uuid"]: sb for sb in sbs}
    _, rec = newest(sbs)
    lay = layout(rec)
    if lay["version"] < 2:
        return [], lay["extent_size"], 0
    ppe, nr_containers, nr_pieces, _ = struct.unpack_from("<IIII", rec, lay["map_end"])
    at = lay["map_end"] + 16
    containers = []
    for _ in range(nr_containers):
        dev, _, pe = struct.unpack_from("<HHI", rec, at)
        containers.append((dev, pe))
        at += 8
    piece = lay["extent_size"] // ppe
    out = []
    for _ in range(nr_pieces):
        le, idx, slot, c = struct.unpack_from("<IHHI", rec, at)
        at += 12
        dev, pe = containers[c]
        sb = by_uuid[lay["devs"][dev][:16]]
        out.append((le, idx, sb["path"], sb["data_start"] + pe * lay["extent_size"] + slot * piece))
    return out, lay["extent_size"], piece


def pieces(paths):
    for le, idx, path, off in pieces_out(paths)[0]:
        print(le, idx, path, off)


def check(data, paths):
    out, ext, piece = pieces_out(paths)
    with open(data, "rb") as want:
        for le, idx, path, off in out:
            want.seek(le * ext + idx * piece)
            with open(path, "rb") as f:
                f.seek(off)
                if f.read(piece) != want.read(piece):
                    sys.exit(f"piece {idx} of extent {le}: its slot at {path}+{off} does not"
                             " hold its bytes")
    print(f"{len(out)} pieces hold their bytes in their slots")


def split(paths, specs):
    sbs = [superblock(p) for p in paths]
    by_uuid = {sb["dev_uuid"]: sb for sb in sbs}
    gen, rec = newest(sbs)
    lay = layout(rec)
    assert lay["version"] == 1, "the newest slot has pieces already"
    ext = lay["extent_size"]
    ppe = ext // PIECE

    def loc(le):
        dev, _, pe = struct.unpack_from("<HHI", rec, lay["map_at"] + 8 * le)
        return dev, pe

    ssd = next(i for i, d in enumerate(lay["devs"]) if d[16] == TIER_SSD)
    mapped = {loc(le) for le in range(lay["nr_logical"])}
    cpe = next(pe for pe in range(struct.unpack_from("<I", lay["devs"][ssd], 20)[0])
               if (ssd, pe) not in mapped)
    sb_of = [by_uuid[d[:16]] for d in lay["devs"]]
    pieces = sorted(tuple(int(x) for x in s.split(":")) for s in specs)
    for le, idx, slot in pieces:
        dev, pe = loc(le)
        home = sb_of[dev]["data_start"] + pe * ext + idx * PIECE
        there = sb_of[ssd]["data_start"] + cpe * ext + slot * PIECE
        with open(sb_of[dev]["path"], "r+b") as f:
            f.seek(home)
            data = f.read(PIECE)
            f.seek(home)
            f.write(os.urandom(PIECE))  # stale at home: reads must come from the slot
            f.flush()
            os.fsync(f.fileno())
        with open(sb_of[ssd]["path"], "r+b") as f:
            f.seek(there)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    out = bytearray(rec[:lay["map_end"]])
    out += struct.pack("<IIII", ppe, 1, len(pieces), 0)
    out += struct.pack("<HHI", ssd, 0, cpe)
    for le, idx, slot in pieces:
        out += struct.pack("<IHHI", le, idx, slot, 0)
    struct.pack_into("<I", out, 8, 2)
    struct.pack_into("<Q", out, 16, gen + 1)
    struct.pack_into("<Q", out, 24, len(out) - 32)
    out[12:16] = bytes(4)
    struct.pack_into("<I", out, 12, crc32c(out))
    for sb in sbs:
        # The slot not holding the newest generation, as a commit writes it.
        gens = []
        for off in sb["slots"]:
            r = read_slot(sb["path"], off)
            gens.append(struct.unpack_from("<Q", r, 16)[0] if r else 0)
        off = sb["slots"][0 if gens[0] < gens[1] else 1]
        assert len(out) <= sb["slot_bytes"], "the record does not fit the slot"
        with open(sb["path"], "r+b") as f:
            f.seek(off)
            f.write(out)
            f.flush()
            os.fsync(f.fileno())
    print(f"container {ssd} {cpe}")


def main(argv):
    if argv[:1] == ["show"]:
        show(argv[1:])
    elif argv[:1] == ["pieces"]:
        pieces(argv[1:])
    elif argv[:1] == ["check"] and len(argv) > 2:
        check(argv[1], argv[2:])
    elif argv[:1] == ["split"] and "--" in argv:
        cut = argv.index("--")
        split(argv[1:cut], argv[cut + 1:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
