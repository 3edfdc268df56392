#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Pieces on a pool far too large for an area per 16 KiB of the volume: a
# 1 TiB HDD with a 32 GiB SSD attached --no-grow, heat in zones, pieces
# watched through windows (a region of piece areas over one extent each)
# that go round the hottest extents. Three extents far apart whose reads
# sit on two 4 KiB blocks each, and one read at random all over: the
# windows find all four, tierctl heat says how few pieces hold each one's
# reads, the regions in the kernel are what pool show reports, what the
# windows learnt outlives heat starting again, and a run
# sends the hot pieces out and the evenly read extent whole, data intact;
# after a restart the pieces are still out, the data the same, and the
# next plan brings none home. A 1 GiB pool under a 4 MiB budget gets the
# windows an eighth of the budget holds.
#
# TIERD_PIECE_WINDOWS_TIB=N makes the HDD N TiB (the SSD still 32 GiB):
# the NAS-sized run, e.g. 128 TiB, 34 million extents (docs/testing.md):
#   TIERD_PIECE_WINDOWS_TIB=128 TIERD_VM_MEMORY=8192 tests/vm/vm-test --timeout 3600 piece-windows
#
# Two CPUs: a dm-stats area's kernel memory counts per possible CPU, and
# the number of windows asserted below is that of a 2-CPU guest.
# vm-cpus: 2
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

TIB=${TIERD_PIECE_WINDOWS_TIB:-1}
big=/tmp/big
mkdir -p $big
mount -t tmpfs -o size=$((TIB + 1))T tmpfs $big
truncate -s "${TIB}T" $big/hdd.img
truncate -s 32G $big/ssd.img
hdd=$(losetup --find --show $big/hdd.img)
ssd=$(losetup --find --show $big/ssd.img)
[ "$TIB" -eq 1 ] || export TIERD_START_WAIT=600
opts=(--sample-interval 1 --flush-interval 2 --piece-heat --verbose)
E=$((4 << 20))
P=16384

step "a ${TIB} TiB pool, its pieces watched through windows"
tierd_start "${opts[@]}"
tierctl_ok pool create tank --hdd "$hdd" >/dev/null
tierctl_ok tier attach tank --ssd "$ssd" --no-grow >/dev/null
vol=/dev/mapper/tank
extents=$(pool_field tank .total_extents)
show=$("$TIERCTL" pool show tank)
grep -i heat <<<"$show"
json_save pool pool show tank
[ "$(pool_field tank .heat.max_fine_zones)" -gt 0 ] || fail "heat is not in zones"
# 16 windows, each 256 areas of 328 bytes (2 CPUs): 1.3 MiB, an eighth of
# the budget at most (1/64 of the guest's RAM, 64 MiB at most).
assert_eq "piece windows" 16 "$(pool_field tank .heat.piece_windows)"
grep -q "pieces watched in 16 windows of an extent" <<<"$show" ||
	fail "pool show does not say pieces are watched in windows"

# Four extents far apart: three with two hot 4 KiB blocks (pieces 10 and
# 200), one read at random all over. Known data in each.
hot=($((extents / 7)) $((extents / 2 + 3)) $((extents - 5)))
even=$((extents / 3))
for le in "${hot[@]}" $even; do
	dd if=/dev/urandom of=$vol bs=1M count=4 seek=$((le * 4)) oflag=direct status=none
done
digest() {
	local le
	vm_drop_caches
	for le in "${hot[@]}" $even; do
		dd if=$vol bs=1M count=4 skip=$((le * 4)) iflag=direct status=none | md5sum
	done | md5sum | cut -d' ' -f1
}
want=$(digest)

step "reads on hot blocks of ${hot[*]}, at random all over $even"
readers=()
for le in "${hot[@]}"; do
	for k in 10 200; do
		(while :; do
			dd if=$vol of=/dev/null bs=4096 count=1 skip=$(((le * E + k * P) / 4096)) \
				iflag=direct status=none
		done) &
		readers+=($!)
	done
