#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 64 extents move live to the SSD and back while fio rewrites them and checks
# every block it wrote (crc32c, read back during and after the run): no write
# is lost or misplaced by a move, the table ends with the extents where they
# were sent, and the rest of the volume still holds the data written before.
# With --verbose, and only then, tierd logs each step of a batch in order, and
# the steps taken while the volume is suspended only after its resume.
# vm-memory: 2048
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

command -v fio >/dev/null || skip "fio is not installed on the host"
hdd=$(vm_loop_create 192M)
ssd=$(vm_loop_create 128M)
hdd_mm=$(majmin "$hdd") ssd_mm=$(majmin "$ssd")
E=$((1 << 20))
# The extents that move, and fio's range: [FIRST, FIRST + COUNT).
FIRST=32 COUNT=64
# The batches' lines, which the moves under fio are checked by, are debug.
tierd_start --verbose

tierctl_ok pool create tank --hdd "$hdd" --extent-size 1M
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
vol=/dev/mapper/tank
size=$(blockdev --getsize64 $vol)
[ $((size / E)) -ge $((FIRST + COUNT + 16)) ] || fail "volume too small: $size bytes"
vm_random_file /tmp/data "$size"
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
head_sum=$(vm_digest /tmp/data $((FIRST * E)))
tail_bytes=$((size - (FIRST + COUNT) * E))
tail_sum=$(vm_digest /tmp/data $tail_bytes $(((FIRST + COUNT) * E)))

# on_tier MAJ:MIN: every moving extent sits on that device in the live table.
on_tier() {
	assert_eq "extents $FIRST-$((FIRST + COUNT - 1)) on $1" $COUNT "$(extents_on tank "$1" $FIRST $COUNT $E)"
}
rest_intact() {
	vm_drop_caches
	assert_eq "volume before fio's range $1" "$head_sum" "$(vm_digest $vol $((FIRST * E)))"
	assert_eq "volume after fio's range $1" "$tail_sum" \
		"$(vm_digest $vol $tail_bytes $(((FIRST + COUNT) * E)))"
}

