#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A pool whose newest metadata this tierd cannot use (a slot of version 3,
# which no tierd writes yet) is refused at
# activation and on import with a message that says so, rather than
# activated or imported from the older generation in the other slot: that
# one maps extents to where they were before the last commit, so its data
# would be stale. With the slots put back, the same devices import and read
# back what was written.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

python=/usr/bin/python3
hdd=$(vm_loop_create 256M)
ssd=$(vm_loop_create 64M)
tierd_start
tierctl_ok pool create tank --hdd "$hdd" >/dev/null
tierctl_ok tier attach tank --ssd "$ssd" --no-grow >/dev/null
vol=/dev/mapper/tank
vm_fill_random $vol
# A commit after the attach: each device then holds two generations in a row.
tierctl_ok extent move tank 0 4 --tier ssd >/dev/null

step "the newest slot of each device rewritten as version 3"
tierd_stop TERM
dmsetup remove tank
for d in "$hdd" "$ssd"; do
	dd if="$d" of="/tmp/head-$(basename "$d")" bs=1M count=8 status=none
done
cat >/tmp/pieces.py <<'PY'
# Rewrite the newest metadata slot of each device named as a version 3
# record (lib/metadata.h): a version 2 record (the same map, then a pieces
# section with one container and one piece out) marked as the next version.
import os, struct, sys

sys.dont_write_bytecode = True  # the source tree is read-only in the VM
sys.path.insert(0, os.path.join(os.environ["TIERD_SOURCE_DIR"], "tests", "vm"))
from crc32c import crc32c  # noqa: E402


for dev in sys.argv[1:]:
    with open(dev, "r+b") as f:
        sb = f.read(4096)
        slot_off = struct.unpack_from("<QQ", sb, 144)
        best = None
        for off in slot_off:
            f.seek(off)
            head = f.read(32)
            if head[:8] == b"TIERDMD1":
                gen, payload = struct.unpack_from("<QQ", head, 16)
                if best is None or gen > best[0]:
                    best = (gen, off, payload)
        gen, off, payload = best
        f.seek(off)
        rec = bytearray(f.read(32 + payload))
        assert struct.unpack_from("<I", rec, 8)[0] == 1, "expected a version 1 slot"
        rec += struct.pack("<IIII", 256, 1, 1, 0)   # 16 KiB pieces, 1 container, 1 piece
        rec += struct.pack("<HHI", 1, 0, 10)        # the container: SSD pe 10
        rec += struct.pack("<IHHI", 20, 0, 0, 0)    # le 20's first piece in slot 0
        struct.pack_into("<I", rec, 8, 3)
        struct.pack_into("<Q", rec, 24, len(rec) - 32)
        rec[12:16] = b"\0\0\0\0"
        struct.pack_into("<I", rec, 12, crc32c(rec))
        f.seek(off)
        f.write(rec)
        print(f"{dev}: generation {gen} at {off} is now version 3 ({len(rec)} bytes)")
PY
$python /tmp/pieces.py "$hdd" "$ssd" || fail "rewriting the slots failed"
sync

step "activation from the state refuses the pool the same way"
: >/tmp/tierd.log
tierd_start
wait_until 20 "the refusal in the log" grep -q "format this tierd cannot use" /tmp/tierd.log
grep "format this tierd cannot use" /tmp/tierd.log
[ ! -e $vol ] || fail "$vol exists after the refused activation"
assert_eq "pool state" inactive "$(pool_field tank .state)"
tierd_stop TERM
rm -rf "$TIERD_STATE"

step "import refuses the pool, and does not fall back to the older generation"
tierd_start
tierctl_fails 1 "format this tierd cannot use" pool import "$hdd" "$ssd"
assert_eq "pools known after the refused import" 0 "$("$TIERCTL" pool list --json | jq '.pools | length')"
[ ! -e $vol ] || fail "$vol exists after the refused import"

step "with the slots as they were, the pool imports and reads back its data"
tierd_stop TERM
for d in "$hdd" "$ssd"; do
	dd if="/tmp/head-$(basename "$d")" of="$d" bs=1M conv=notrunc oflag=direct status=none
done
tierd_start
tierctl_ok pool import "$hdd" "$ssd" >/dev/null
vm_drop_caches
assert_eq "the volume's data after import" "$want" "$(vm_digest $vol)"
assert_eq "extents on the SSD after import" 4 "$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"
tierd_stop TERM
echo "metadata-newer: ok"
