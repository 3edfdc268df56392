#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A pool whose newest metadata has pieces of split extents out (version 2
# slots, as a commit of piece moves leaves them; written here by
# tests/vm/slots.py, with the homes overwritten, which no tierd command
# does) is activated with
# those pieces in its table: reads and writes of a piece go to its slot,
# not to the stale home copy. The pieces survive a commit of whole extents,
# a restart from the state and an import from the devices alone; a move of
# a split extent whole is refused rather than lose them. When the
# SSD that holds their container dies, drop-missing zeroes their homes as
# it zeroes the extents lost, and the pool is written without pieces.
# tierd runs without piece heat: the pieces here are written by hand, and
# the plans asserted are the whole planner's (runs that place pieces are
# pieces-runs').
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

slots() { python3 "$TIERD_SOURCE_DIR/tests/vm/slots.py" "$@"; }

hdd=$(vm_loop_create 128M)
ssd=$(vm_loop_create 64M)
tierd_start --piece-heat=no
tierctl_ok pool create tank --hdd "$hdd" >/dev/null
tierctl_ok tier attach tank --ssd "$ssd" --no-grow >/dev/null
vol=/dev/mapper/tank
ext=$("$TIERCTL" pool show tank --json | jq .pool.extent_size_bytes)
vm_fill_random $vol
tierctl_ok extent move tank 0 4 --tier ssd >/dev/null
targets_before=$(dmsetup table tank | wc -l)

step "pieces of three extents moved to an SSD slot while tierd is stopped"
tierd_stop TERM
dmsetup remove tank
# LE:PIECE:SLOT; extent 0 is on the SSD, 20 and 21 on the HDD.
slots split "$hdd" "$ssd" -- 0:3:3 20:0:0 20:5:1 20:255:2 21:7:200 || fail "splitting failed"
slots show "$hdd" "$ssd"

step "activation adopts the newer generation and reads each piece from its slot"
: >/tmp/tierd.log
tierd_start --piece-heat=no
wait_until 20 "the pool active" test -e $vol
grep "newer than the state" /tmp/tierd.log || fail "the newer generation was not adopted"
vm_drop_caches
assert_eq "the volume's data with pieces out" "$want" "$(vm_digest $vol)"
targets=$(dmsetup table tank | wc -l)
[ "$targets" -gt "$targets_before" ] || fail "the table has $targets targets, no more than $targets_before"
assert_eq "pool show's pieces" '{"piece_bytes":16384,"containers":1,"pieces":5,"split_extents":3,"bytes":81920}' \
	"$(pool_field tank '.pieces' | jq -c .)"
"$TIERCTL" pool show tank | grep -x "Pieces: *5 pieces of 16.0 KiB (80.0 KiB) out of 3 split extents, in 1 containers" ||
	fail "pool show does not show the pieces: $("$TIERCTL" pool show tank)"
json_save pool pool show tank
echo "ok: the table has $targets targets for the pieces ($targets_before without)"

step "a write to a piece goes to its slot"
vm_random_file /tmp/piece 16384
off=$((20 * ext + 5 * 16384))
dd if=/tmp/piece of=$vol bs=16384 seek=$((off / 16384)) oflag=direct conv=notrunc status=none
dd if=/tmp/piece of=/tmp/data bs=16384 seek=$((off / 16384)) conv=notrunc status=none
want=$(vm_digest /tmp/data)
vm_drop_caches
assert_eq "the volume's data after the write" "$want" "$(vm_digest $vol)"

step "a commit of whole extents keeps the pieces"
tierctl_ok extent move tank 24 2 --tier ssd >/dev/null
shown=$(slots show "$hdd" "$ssd")
echo "$shown"
grep -q "version 2 containers 1 pieces 5" <<<"$shown" || fail "the commit dropped the pieces: $shown"
targets=$(dmsetup table tank | wc -l)
vm_drop_caches
assert_eq "the volume's data after the commit" "$want" "$(vm_digest $vol)"

step "split extents do not move whole"
tierctl_fails 1 "extent 20 of pool tank is split into pieces: bring them home first" extent move tank 20 2 --tier ssd
assert_eq "the volume's data after the refusal" "$want" "$(vm_digest $vol)"