done
(while :; do
	fio --name=r --filename=$vol --direct=1 --rw=randread --bs=4k --offset=$((even * E)) \
		--size=$E --number_ios=2000 --randrepeat=0 --output=/dev/null
done) &
readers+=($!)
stop_readers() {
	[ ${#readers[@]} -gt 0 ] || return 0
	kill "${readers[@]}" 2>/dev/null || true
	wait "${readers[@]}" 2>/dev/null || true
	readers=()
}
trap stop_readers EXIT
held() { "$TIERCTL" heat tank --top 20 --json | jq -r ".heat.extents[] | select(.extent == $1) | .pieces.holding_90_percent // empty"; }
seen() {
	local le
	for le in "${hot[@]}"; do
		[ -n "$(held "$le")" ] && [ "$(held "$le")" -le 2 ] || return 1
	done
	[ -n "$(held $even)" ] && [ "$(held $even)" -ge 150 ]
}
wait_until 180 "the windows learned the pieces of all four" seen
stop_readers
trap - EXIT
"$TIERCTL" heat tank --top 6
# What choosing the windows costs: the heat table's hottest, at any size.
grep "heat of pieces:" /tmp/tierd.log | tail -3
echo "held 90%: ${hot[*]} $even: $(for le in "${hot[@]}" $even; do held "$le"; done | paste -sd ' ')"

step "the kernel's regions are what pool show reports"
# One coarse region over the volume, the guard, a region per fine zone and
# one per window watching an extent: each of those over an extent, an
# area per piece.
list=$(dmsetup message tank 0 "@stats_list tierd")
# Only the four extents are warm: the other windows stay idle (watching
# the zones' cold extents, warm only by a share of their zone's I/O, moved
# every window each minute to learn nothing).
busy=$(pool_field tank .heat.piece_windows_busy)
assert_eq "windows watching" 4 "$busy"
assert_eq "regions of pieces in the kernel" "$busy" \
	"$(awk -v s=$((E / 512)) '$3 == 32 && $2 ~ "\\+" s "$"' <<<"$list" | wc -l)"
awk -v s=$((E / 512)) '$3 == 32 { split($2, a, "+"); if (a[1] % s) exit 1 }' <<<"$list" ||
	fail "a window's region does not start on an extent: $list"
assert_eq "their areas in pool show" $((busy * 256)) "$(pool_field tank .heat.piece_areas)"
[ "$(pool_field tank .heat.kernel_bytes)" -le "$(pool_field tank .heat.kernel_limit_bytes)" ] ||
	fail "the regions are over the budget"

step "heat starts again (its regions deleted): what the windows learnt stays"
# As 'dmstats delete --allregions' would: the next sample fails and heat
# starts again with new regions, the windows chosen afresh. The readers
# are stopped, so the shares tierctl heat shows are those kept (the state
# has only the split extents', and there are none yet).
warnings=$(grep -c "warning" /tmp/tierd.log || true)
# (A window moved meanwhile may have taken its region already.)
for id in $(dmsetup message tank 0 "@stats_list tierd" | cut -d: -f1); do
	dmsetup message tank 0 "@stats_delete $id" || true
done
restarted() {
	[ "$(grep -c "warning" /tmp/tierd.log || true)" -gt "$warnings" ] &&
		[ -n "$(dmsetup message tank 0 "@stats_list tierd")" ]
}
wait_until 30 "a failed sample, and new regions" restarted
grep "warning" /tmp/tierd.log | tail -1
seen || fail "what the windows learnt was lost when heat started again (held 90%:" \
	"$(for le in "${hot[@]}" $even; do held "$le"; done | paste -sd ' '))"

step "a run: the hot pieces out, the evenly read extent whole"
"$TIERCTL" tier now tank --dry-run | tail -20
plan=$("$TIERCTL" tier now tank --dry-run --json)
json_save plan tier now tank --dry-run
for le in "${hot[@]}"; do
	assert_eq "extent $le: pieces going out" "10 200" \
		"$(jq -r "[.plan.moves[] | select(.extent == $le and .piece != null and .to == \"ssd\") | .piece] | sort | map(tostring) | join(\" \")" <<<"$plan")"
	assert_eq "extent $le: no whole move" 0 \
		"$(jq "[.plan.moves[] | select(.extent == $le and .piece == null)] | length" <<<"$plan")"
done
assert_eq "extent $even whole to the SSD" 1 \
	"$(jq "[.plan.moves[] | select(.extent == $even and .piece == null and .to == \"ssd\")] | length" <<<"$plan")"
tierctl_ok tier now tank --wait >/dev/null
"$TIERCTL" runs tank --limit 1
for le in "${hot[@]}"; do
	assert_eq "extent $le piece 200 out" ssd "$(pool_tier_at tank $((le * E + 200 * P)))"
	assert_eq "extent $le piece 201 at home" hdd "$(pool_tier_at tank $((le * E + 201 * P)))"
done
assert_eq "extent $even on the SSD" ssd "$(pool_tier_at tank $((even * E)))"
assert_eq "the data after the run" "$want" "$(digest)"

step "a restart: pieces still out, nothing to bring home"
tierd_stop TERM
tierd_start "${opts[@]}"
wait_until 60 "the pool active" test -e $vol
assert_eq "piece windows after a restart" 16 "$(pool_field tank .heat.piece_windows)"
for le in "${hot[@]}"; do
	assert_eq "extent $le piece 10 out after a restart" ssd "$(pool_tier_at tank $((le * E + 10 * P)))"
done
assert_eq "the data after a restart" "$want" "$(digest)"
assert_eq "pieces planned home" 0 "$("$TIERCTL" tier now tank --dry-run --json | jq .plan.pieces_home)"
json_save pool pool show tank
json_check
tierctl_ok pool destroy tank --yes
tierd_stop TERM
losetup -d "$hdd" "$ssd"

step "a small budget: the windows keep to an eighth of it"
# 1 GiB at full resolution under 4 MiB: its piece areas over the volume
# (21 MB) do not fit, so windows; an eighth of 4 MiB holds 6 of 84 KiB
# (2 CPUs), though the budget left beside the extent region would hold 16.
truncate -s 1G $big/small.img
small=$(losetup --find --show $big/small.img)
tierd_start --sample-interval 1 --piece-heat --heat-kernel-memory 4M
tierctl_ok pool create small --hdd "$small" >/dev/null
assert_eq "heat at full resolution" 0 "$(pool_field small .heat.max_fine_zones)"
assert_eq "piece windows" $(((4 << 20) / 8 / (256 * $(pool_field small .heat.area_kernel_bytes)))) \
	"$(pool_field small .heat.piece_windows)"
tierctl_ok pool destroy small --yes
tierd_stop TERM
losetup -d "$small"
echo "piece-windows: ok"
