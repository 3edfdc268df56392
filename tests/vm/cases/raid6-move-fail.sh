#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The HDD tier is an md RAID6 over 6 loop devices; members fail while a
# tiering run moves extents both ways (20 promoted, 20 demoted, 3 batches):
# one during a batch's copy, a second during a later batch's, with a
# writer rewriting extents of both directions all along. The array stays
# readable, so every move must complete: the run says so, no mirror is left,
# tierd's accounting matches the table, the allocation passes activation's
# check after a restart, and the volume holds what was written. Then a third
# member fails (the array is dead) during a promotion's copy: it and a
# demotion must fail and say so, leave no mirror (unless tierd says the pool
# takes no more moves), and what lives on the SSD still reads back.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

vm_modprobe loop raid456 dm-mod dm-mirror dm-delay
members=()
for i in 0 1 2 3 4 5; do
	members+=("$(vm_loop_create 48M)")
done
# Zero-filled members: the parity is already right (see md-raid6.sh).
mdadm --create /dev/md0 --run --quiet --assume-clean --level=6 --chunk=64 \
	--raid-devices=6 --metadata=1.2 "${members[@]}"
hdd=/dev/md0
# md keeps its default of no worker threads: with group_thread_cnt 2, its
# workers sometimes wait forever for a superblock update once the array has
# failed, and the move's copy waits with them.
# While members fail, the SSD answers every read and write after 100 ms, so
# that a batch's copy lasts long enough for a member to fail in the middle of
# it; the rest of the time without delay.
ssd=$(vm_delay_create ssddelay "$(vm_loop_create 128M)")
hdd_mm=$(majmin $hdd) ssd_mm=$(majmin $ssd)
E=$((4 << 20))
# A = extents 0-19, pinned to the SSD; B = extents 20-39, moved to the SSD
# first, then pinned to the HDD.
A=0 B=20 N=20
vol=/dev/mapper/tank
tierd_start --verbose
trap 'rc=$?; [ $rc = 0 ] || { tail -n 40 /tmp/tierd.log; dmsetup table; cat /proc/mdstat; } >&2' EXIT
tierctl_ok pool create tank --hdd $hdd --extent-size 4M
tierctl_ok tier attach tank --ssd $ssd --no-grow
size=$(blockdev --getsize64 $vol)
[ "$size" -ge $(((B + N) * E)) ] || fail "volume too small: $size bytes"
vm_random_file /tmp/data "$size"
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
tierctl_ok extent move tank $B $N --tier ssd

extent_dev() {
	dmsetup table tank | awk -v s=$(($1 * E / 512)) '$1 <= s && s < $1 + $2 { print $4 }'
}
# on_tier FIRST MAJMIN: how many of the N extents from FIRST map to MAJMIN.
on_tier() {
	dmsetup table tank | awk -v lo=$(($1 * E / 512)) -v hi=$((($1 + N) * E / 512)) -v d="$2" \
		-v es=$((E / 512)) '$4 == d && $1 < hi && $1 + $2 > lo {
			s = $1 < lo ? lo : $1; e = $1 + $2 > hi ? hi : $1 + $2; n += e - s
		} END { print n / es }'
}
check() {
	local t=$SECONDS
	vm_drop_caches
	assert_eq "volume contents $1" "$(vm_digest /tmp/data)" "$(vm_digest $vol "$size")"
	echo "read $((size >> 20)) MiB in $((SECONDS - t)) s"
}
check_accounting() {
	dmsetup table tank | grep -q mirror && fail "mirror targets left $1"
	assert_eq "SSD extents used (tierd) vs mapped (table) $1" \
		"$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')" \
		"$(dmsetup table tank | awk -v d="$ssd_mm" -v e=$((E / 512)) '$4 == d { n += $2 } END { print n / e }')"
}

# The writer rewrites 1 MiB inside a promoted and inside a demoted extent,
# again and again, with the same data: whichever write landed last, the
# contents are that data. No write may fail: the array is degraded, not dead.
vm_random_file /tmp/new $((2 << 20))
wa=$(((A + 3) * 4)) wb=$(((B + 5) * 4 + 2))
rm -f /tmp/writer.stop /tmp/writer.err
(
	i=0
	while [ ! -e /tmp/writer.stop ]; do
		i=$((i + 1))
		dd if=/tmp/new of=$vol bs=1M count=1 seek=$wa oflag=direct conv=notrunc status=none ||
			echo "write $i at $wa MiB failed" >>/tmp/writer.err
		dd if=/tmp/new of=$vol bs=1M count=1 skip=1 seek=$wb oflag=direct conv=notrunc status=none ||
			echo "write $i at $wb MiB failed" >>/tmp/writer.err
		sleep 0.05
	done
	echo $i >/tmp/writer.count
) &
writer=$!
dd if=/tmp/new of=/tmp/data bs=1M count=1 seek=$wa conv=notrunc status=none
dd if=/tmp/new of=/tmp/data bs=1M count=1 skip=1 seek=$wb conv=notrunc status=none

