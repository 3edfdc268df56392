#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A move to an SSD whose writes fail, always or intermittently (dm-flakey with
# error_writes, reads still working): every extent whose copy failed stays on
# the HDD and is counted in tierctl's failure, every other one is on the SSD,
# tierd's accounting matches the table, the data is intact, and writes into
# the moving extents never fail while they are still on the HDD (once an
# extent is on the flaky SSD, its writes fail as the SSD's own would). Once
# the SSD is healthy again the same move succeeds.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 128M)
ssd_loop=$(vm_loop_create 96M)
mm=$(majmin "$ssd_loop")
sectors=$((96 << 11))
echo "0 $sectors linear $mm 0" | dmsetup create ssdwrap
ssd=/dev/mapper/ssdwrap
ssd_mm=$(majmin $ssd) hdd_mm=$(majmin "$hdd")
E=$((1 << 20))
FIRST=16 COUNT=32
tierd_start
trap 'rc=$?; [ $rc = 0 ] || { tail -n 40 /tmp/tierd.log; dmsetup status; } >&2' EXIT

tierctl_ok pool create tank --hdd "$hdd" --extent-size 1M
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
vol=/dev/mapper/tank
size=$(blockdev --getsize64 $vol)
vm_random_file /tmp/data "$size"
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
table_before=$(dmsetup table tank)

# ssd_table FLAKEY-ARGS: tierd's metadata area (the first 2 MiB) keeps
# working; the data area behind dm-flakey with these up/down intervals and
# features, or linear again without arguments.
ssd_table() {
	if [ $# -eq 0 ]; then
		echo "0 $sectors linear $mm 0" | dmsetup reload ssdwrap
	else
		printf '0 4096 linear %s 0\n4096 %s flakey %s 4096 %s\n' \
			"$mm" $((sectors - 4096)) "$mm" "$*" | dmsetup reload ssdwrap
	fi
	dmsetup suspend ssdwrap
	dmsetup resume ssdwrap
	dmsetup table ssdwrap
}
extent_dev() {
	dmsetup table tank | awk -v s=$(($1 * E / 512)) '$1 <= s && s < $1 + $2 { print $4 }'
}
ssd_used() {
	pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents'
}
check() {
	vm_drop_caches
	assert_eq "volume contents $1" "$(vm_digest /tmp/data)" "$(vm_digest $vol)"
}
# The volume takes writes and gives them back, whatever the SSD does.
rewrite() {
	vm_random_file /tmp/new $((4 * E))
	dd if=/tmp/new of=$vol bs=1M seek=$1 oflag=direct conv=notrunc status=none
	dd if=/tmp/new of=/tmp/data bs=1M seek=$1 conv=notrunc status=none
}
# start_writer EXTENT: rewrite 2 MiB at EXTENT with /tmp/new, again and
# again, until stop_writer. Every write is the same data, so whichever of them
# failed, the content is that data once one succeeded after it.
start_writer() {
	vm_random_file /tmp/new $((2 * E))
	rm -f /tmp/writer.err /tmp/writer.stop /tmp/writer.mirrored
	(
		i=0
		while [ ! -e /tmp/writer.stop ]; do
			i=$((i + 1))
			# Issued while the extents are mirrored (or the volume is
			# suspended to leave the mirrors).
			dmsetup table tank | grep -q mirror && echo $i >>/tmp/writer.mirrored
			dd if=/tmp/new of=$vol bs=1M seek=$1 oflag=direct conv=notrunc status=none ||
				echo "write $i failed" >>/tmp/writer.err
			sleep 0.05
		done
		echo $i >/tmp/writer.count
	) &
	writer=$!
	writer_at=$1
}
stop_writer() {
	touch /tmp/writer.stop
	for _ in $(seq 600); do
		kill -0 $writer 2>/dev/null || break
		sleep 0.1
	done
	kill -0 $writer 2>/dev/null && fail "writes to the volume hang"
	wait $writer
	echo "$(cat /tmp/writer.count) writes beside the move, $(cat /tmp/writer.mirrored 2>/dev/null | wc -l) to mirrors"
}
record_writes() {
	dd if=/tmp/new of=/tmp/data bs=1M seek=$writer_at conv=notrunc status=none
}
# move_counted: run the move; prints how many extents it said failed, or
# "commit" if a commit itself failed (the SSD fails the flush that ends its
# metadata write too).
move_counted() {
	local rc=0 out
	out=$("$TIERCTL" extent move tank $FIRST $COUNT --tier ssd 2>&1) || rc=$?
	echo "$out" >&2
	if [ "$rc" = 0 ]; then
		echo 0
		return
	fi
	[ "$rc" = 1 ] || fail "tierctl extent move: status $rc"
	case "$out" in
	*"cannot write metadata"*) echo commit ;;
	*) sed -n 's/.*: \([0-9]*\) of \([0-9]*\) extents could not move.*/\1/p' <<<"$out" | grep . ||
		fail "the failure does not say how many extents failed: $out" ;;
	esac
}