step "the planner leaves split extents where they are, pinned or not"
tierctl_ok pin tank $((20 * ext)) $((3 * ext)) --tier ssd
planned=$("$TIERCTL" tier now tank --dry-run --json | jq -r '[.plan.moves[].extent] | join(" ")')
assert_eq "planned moves with extents 20-22 pinned to the SSD" 22 "$planned"
tierctl_ok tier now tank --wait >/dev/null
# SSD: extents 0-3, 24-25 and 22, and the container.
assert_eq "SSD extents used" 8 "$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"
vm_drop_caches
assert_eq "the volume's data after the run" "$want" "$(vm_digest $vol)"
targets=$(dmsetup table tank | wc -l)

step "a restart from the state, whose generation is the devices'"
tierd_stop TERM
: >/tmp/tierd.log
tierd_start --piece-heat=no --metrics-listen 127.0.0.1:9477
wait_until 20 "the pool active" test -e $vol
metrics=$(curl -sSf http://127.0.0.1:9477/metrics) || fail "GET /metrics failed"
grep -x 'tierd_pieces{pool="tank"} 5' <<<"$metrics" || fail "tierd_pieces: $(grep pieces <<<"$metrics")"
grep -x 'tierd_piece_containers{pool="tank"} 1' <<<"$metrics" || fail "no tierd_piece_containers 1"
grep "differs from generation" /tmp/tierd.log && fail "the state's pieces differ from the devices'"
vm_drop_caches
assert_eq "the volume's data after a restart" "$want" "$(vm_digest $vol)"

step "an import from the devices alone"
tierd_stop TERM
dmsetup remove tank
rm -rf "$TIERD_STATE"
tierd_start --piece-heat=no
tierctl_ok pool import "$hdd" "$ssd" >/dev/null
vm_drop_caches
assert_eq "the volume's data after import" "$want" "$(vm_digest $vol)"
assert_eq "the table after import" "$targets" "$(dmsetup table tank | wc -l)"

step "the SSD dies: drop-missing zeroes what was lost with it, pieces too"
tierd_stop TERM
dmsetup remove tank
losetup -d "$ssd"
tierd_start --piece-heat=no
tierctl_ok pool activate tank --degraded >/dev/null
# Lost: extents 0-3, 22, 24-25 whole, and 20-21 by their pieces on the SSD.
assert_eq "lost extents" 9 "$(pool_field tank .lost_extents)"
assert_eq "lost ranges" "0+4 20+3 24+2" \
	"$(pool_field tank '[.lost_ranges[] | "\(.first_extent)+\(.extents)"] | join(" ")')"
dd if=$vol of=/dev/null bs=16384 skip=$(((20 * ext + 5 * 16384) / 16384)) count=1 iflag=direct \
	status=none 2>/dev/null && fail "a piece on the missing SSD reads"
assert_eq "extent 20 beside its lost pieces" \
	"$(vm_digest /tmp/data 16384 $((20 * ext + 16384)))" "$(vm_digest $vol 16384 $((20 * ext + 16384)))"
cp /tmp/data /tmp/expect
for le in 0 1 2 3 22 24 25; do # whole on the SSD
	dd if=/dev/zero of=/tmp/expect bs="$ext" seek=$le count=1 conv=notrunc status=none
done
for lp in 20:0 20:5 20:255 21:7; do # pieces in the SSD's container; 0:3 goes with extent 0
	dd if=/dev/zero of=/tmp/expect bs=16384 seek=$(((${lp%:*} * ext + ${lp#*:} * 16384) / 16384)) \
		count=1 conv=notrunc status=none
done
tierctl_ok pool drop-missing tank --yes >/dev/null
vm_drop_caches
assert_eq "the volume's data after the drop" "$(vm_digest /tmp/expect)" "$(vm_digest $vol)"
assert_eq "pieces after the drop" 0 "$(pool_field tank .pieces.containers)"
shown=$(slots show "$hdd")
grep -q "version 1 containers 0 pieces 0" <<<"$shown" || fail "the HDD's newest slot: $shown"
json_save pool pool show tank
tierd_stop TERM
: >/tmp/tierd.log
tierd_start --piece-heat=no
wait_until 20 "the pool active" test -e $vol
vm_drop_caches
assert_eq "the volume's data after a restart" "$(vm_digest /tmp/expect)" "$(vm_digest $vol)"
json_check
tierd_stop TERM
echo "pieces-carry: ok"