step "a run that promotes $N extents and demotes $N, two members failing mid-batch"
tierctl_ok policy set tank lowest
tierctl_ok pin tank $((A * E)) $((N * E)) --tier ssd
tierctl_ok pin tank $((B * E)) $((N * E)) --tier hdd
assert_eq "moves planned" $((2 * N)) "$("$TIERCTL" tier now tank --dry-run --json | jq .plan.planned_extents)"
batches() { grep -c "batch of .* extents: stall" /tmp/tierd.log || true; }
before=$(batches)
vm_delay ssddelay 100
"$TIERCTL" tier now tank --wait >/tmp/run.out 2>&1 &
runner=$!
# tierd's report of the job: how many moves are done (which batch is
# running) and what the batch copies, e.g. "12 hdd->ssd 4 ssd->hdd", or
# nothing between batches. Asked first, so that the member fails right after
# it: under a loaded host each program run here can take most of a second.
failed=0 last='' failed_dirs=''
while kill -0 $runner 2>/dev/null && [ $failed -lt 2 ]; do
	info=$("$TIERCTL" pool show tank --json | jq -r '"\(.pool.job.done_extents // 0) " +
		([.pool.job.batch // [] | .[] | "\(.from)->\(.to)"] | group_by(.) |
			map("\(length) \(.[0])") | join(" "))')
	started=${info%% *} dirs=${info#* }
	if [ -n "$dirs" ] && [ "$started" != "$last" ]; then
		m=${members[$((1 + 3 * failed))]}
		mdadm /dev/md0 --fail "$m"
		echo "failed $m while the batch of moves up to $started/$((2 * N)) copied $dirs"
		[[ $(dmsetup table tank) == *mirror* ]] ||
			echo "NOTE: the batch's copy ended as $m failed"
		failed=$((failed + 1)) last=$started
		failed_dirs+=" $dirs"
	fi
	sleep 0.05
done
rc=0
wait $runner || rc=$?
touch /tmp/writer.stop
wait $writer
vm_delay ssddelay 0
cat /tmp/run.out
echo "$(cat /tmp/writer.count) rounds of writes beside the run"
[ $failed = 2 ] || fail "the run ended before two members failed mid-batch ($failed)"
for dir in "hdd->ssd" "ssd->hdd"; do
	[[ $failed_dirs == *" $dir"* ]] || fail "no member failed during a batch copying $dir:$failed_dirs"
done
grep -q '\[6/4\]' /proc/mdstat || fail "array not doubly degraded: $(cat /proc/mdstat)"
[ -s /tmp/writer.err ] && fail "writes to the volume failed: $(cat /tmp/writer.err)"
run=$("$TIERCTL" runs tank --json | jq '.runs[0]')
echo "$run" | jq -c .
assert_eq "tier now --wait status" 0 "$rc"
assert_eq "run result" "done" "$(echo "$run" | jq -r .result)"
assert_eq "run failed moves" 0 "$(echo "$run" | jq .failed_extents)"
assert_eq "run promoted" $N "$(echo "$run" | jq .promoted_extents)"
assert_eq "run demoted" $N "$(echo "$run" | jq .demoted_extents)"
assert_eq "batches of the run" 3 $(($(batches) - before))
assert_eq "extents of A on the SSD" $N "$(on_tier $A "$ssd_mm")"
assert_eq "extents of B on the HDD" $N "$(on_tier $B "$hdd_mm")"
check_accounting "after the run"
check "after the run"

step "restart tierd on the degraded array"
tierd_stop TERM
: >/tmp/tierd.log
tierd_start --verbose
assert_eq "pool state after a restart" active "$(pool_field tank .state)"
bad=$(grep -E "inconsistent|not activating|cannot|rolled back" /tmp/tierd.log || true)
[ -z "$bad" ] || fail "tierd complained at activation: $bad"
check_accounting "after a restart"
check "after a restart"

step "a third member fails during a promotion: the array is dead"
vm_delay ssddelay 100
"$TIERCTL" extent move tank $B 8 --tier ssd >/tmp/move.out 2>&1 &
mover=$!
until [[ $(dmsetup table tank) == *mirror* ]]; do
	kill -0 $mover 2>/dev/null || fail "the move ended before it was caught copying: $(cat /tmp/move.out)"
	sleep 0.05
done
# mdadm refuses the ioctl (EBUSY) but md marks the member failed: check mdstat.
mdadm /dev/md0 --fail "${members[2]}" || true
grep -q '\[6/3\]' /proc/mdstat || fail "array not failed: $(cat /proc/mdstat)"
for _ in $(seq 300); do
	kill -0 $mover 2>/dev/null || break
	sleep 0.1
done
kill -0 $mover 2>/dev/null && fail "the move hangs with the array dead"
rc=0
wait $mover || rc=$?
vm_delay ssddelay 0
out=$(cat /tmp/move.out)
echo "$out"
if dmsetup table tank | grep -q mirror; then
	# Copies that completed were committed; writing the metadata to the
	# dead array failed, and so did writing the old mapping back.
	grep -q "no more moves until tierd restarts" /tmp/tierd.log ||
		fail "mirror targets left, and tierd does not say the pool is broken"
	assert_eq "extent move status with the array dead" 1 "$rc"
	echo "NOTE: the commit failed on the dead array: mirrors stay, no more moves"
else
	if [ "$rc" = 0 ]; then
		echo "NOTE: the copies were complete before the array died: committed"
	else
		assert_eq "extent move status with the array dead" 1 "$rc"
		grep -q "could not move" <<<"$out" || fail "the failed move does not say why: $out"
	fi
	check_accounting "after the promotion from the dead array"
	step "a demotion to the dead array fails"
	table=$(dmsetup table tank)
	out=$("$TIERCTL" extent move tank $A 2 --tier hdd 2>&1) && fail "a move to the dead array succeeded: $out"
	echo "$out"
	grep -q "could not move" <<<"$out" || fail "the failed move does not say why: $out"
	assert_eq "table after the demotion failed" "$table" "$(dmsetup table tank)"
	check_accounting "after the demotion to the dead array"
fi
vm_drop_caches
assert_eq "extents on the SSD with the array dead" "$(vm_digest /tmp/data $((N * E)) $((A * E)))" \
	"$(vm_digest $vol $((N * E)) $((A * E)))"
tierd_stop TERM
echo "raid6-move-fail: ok in $SECONDS s"
