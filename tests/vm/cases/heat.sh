#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Heat from dm-stats: random 4K reads on a few scattered extents put exactly
# those on top, even after a sequential scan of the whole volume; heat survives
# a restart and a kill -9; the per-tier I/O history matches a workload with a
# known split between an SSD-mapped and an HDD-mapped extent.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 160M)
ssd=$(vm_loop_create 48M)
tierd_start --sample-interval 1 --flush-interval 2
tierctl_ok pool create tank --hdd "$hdd" --ssd "$ssd"
vol=/dev/mapper/tank
E=$((4 << 20))
# 37 HDD extents (0-36), then 9 on the SSD (37-45).
assert_eq "heat enabled" true "$(pool_field tank .heat.enabled)"
# An area per extent, and the guard's one over each 64 of them; piece heat
# being on by default, an area per 16 KiB piece of the 46 extents too.
assert_eq "dm-stats areas" 47 "$(($(pool_field tank .heat.areas) - $(pool_field tank .heat.piece_areas)))"
assert_eq "piece areas" $((46 * 256)) "$(pool_field tank .heat.piece_areas)"
assert_eq "dm-stats kernel memory" $(((47 + 46 * 256) * $(pool_field tank .heat.area_kernel_bytes))) \
	"$(pool_field tank .heat.kernel_bytes)"
dmsetup message tank 0 "@stats_list tierd"

# random_reads LE COUNT: COUNT random 4K reads inside extent LE.
random_reads() {
	fio --name=r --filename=$vol --direct=1 --rw=randread --bs=4k --offset=$(($1 * E)) \
		--size=$E --number_ios="$2" --randrepeat=0 --output=/dev/null
}

step "random reads on extents 3, 17 and 30, then a sequential scan of everything"
random_reads 3 150
random_reads 17 150
random_reads 30 150
dd if=$vol of=/dev/null bs=1M iflag=direct status=none
# Until the scan is sampled, the top 3 would be right without it.
scanned() { [ "$("$TIERCTL" heat tank --top 46 --json | jq '[.heat.extents[] | select(.reads > 0)] | length')" = 46 ]; }
wait_until 30 "the scan in the heat of every extent" scanned
"$TIERCTL" heat tank --top 5
top3() { "$TIERCTL" heat tank --top 3 --json | jq -r '.heat.extents[].extent' | sort -n | xargs; }
assert_eq "hottest extents" "3 17 30" "$(top3)"
"$TIERCTL" heat tank --top 1 --json | jq -e '.heat.extents[0] | has("extent") and has("offset_bytes") and has("tier") and has("heat") and has("reads") and has("writes")' >/dev/null ||
	fail "heat --json lacks a field"
assert_eq "offset of extent 30" $((30 * E)) "$("$TIERCTL" heat tank --top 3 --json | jq '.heat.extents[] | select(.extent == 30) | .offset_bytes')"
heat17=$("$TIERCTL" heat tank --top 3 --json | jq '.heat.extents[] | select(.extent == 17) | .heat')

step "heat survives a restart and a kill -9"
tierd_stop TERM
tierd_start --sample-interval 1 --flush-interval 2
assert_eq "hottest extents after a restart" "3 17 30" "$(top3)"
after=$("$TIERCTL" heat tank --top 3 --json | jq '.heat.extents[] | select(.extent == 17) | .heat')
awk -v a="$after" -v b="$heat17" 'BEGIN { exit !(a > 0.99 * b && a <= b) }' ||
	fail "extent 17's heat went from $heat17 to $after across a restart"
# The stop saved everything: only heat gained since, which only the periodic
# flush can have saved, tells a kill -9 apart from it.
reads_of() { "$TIERCTL" heat tank --top 46 --json | jq ".heat.extents[] | select(.extent == $1) | .reads"; }
reads8=$(reads_of 8) # the scan's
random_reads 8 300
after_reads=$(date +%s%N)
flushed() {
	[ "$(sqlite3 "$TIERD_STATE/tierd.db" "SELECT max(sampled_ns) FROM heat_sampled")" -gt "$after_reads" ]
}
wait_until 30 "a flush of heat sampled after the reads" flushed
tierd_stop KILL
tierd_start --sample-interval 1 --flush-interval 2
assert_eq "hottest extent after kill -9" 8 "$("$TIERCTL" heat tank --top 1 --json | jq '.heat.extents[0].extent')"
assert_eq "reads of extent 8 after kill -9" $((reads8 + 300)) "$(reads_of 8)"
assert_eq "the others after kill -9" "3 17 30" \
	"$("$TIERCTL" heat tank --top 4 --json | jq -r '.heat.extents[1:][].extent' | sort -n | xargs)"

