#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# auto-runs: under schedule auto a run moves at most 16 extents, and when
# its plan wanted more the next run starts as soon as it ends, not at the
# next half-minute plan: 40 extents made hot are on the SSD after three
# runs back to back (16, 16, 8). Then auto plans on its own interval
# again, and the data reads back as written. On a pool that has no heat
# yet, auto's first plan comes with the first sample of its I/O worth a
# move, and the next ones while that heat is young, not a half minute on.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 160M) ssd=$(vm_loop_create 96M)
ssd_mm=$(majmin "$ssd")
E=$((1 << 20))
vol=/dev/mapper/tank
tierd_start --sample-interval 1 --flush-interval 2
tierctl_ok pool create tank --hdd "$hdd" --extent-size 1M
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
vm_fill_random $vol

# The devices of extents (one per line, in the order given) from the table.
extent_devs() {
	dmsetup table tank | awk -v e=$((E / 512)) -v list="$*" '
		{ start[NR] = $1; len[NR] = $2; dev[NR] = $4; n = NR }
		END {
			split(list, les, " ")
			for (i = 1; i in les; i++) {
				s = les[i] * e
				for (t = 1; t <= n; t++)
					if (start[t] <= s && s < start[t] + len[t]) { print dev[t]; break }
			}
		}'
}

step "a cold pool: auto's first plan comes with its first I/O"
# Its first plan, a second after the schedule is set, finds no heat; the
# first sample with some has the next come at once, not 30 s on.
cold_hdd=$(vm_loop_create 64M) cold_ssd=$(vm_loop_create 32M)
tierctl_ok pool create cold --hdd "$cold_hdd" --extent-size 1M
tierctl_ok tier attach cold --ssd "$cold_ssd" --no-grow
tierctl_ok schedule set cold auto --io-awareness off
sleep 3
assert_eq "runs of the cold pool before its I/O" 0 "$("$TIERCTL" runs cold --json | jq '.runs | length')"
t0=$(date +%s)
# Slow reads spread over 24 extents: each plan finds extents the one
# before had not seen read yet.
fio --name=cold --filename=/dev/mapper/cold --direct=1 --rw=randread --bs=4k --size=$((24 * E)) \
	--offset=$((20 * E)) --rate_iops=4 --runtime=20 --time_based --randrepeat=0 \
	--output=/dev/null >/dev/null &
cold_fio=$!
cold_runs() { [ "$("$TIERCTL" runs cold --json | jq '.runs | length')" -ge "$1" ]; }
wait_until 30 "a run of the cold pool" cold_runs 1
started=$(date -d "$("$TIERCTL" runs cold --json | jq -r '.runs[-1].started_at')" +%s)
echo "the cold pool's first run started $((started - t0)) s after its I/O began"
# 6 s alone in the VM; the next half-minute plan would be 28 s after t0.
[ $((started - t0)) -le 18 ] || fail "the first run came $((started - t0)) s after the I/O, not with it"
assert_eq "its trigger" auto "$("$TIERCTL" runs cold --json | jq -r '.runs[-1].trigger')"
# The heat the first run saw is young: the next plans come when it is
# three and nine times as old, not a half minute on.
wait_until 25 "a second run of the cold pool" cold_runs 2
"$TIERCTL" runs cold --json | jq -c '.runs | reverse | .[] | {id, started_at, promoted_extents}'
second=$(date -d "$("$TIERCTL" runs cold --json | jq -r '.runs[0].started_at')" +%s)
echo "its second run started $((second - started)) s after the first"
[ $((second - started)) -le 15 ] || fail "the second run came $((second - started)) s after the first"
wait $cold_fio || fail "fio on the cold pool"
tierctl_ok schedule set cold manual

step "40 extents made hot, apart from each other"
first=10 step_le=3 count=40
hot=$(seq $first $step_le $((first + step_le * (count - 1))) | xargs)
fio --name=hot --filename=$vol --direct=1 --rw=randread --bs=4k --size=$E \
	--offset=$((first * E)) --offset_increment=$((step_le * E)) --numjobs=$count \
	--number_ios=100 --randrepeat=0 --output=/dev/null || fail "fio"
hot_known() {
	[ "$("$TIERCTL" heat tank --top $count --json | jq -r '.heat.extents[].extent' | sort -n | xargs)" = "$hot" ]
}
wait_until 30 "the 40 on top of the heat" hot_known
assert_eq "hot extents on the SSD before" 0 "$(extent_devs $hot | grep -c "^$ssd_mm\$")"

step "schedule auto: runs back to back until the plan is done"
tierctl_ok schedule set tank auto --io-awareness off
all_on_ssd() { [ "$(extent_devs $hot | grep -c "^$ssd_mm\$")" = $count ]; }
wait_until 60 "the 40 hot extents on the SSD" all_on_ssd
wait_until 30 "the last run finished" \
	eval '[ "$("$TIERCTL" schedule show tank --json | jq .schedule.running)" = false ]'
runs=$("$TIERCTL" runs tank --limit 100 --json | jq -c '[.runs[] | select(.trigger == "auto")] | reverse')
jq -c '.[] | {id, planned_extents, promoted_extents, started_at, ended_at, result}' <<<"$runs"
assert_eq "auto runs" 3 "$(jq length <<<"$runs")"
assert_eq "their moves" "16 16 8" "$(jq -r '[.[].promoted_extents] | map(tostring) | join(" ")' <<<"$runs")"
for i in 1 2; do
	gap=$(($(date -d "$(jq -r ".[$i].started_at" <<<"$runs")" +%s) -
		$(date -d "$(jq -r ".[$((i - 1))].ended_at" <<<"$runs")" +%s)))
	echo "run $((i + 1)) started $gap s after run $i ended"
	[ "$gap" -le 5 ] || fail "run $((i + 1)) came $gap s after run $i, not at once"
done

step "then the half-minute plans again"
next=$("$TIERCTL" schedule show tank --json | jq -r .schedule.next_run_at)
last=$(jq -r '.[-1].started_at' <<<"$runs")
wait_s=$(($(date -d "$next" +%s) - $(date -d "$last" +%s)))
echo "next plan $wait_s s after the last run's start ($next)"
[ "$wait_s" -ge 25 ] && [ "$wait_s" -le 35 ] || fail "next plan $wait_s s after the last run"
tierctl_ok schedule set tank manual

step "the data reads back"
vm_drop_caches
assert_eq "volume contents" "$want" "$(vm_digest $vol "$size")"
tierd_stop TERM
echo "auto-runs: ok"