step "every write to the SSD's data area fails, after half a second, under writes: nothing moves"
# Failing at once, the mirrors would last a tenth of a second, too short to
# meet the writer under a loaded host: the data area fails each write after
# 500 ms (dm-delay over dm-flakey), as a dying disk does after its retries.
printf '0 %s flakey %s 4096 0 5 1 error_writes\n' $((sectors - 4096)) "$mm" | dmsetup create ssdfail
fail_mm=$(majmin /dev/mapper/ssdfail)
printf '0 4096 linear %s 0\n4096 %s delay %s 0 0 %s 0 500\n' \
	"$mm" $((sectors - 4096)) "$fail_mm" "$fail_mm" | dmsetup reload ssdwrap
dmsetup suspend ssdwrap
dmsetup resume ssdwrap
dmsetup table ssdwrap
# Every write to a moving extent reaches the failing SSD through its mirror:
# the mirror holds it, and it lands on the HDD once the move is undone. No
# extent is ever on the SSD here, so no write may fail. The writer notes the
# writes it issued while the table had mirrors: move again until one was.
for attempt in $(seq 8); do
	start_writer $((FIRST + 5))
	failed=$(move_counted)
	stop_writer
	[ -s /tmp/writer.err ] && fail "the volume refused writes during the move: $(cat /tmp/writer.err)"
	record_writes
	assert_eq "extents reported as failed" $COUNT "$failed"
	[ -s /tmp/writer.mirrored ] && break
done
[ -s /tmp/writer.mirrored ] || fail "in 8 moves, no write was issued while the extents were mirrored"
assert_eq "table after the failed move" "$table_before" "$(dmsetup table tank)"
assert_eq "SSD extents used" 0 "$(ssd_used)"
grep -q "could not move to" /tmp/tierd.log || fail "the failure is not in tierd's log"
dmsetup table tank | grep -q mirror && fail "mirror targets left"
check "after the failed move"
rewrite $((FIRST + 3))
check "after a write with the SSD failing"

step "the SSD fails one second in two, under writes: each extent moves or stays"
ssd_table 1 1 1 error_writes
dmsetup remove ssdfail
start_writer $((FIRST + 5))
failed=$(move_counted)
touch /tmp/writer.stop
broken=
if grep -q "no more moves until tierd restarts" /tmp/tierd.log; then
	# A commit failed and so did writing the old mapping back: mirrors may
	# stay, holding writes a failed leg refused (the writer waits), until a
	# restart adopts the newest generation.
	broken=1
	echo "the pool took no more moves: restarting tierd with the SSD healthy"
	dmsetup table tank
	ssd_table
	tierd_stop TERM
	tierd_start
fi
stop_writer
# An extent that moved is on an SSD that still fails a write in two: a write
# to it after its commit fails, as it would on that SSD alone. So a refused
# write is only allowed where an extent it covers ended on the SSD (or across
# the restart of a pool that took no more moves); step 1 holds the writes
# through mirrors to the letter. The SSD heals before the next writes.
ssd_table
if [ -s /tmp/writer.err ]; then
	if [ -z "$broken" ] && [ "$(extent_dev $writer_at)" != "$ssd_mm" ] &&
		[ "$(extent_dev $((writer_at + 1)))" != "$ssd_mm" ]; then
		fail "the volume refused writes to extents that stayed on the HDD: $(cat /tmp/writer.err)"
	fi
	echo "NOTE: writes failed on the flaky SSD after their extents moved there, or across a restart: $(cat /tmp/writer.err)"
	# A failed write may have been the last: write the data once more.
	dd if=/tmp/new of=$vol bs=1M seek=$writer_at oflag=direct conv=notrunc status=none
fi
record_writes
check "after the intermittent move"
rewrite $((FIRST + 9))
check "after a write following the intermittent move"
dmsetup table tank | grep -q mirror && fail "mirror targets left"
on_ssd=$(extents_on tank "$ssd_mm" $FIRST $COUNT $E)
on_hdd=$(extents_on tank "$hdd_mm" $FIRST $COUNT $E)
assert_eq "extents $FIRST-$((FIRST + COUNT - 1)) on one tier or the other" $COUNT $((on_ssd + on_hdd))
echo "intermittent SSD: $on_ssd moved, $on_hdd stayed, tierctl reported: $failed failed"
[ "$failed" = commit ] || assert_eq "extents reported as failed" "$on_hdd" "$failed"
assert_eq "SSD extents used" "$on_ssd" "$(ssd_used)"

step "the SSD is healthy again: the same move completes"
ssd_table
tierctl_ok extent move tank $FIRST $COUNT --tier ssd
assert_eq "extents $FIRST-$((FIRST + COUNT - 1)) on the SSD" $COUNT "$(extents_on tank "$ssd_mm" $FIRST $COUNT $E)"
assert_eq "SSD extents used" $COUNT "$(ssd_used)"
check "after the move"
rewrite $((FIRST + 7))
check "after a write to a moved extent"
tierd_stop TERM
tierd_start
assert_eq "pool state after a restart" active "$(pool_field tank .state)"
check "after a restart"
tierd_stop TERM
echo "migrate-flakey: ok"