step "I/O per tier: 200 reads on SSD extent 40, 100 on HDD extent 5"
io() {
	sqlite3 "$TIERD_STATE/tierd.db" "SELECT coalesce(sum(reads), 0) FROM tier_io WHERE tier = '$1'"
}
# The reads of the kill -9 step reach the state at the next flush: before
# taking the starting point, wait until the HDD's count has stopped moving.
settled() {
	local before
	before=$(io hdd)
	sleep 3
	[ "$(io hdd)" = "$before" ]
}
wait_until 30 "the I/O counts settled" settled
ssd0=$(io ssd) hdd0=$(io hdd)
random_reads 40 200
random_reads 5 100
counted() { [ $(($(io ssd) - ssd0)) -ge 200 ] && [ $(($(io hdd) - hdd0)) -ge 100 ]; }
wait_until 30 "the reads in the saved I/O counts" counted
assert_eq "reads served by the SSD tier" 200 $(($(io ssd) - ssd0))
assert_eq "reads served by the HDD tier" 100 $(($(io hdd) - hdd0))

step "a pool of over 65,536 extents: a sample reads the guard, and the region where it saw I/O"
big=$(vm_loop_create 72G) # sparse: only what is written takes memory
tierctl_ok pool create big --hdd "$big" --extent-size 1M
areas=$(pool_field big .heat.areas)
extents=$(pool_field big .total_extents)
guard=$(((extents + 63) / 64))
[ "$extents" -gt 65536 ] || fail "the big pool has only $extents extents"
assert_eq "areas: an extent each, and the guard's" $((extents + guard)) "$areas"
echo "ok: $areas areas"
# The guard's areas, and those of the piece windows watching an extent (a
# minute each, read every sample: 16 at most, whatever the pool's size).
idle_sample() {
	[ "$("$TIERCTL" pool show big --json | jq '.pool.heat.sample_areas - .pool.heat.piece_areas')" = "$guard" ]
}
wait_until 30 "a sample of the idle pool reading the guard's $guard areas alone" idle_sample
M=$((1 << 20))
fio --name=r --filename=/dev/mapper/big --direct=1 --rw=randread --bs=4k --offset=$((69001 * M)) \
	--size=$M --number_ios=50 --randrepeat=0 --output=/dev/null
fio --name=r --filename=/dev/mapper/big --direct=1 --rw=randread --bs=4k --offset=$((12 * M)) \
	--size=$M --number_ios=40 --randrepeat=0 --output=/dev/null
big_counted() { [ "$("$TIERCTL" heat big --top 2 --json | jq '[.heat.extents[].reads] | add')" = 90 ]; }
wait_until 30 "the reads of both extents in the big pool's heat" big_counted
assert_eq "hottest extents of the big pool" "69001 12" \
	"$("$TIERCTL" heat big --top 2 --json | jq -r '.heat.extents[].extent' | xargs)"
assert_eq "reads counted on extent 69001" 50 \
	"$("$TIERCTL" heat big --top 1 --json | jq -r '.heat.extents[0].reads')"
# A read of 4 KiB at the start of each guard area: the sample reads the
# whole region, in two parts of at most 65,536 areas.
reads_total() { "$TIERCTL" heat big --top 3000 --json | jq '[.heat.extents[].reads] | add'; }
before=$(reads_total)
# One process for the reads: a dd each would take minutes under TCG.
python3 - "$guard" <<'PY'
import mmap, os, sys
fd = os.open("/dev/mapper/big", os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
for g in range(int(sys.argv[1])):
    os.preadv(fd, [buf], g * (64 << 20))
PY
all_counted() { [ "$(reads_total)" = $((before + guard)) ]; }
wait_until 30 "a read in each of the $guard guard areas counted" all_counted
wait_until 30 "the idle pool's sample reading the guard alone again" idle_sample
tierd_stop TERM
echo "heat: ok"
