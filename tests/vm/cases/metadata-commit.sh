#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A commit writes only the metadata blocks in which the slot it overwrites
# differs from the new generation (known from what tierd wrote, or read when
# the pool activated), yet every slot on every device stays a whole,
# valid generation: checked by reading the slots back from the devices
# (checksums, generations, maps against each other and the live table), over
# moves before and after a restart, and by importing the pool from its
# devices alone, which must rebuild the same table with the same data. A
# commit of pieces out (which follow the map in the record, and change its
# length) writes the record's tail, not the whole generation.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

# The guest's own python: the host's pyenv shims need the host's environment.
python=/usr/bin/python3
E=$((1 << 20))
# 20,000 extents of 1 MiB: a whole generation is 40 blocks per device.
hdd=$(vm_loop_create 20G)
ssd=$(vm_loop_create 2G)
tierd_start --verbose
tierctl_ok pool create tank --hdd "$hdd" --extent-size 1M >/dev/null
tierctl_ok tier attach tank --ssd "$ssd" --no-grow >/dev/null
vol=/dev/mapper/tank
extents=$(($(blockdev --getsize64 $vol) / E))
[ "$extents" -gt 19600 ] || fail "the volume has only $extents extents"

# Known data where the moves go: (first extent, count) per region.
regions=("0 64" "10000 8" "12000 4" "15000 16" "19500 32")
for r in "${regions[@]}"; do
	set -- $r
	dd if=/dev/urandom of=/tmp/region-$1 bs=1M count=$2 status=none
	dd if=/tmp/region-$1 of=$vol bs=1M seek=$1 oflag=direct status=none
done
check_data() {
	local when=$1
	vm_drop_caches
	for r in "${regions[@]}"; do
		set -- $r
		assert_eq "extents $1-$(($1 + $2 - 1)) $when" "$(vm_digest /tmp/region-$1)" \
			"$(dd if=$vol bs=1M skip=$1 count=$2 iflag=direct status=none | md5sum | cut -d' ' -f1)"
	done
}

cat >/tmp/slots.py <<'PY'
# Read both metadata slots of each device named on the command line and check
# them: run by tests/vm/cases/metadata-commit.sh. The layout is the one
# lib/metadata.h documents. Prints the newest generation's map as
# "le dev pe" lines to the file named first.
import os, struct, sys

sys.dont_write_bytecode = True  # the source tree is read-only in the VM
sys.path.insert(0, os.path.join(os.environ["TIERD_SOURCE_DIR"], "tests", "vm"))
from crc32c import crc32c  # noqa: E402


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def read_slot(f, off, size):
    f.seek(off)
    head = f.read(32)
    if head[:8] != b"TIERDMD1":
        return None
    gen, payload = struct.unpack_from("<QQ", head, 16)
    f.seek(off)
    rec = bytearray(f.read(32 + payload))
    want = struct.unpack_from("<I", rec, 12)[0]
    rec[12:16] = b"\0\0\0\0"
    if crc32c(rec) != want:
        fail(f"slot at {off}: generation {gen} fails its checksum")
    nr_devs = struct.unpack_from("<I", rec, 144)[0]
    at = 152 + 48 * nr_devs
    nr_logical = struct.unpack_from("<I", rec, at)[0]
    entries = [struct.unpack_from("<HHI", rec, at + 8 + 8 * le) for le in range(nr_logical)]
    return gen, [(d, pe) for d, _, pe in entries]


out = sys.argv[1]
newest = {}
for dev in sys.argv[2:]:
    with open(dev, "rb") as f:
        sb = f.read(4096)
        if sb[:8] != b"TIERDSB1":
            fail(f"{dev}: no superblock")
        slot_off = struct.unpack_from("<QQQ", sb, 144)
        slots = [read_slot(f, slot_off[s], slot_off[2]) for s in range(2)]
    if None in slots:
        fail(f"{dev}: a slot is empty")
    slots.sort()
    (old_gen, old_map), (gen, cur) = slots
    if old_gen != gen - 1:
        fail(f"{dev}: slots hold generations {old_gen} and {gen}, not two in a row")
    changed = sum(a != b for a, b in zip(old_map, cur))
    if len(old_map) != len(cur) or not changed <= 64:
        fail(f"{dev}: generations {old_gen} and {gen} differ in {changed} extents")
    print(f"ok: {dev}: generations {old_gen} and {gen} valid, {changed} extents apart")
    newest[dev] = (gen, cur)
gens = {g for g, _ in newest.values()}
maps = {tuple(m) for _, m in newest.values()}
if len(gens) != 1 or len(maps) != 1:
    fail("the devices disagree on the newest generation")
with open(out, "w") as f:
    for le, (d, pe) in enumerate(maps.pop()):
        if d != 0xFFFF:
            f.write(f"{le} {d} {pe}\n")
PY