# fio_job SEED [--verify_only=1]: random 4K I/O over the moving extents,
# checking every block it writes (crc32c and fio's header, which names the
# block's offset): read back 256 writes at a time while the job runs, and the
# rest at its end; any mismatch ends fio with an error. The first half of the
# range takes writes only, so that fio can check its blocks again later
# (verify_only replays a write pattern, not a mixed one); the second half
# takes a 50/50 mix of reads and writes.
half=$((COUNT / 2 * E))
fio_job() {
	local seed=$1 mixed=()
	shift
	[ $# -eq 0 ] && mixed=(--name=mixed --offset=$(((FIRST + COUNT / 2) * E)) --size=$half --rw=randrw)
	fio --filename=$vol --bs=4k --direct=1 --ioengine=libaio --iodepth=8 \
		--verify=crc32c --verify_backlog=256 --do_verify=1 --verify_fatal=1 \
		--randrepeat=0 --randseed="$seed" --verify_state_save=0 --eta=never --output=/tmp/fio-"$seed".out "$@" \
		--name=writes --offset=$((FIRST * E)) --size=$half --rw=randwrite "${mixed[@]}"
}

# move_under_fio TIER MAJ:MIN: move the extents while fio runs over them,
# again and again until the move is over; then check the last run's written
# half once more from the device, after the move.
seed=0
move_under_fio() {
	local tier=$1 runs=0 mover rc=0 start=$SECONDS by_event events_before
	events_before=$(grep -c "in sync seen by a device-mapper event" /tmp/tierd.log || true)
	"$TIERCTL" extent move tank $FIRST $COUNT --tier "$tier" >/tmp/move.out 2>&1 &
	mover=$!
	while kill -0 $mover 2>/dev/null; do
		seed=$((seed + 1))
		fio_job $seed || { cat /tmp/fio-$seed.out; fail "fio run $seed failed (verify error?)"; }
		runs=$((runs + 1))
	done
	wait $mover || rc=$?
	cat /tmp/move.out
	[ "$rc" = 0 ] || fail "the move to the $tier tier failed ($rc)"
	echo "ok: moved $COUNT extents to the $tier tier in $((SECONDS - start)) s under $runs fio runs"
	grep -E "batch of [0-9]+ extents: stall" /tmp/tierd.log | tail -n 4
	vm_drop_caches
	fio_job $seed --verify_only=1 || { cat /tmp/fio-$seed.out; fail "blocks of fio run $seed changed after the move"; }
	echo "ok: fio run $seed's blocks read back intact after the move"
	dmsetup table tank | grep -q mirror && fail "mirror targets left after the move"
	grep "no device-mapper events" /tmp/tierd.log && fail "the batches polled instead of waiting for events"
	# Events that silently never came would leave every batch to the 1 s safety poll.
	by_event=$(grep -c "in sync seen by a device-mapper event" /tmp/tierd.log || true)
	[ "$by_event" -gt "$events_before" ] ||
		fail "no batch of the move saw its mirrors in sync through a device-mapper event"
	echo "ok: $((by_event - events_before)) batches woke on a device-mapper event"
	on_tier "$2"
	rest_intact "after the move to the $tier tier"
}

step "move $COUNT extents to the SSD under fio"
move_under_fio ssd "$ssd_mm"
assert_eq "SSD extents used" $COUNT "$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"

step "move them back to the HDD under fio"
move_under_fio hdd "$hdd_mm"
assert_eq "SSD extents used" 0 "$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"

step "a restart keeps everything"
tierd_stop TERM
quiet_from=$(($(wc -l </tmp/tierd.log) + 1))
tierd_start
assert_eq "pool state" active "$(pool_field tank .state)"
on_tier "$hdd_mm"
fio_job $seed --verify_only=1 || { cat /tmp/fio-$seed.out; fail "fio's blocks changed over a restart"; }
rest_intact "after a restart"

step "without --verbose, no debug line"
tierctl_ok extent move tank $FIRST 16 --tier ssd >/dev/null
tierctl_ok extent move tank $FIRST 16 --tier hdd >/dev/null
tail -n +"$quiet_from" /tmp/tierd.log | grep "tierd: debug:" && fail "debug lines without --verbose"
tail -n +"$quiet_from" /tmp/tierd.log | grep "extents: stall" && fail "a batch's line without --verbose"
echo "ok: a restart and two moves logged no debug line"

# debug_lines FROM: the batches' debug lines in tierd's log from its line FROM.
debug_lines() {
	tail -n +"$1" /tmp/tierd.log | grep -E "tierd: debug: pool tank: batch of [0-9]+ extents: " || true
}
log_end() { echo $(($(wc -l </tmp/tierd.log) + 1)); }

step "--verbose: killed while suspended after the commit, the held lines were never written"
tierd_stop TERM
from=$(log_end)
TIERD_FAULT=move-after-commit tierd_start --verbose
"$TIERCTL" extent move tank $FIRST 16 --tier ssd && fail "the move survived its fault point"
tierd_dead
dmsetup info tank | grep -q '^State: *SUSPENDED' || fail "not suspended at the fault: $(dmsetup info tank)"
debug_lines "$from" >/tmp/killed.log
cat /tmp/killed.log
# The first swap's suspend line waited for its resume; the commit is prepared
# and the final table loads with I/O flowing.
for w in "suspended \(noflush\) to swap in the mirrors" "resumed on the mirrors in" \
	"commit prepared in" "loaded the final table"; do
	grep -qE "$w" /tmp/killed.log || fail "no debug line '$w' before the fault"
done
grep -E "suspended \(noflush\) in |mirrors read again|committed" /tmp/killed.log &&
	fail "a debug line reached the log while the volume was suspended"
echo "ok: the lines of the suspended window were held, not written"
tierd_start --verbose
assert_eq "pool state" active "$(pool_field tank .state)"

step "--verbose logs every step of a move in order, the suspended ones after the resume"
from=$(log_end)
tierctl_ok extent move tank $FIRST 16 --tier hdd
debug_lines "$from" >/tmp/verbose.log
cat /tmp/verbose.log
last=0
for w in "loaded the mirror table in" "suspended \(noflush\) to swap in the mirrors in" \
	"resumed on the mirrors in" "copy over after [0-9.]+ ms, seen by" \
	"commit prepared in [0-9.]+ ms: [0-9]+ runs" "loaded the final table in" \
	"suspended \(noflush\) in" "mirrors read again while suspended: 0 copies" \
	"committed [0-9]+ extents to the devices and the state: [0-9]+ KiB written in" \
	"resumed into the final table in [0-9.]+ ms: the stall"; do
	n=$(grep -nE "$w" /tmp/verbose.log | head -n 1 | cut -d: -f1)
	[ -n "$n" ] || fail "no debug line '$w' with --verbose"
	[ "$n" -gt "$last" ] || fail "debug line '$w' out of order (line $n, the step before at $last)"
	last=$n
done
# The batch's summary comes after its steps: batch_end writes it.
tail -n +"$from" /tmp/tierd.log | grep -E "debug: .*(resumed into the final table|extents: stall)" |
	tail -n 1 | grep -q "extents: stall" || fail "the batch's summary is not after its steps"
echo "ok: $(wc -l </tmp/verbose.log) debug lines, each step in order"
# The data over a kill at each step is crash-points' business; here, where the extents went.
on_tier "$hdd_mm"
assert_eq "SSD extents used" 0 "$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"
tierd_stop TERM
echo "migrate-verify: ok"