# table_map: the live table as "le dev pe" per extent, dev numbered as the
# pool numbers them (HDD 0, SSD 1) and pe counted from each data area.
hdd_mm=$(majmin "$hdd") ssd_mm=$(majmin "$ssd")
hdd_start=$(pool_field tank '.tiers[] | select(.class == "hdd") | .devices[0].data_offset_bytes')
ssd_start=$(pool_field tank '.tiers[] | select(.class == "ssd") | .devices[0].data_offset_bytes')
table_map() {
	dmsetup table tank | awk -v e=$((E / 512)) -v h="$hdd_mm" -v s="$ssd_mm" \
		-v hs=$((hdd_start / 512)) -v ss=$((ssd_start / 512)) '
		$3 != "linear" { print "not linear: " $0; exit 1 }
		{ d = $4 == h ? 0 : $4 == s ? 1 : -1; st = d ? ss : hs
		  for (i = 0; i < $2 / e; i++) print $1 / e + i, d, ($5 - st) / e + i }'
}
check_slots() {
	$python /tmp/slots.py /tmp/slot-map "$hdd" "$ssd" || fail "the slots on the devices $1"
	table_map >/tmp/table-map || fail "the table $1: $(cat /tmp/table-map)"
	cmp -s /tmp/slot-map /tmp/table-map ||
		fail "the newest slot's map is not the live table $1: $(diff /tmp/slot-map /tmp/table-map | head)"
	echo "ok: the newest slot maps what the table does $1"
}
# logged_kib FROM: the KiB each batch's commit wrote, for the batches logged
# after the first FROM.
batches() { grep -c "pool tank: batch of [0-9]* [a-z]*: stall" /tmp/tierd.log || true; }
logged_kib() {
	grep "pool tank: batch of [0-9]* [a-z]*: stall" /tmp/tierd.log | tail -n +$(($1 + 1)) |
		sed -n 's/.*, \([0-9]*\) KiB written).*/\1/p'
}
# A whole generation to both devices: the record (a 256-byte head, 8 bytes
# per extent) in 4 KiB blocks.
full_kib=$((2 * ((256 + extents * 8 + 4095) / 4096) * 4))
# move_filled FIRST COUNT --tier TIER: a move whose commit has nothing to
# compare with in the slots it goes to (the attach added a device record,
# which shifted the map, and left the SSD's second slot empty): the current
# generation is copied whole into them before the suspend, so that the
# commit itself writes only what changed.
filled() { grep "copied the current generation into" /tmp/tierd.log || true; }
move_filled() {
	local before
	before=$(filled | wc -l)
	move "$@"
	assert_eq "KiB copied into the slots before the commit of a move of $1+$2" "$full_kib" \
		"$(filled | tail -n +$((before + 1)) | sed -n 's/.* into \([0-9]*\) KiB .*/\1/p' | xargs)"
}
# move FIRST COUNT --tier TIER [--pieces RANGE]: one batch per 16 extents
# (or 64 pieces); each batch's commit writes a small part of a whole
# generation. A commit of pieces (which follow the map in the record, and
# change its length) writes block 0, the blocks from the map's last one to
# the record's end, and the blocks the slot it overwrites missed: a few a
# device, not the whole generation a change of length would take.
move() {
	local before written most=$((full_kib / 8))
	[ "${5:-}" = --pieces ] && most=48
	before=$(batches)
	tierctl_ok extent move tank "$@" >/dev/null
	logged_kib "$before" >/tmp/written
	[ -s /tmp/written ] || fail "no batch logged what its commit wrote"
	for written in $(cat /tmp/written); do
		[ "$written" -gt 0 ] && [ "$written" -le "$most" ] ||
			fail "a commit of a move of $1+$2 ${5:-} ${6:-} wrote $written KiB (a whole generation: $full_kib KiB)"
	done
	echo "ok: move of $2 extents at $1 to the $4 tier: $(tr '\n' ' ' </tmp/written)KiB per commit (whole: $full_kib)"
}

step "moves at both ends of the map"
move_filled 0 16 --tier ssd
move 19500 16 --tier ssd
move 10000 8 --tier ssd
move 8 4 --tier hdd
check_slots "after four moves"
check_data "after four moves"

step "after a restart, which reads what the slots hold"
tierd_stop TERM
tierd_start --verbose
check_slots "after the restart"
# Activation compared both slots with the map: even the first commit to
# each slot after a start writes only what differs.
move 15000 8 --tier ssd
move 15008 8 --tier ssd
check_slots "after the first commit to each slot since the restart"
move 19516 16 --tier ssd
move 0 4 --tier hdd
move 15008 8 --tier hdd
check_slots "after moves since the restart"
check_data "after moves since the restart"

step "import from the devices alone"
table_map >/tmp/before-import
tierd_stop TERM
dmsetup remove tank
rm -rf "$TIERD_STATE"
tierd_start --verbose
tierctl_ok pool import "$hdd" "$ssd" >/dev/null
table_map >/tmp/after-import
cmp -s /tmp/before-import /tmp/after-import ||
	fail "the imported table differs: $(diff /tmp/before-import /tmp/after-import | head)"
echo "ok: the import rebuilt the same table"
check_data "after the import"
move 15000 8 --tier hdd
move 15008 8 --tier ssd
check_slots "after moves since the import"
check_data "after moves since the import"

step "pieces out and home: their commits write the record's tail"
move 12000 1 --tier ssd --pieces 0-15
move 12001 2 --tier ssd --pieces 0-3
move 12000 1 --tier hdd --pieces 0-7
# The table has the pieces' targets: the slots are checked without it.
$python /tmp/slots.py /tmp/slot-map "$hdd" "$ssd" || fail "the slots on the devices with pieces out"
check_data "with pieces out"
tierd_stop TERM
tierd_start --verbose
move 12002 1 --tier ssd --pieces 40-41
move 12000 3 --tier hdd --pieces all
check_slots "with every piece home"
check_data "with every piece home"
tierd_stop TERM
dmsetup remove tank
rm -rf "$TIERD_STATE"
tierd_start --verbose
tierctl_ok pool import "$hdd" "$ssd" >/dev/null
check_slots "after an import with an empty piece container"
check_data "after an import with an empty piece container"
tierd_stop TERM
echo "metadata-commit: ok"
