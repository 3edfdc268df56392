#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Tiering runs end to end on a pool whose SSD grows the volume (so every
# promotion needs a demotion first, through the swap reserve): a sequential
# scan of everything plans no promotion; a hot set of
# scattered HDD extents is on the SSD after `tier now --wait` (every copy
# verified against its source with --verify-moves); --dry-run
# changes nothing; pins win over heat; policy lowest empties the SSD as far
# as the HDD has room; `schedule set every 1m` starts a run on its own; a
# clock stepped over a daily time starts the run it skipped; with schedule
# auto, extents that turn hot are on the SSD within a minute; every run is
# recorded; the data never changes.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 160M)
ssd=$(vm_loop_create 48M)
hdd_mm=$(majmin "$hdd") ssd_mm=$(majmin "$ssd")
E=$((4 << 20))
tierd_start --sample-interval 1 --flush-interval 2 --verify-moves --verbose
tierctl_ok pool create tank --hdd "$hdd" --ssd "$ssd"
vol=/dev/mapper/tank
size=$(blockdev --getsize64 $vol)
vm_random_file /tmp/data "$size"
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
check() {
	vm_drop_caches
	assert_eq "volume contents $1" "$(vm_digest /tmp/data)" "$(vm_digest $vol "$size")"
}
extent_dev() {
	dmsetup table tank | awk -v s=$(($1 * E / 512)) '$1 <= s && s < $1 + $2 { print $4 }'
}
ssd_extents() { extents_on tank "$ssd_mm" 0 $((size / E)) $E; }
random_reads() {
	fio --name=r --filename=$vol --direct=1 --rw=randread --bs=4k --offset=$(($1 * E)) \
		--size=$E --number_ios="$2" --randrepeat=0 --output=/dev/null
}
stats() { "$TIERCTL" stats tank --json | jq -r ".stats | $1"; }

step "the policies shipped"
"$TIERCTL" policy list
assert_eq "policies" "auto highest lowest" "$("$TIERCTL" policy list --json | jq -r '.policies[].name' | xargs)"
assert_eq "default policy" auto "$("$TIERCTL" schedule show tank --json | jq -r .schedule.policy)"
tierctl_fails 1 "no policy named nosuch" policy set tank nosuch

step "a sequential scan of the whole volume plans no promotion"
# A backup reads everything once: in 64 KiB reads (a pass of 16 per extent
# under the old per-I/O rule), and the first 8 extents in 4 KiB ones.
fio --name=scan --filename=$vol --direct=1 --ioengine=libaio --iodepth=16 --rw=read --bs=64k \
	--size="$size" --output=/dev/null
fio --name=scan4k --filename=$vol --direct=1 --ioengine=libaio --iodepth=16 --rw=read --bs=4k \
	--size=$((8 * E)) --output=/dev/null
# Before the scan is sampled, no plan would promote anything either.
nr_extents=$((size / E))
scanned() {
	[ "$("$TIERCTL" heat tank --top $nr_extents --json | jq '[.heat.extents[] | select(.reads > 0)] | length')" = $nr_extents ]
}
wait_until 30 "the scan in the heat of every extent" scanned
"$TIERCTL" heat tank --top 3
assert_eq "promotions planned after a scan" 0 \
	"$("$TIERCTL" tier now tank --dry-run --json | jq .plan.promoted_extents)"

step "a hot set of scattered HDD extents"
hot="3 11 19 27"
for le in $hot; do
	assert_eq "extent $le before" "$hdd_mm" "$(extent_dev $le)"
	random_reads "$le" 200
done
hot_sampled() {
	[ "$("$TIERCTL" heat tank --top 4 --json | jq -r '.heat.extents[].extent' | sort -n | xargs)" = "$hot" ]
}
wait_until 30 "the hot set on top of the heat" hot_sampled
table=$(dmsetup table tank)
tierctl_ok tier now tank --dry-run
plan=$("$TIERCTL" tier now tank --dry-run --json)
echo "$plan" | jq -c '.plan | del(.moves)'
assert_eq "--dry-run leaves the table" "$table" "$(dmsetup table tank)"
assert_eq "promotions planned" 4 "$(echo "$plan" | jq .plan.promoted_extents)"
assert_eq "hot set planned up" "$hot" \
	"$(echo "$plan" | jq -r '.plan.moves[] | select(.to == "ssd") | .extent' | sort -n | xargs)"
echo "$plan" | jq -e '.plan.ssd_io_share_after > .plan.ssd_io_share_before' >/dev/null ||
	fail "the plan does not raise the SSD's share"

step "tier now --wait"
tierctl_ok tier now tank --wait
for le in $hot; do
	assert_eq "extent $le after the run" "$ssd_mm" "$(extent_dev $le)"
done
dmsetup table tank | grep -q mirror && fail "mirror targets left after the run"
check "after the run"
# --verify-moves compared every copy with its source while suspended.
grep -q "verified the batch's copies in .*: 0 differ, 0 unreadable" /tmp/tierd.log ||
	fail "no verification logged: $(grep -i verif /tmp/tierd.log)"
run=$("$TIERCTL" runs tank --json | jq '.runs[0]')
echo "$run" | jq -c .
assert_eq "run trigger" on-demand "$(echo "$run" | jq -r .trigger)"
assert_eq "run result" done "$(echo "$run" | jq -r .result)"
assert_eq "run promoted" 4 "$(echo "$run" | jq .promoted_extents)"
assert_eq "run bytes" $(((4 + $(echo "$run" | jq .demoted_extents)) * E)) "$(echo "$run" | jq .moved_bytes)"
assert_eq "stats: SSD extents as mapped" "$(ssd_extents)" \
	"$(stats '.tiers[] | select(.class == "ssd") | .used_extents')"
assert_eq "stats: last run" "$(echo "$run" | jq .id)" "$(stats .last_run.id)"
plan=$("$TIERCTL" tier now tank --dry-run --json)
jq -c '.plan.moves' <<<"$plan"
"$TIERCTL" heat tank --top 8
assert_eq "a second run moves nothing" 0 "$(jq .plan.planned_extents <<<"$plan")"

step "pins win over heat"
tierctl_ok pin tank $((3 * E)) 4M --tier hdd
tierctl_ok pin tank $((8 * E)) 1 --tier ssd
assert_eq "pins in pool show" "3:hdd 8:ssd" \
	"$(pool_field tank '.pins[] | "\(.first_extent):\(.tier)"' | xargs)"

step "every read command's --json matches its schema (docs/protocol.md)"
json_save pools pool list
json_save stats stats tank --history 10m --step 1m
json_save runs runs tank
json_save heat heat tank --top 5
json_save policies policy list
json_save schedule schedule show tank
json_save plan tier now tank --dry-run
json_save version version
# A run started without --wait is still running: its nulls, and the job in pool show.
json_save run tier now tank
json_save pool pool show tank
json_save stats stats tank
"$TIERCTL" pool show nope --json >/tmp/json-error.json 2>/tmp/stderr && fail "pool show nope succeeded"
[ -s /tmp/stderr ] && fail "pool show nope --json wrote to stderr: $(cat /tmp/stderr)"
json_saved+=(error /tmp/json-error.json)
json_check
run_ended() { [ "$("$TIERCTL" runs tank --json | jq -r '.runs[0].result')" != running ]; }
wait_until 60 "the run finished" run_ended
assert_eq "the run's result" done "$("$TIERCTL" runs tank --json | jq -r '.runs[0].result')"
assert_eq "hot extent 3 pinned to the HDD" "$hdd_mm" "$(extent_dev 3)"
assert_eq "cold extent 8 pinned to the SSD" "$ssd_mm" "$(extent_dev 8)"
check "after the pinned run"
tierd_stop TERM
tierd_start --sample-interval 1 --flush-interval 2 --verify-moves --verbose
assert_eq "pins after a restart" "3:hdd 8:ssd" \
	"$(pool_field tank '.pins[] | "\(.first_extent):\(.tier)"' | xargs)"
tierctl_ok unpin tank 0 $((16 * E))
assert_eq "pins after unpin" "" "$(pool_field tank '.pins[]' | xargs)"

step "policy lowest empties the SSD as far as the HDD has room"
on_ssd=$(ssd_extents)
hdd_free=$(stats '.tiers[] | select(.class == "hdd") | .free_extents')
tierctl_ok policy set tank lowest
tierctl_ok tier now tank --wait
want=$((on_ssd > hdd_free ? on_ssd - hdd_free : 0))
assert_eq "SSD extents after lowest (had $on_ssd, HDD had $hdd_free free)" "$want" "$(ssd_extents)"
check "after lowest"

step "tier pause refuses runs, resume allows them"
tierctl_ok policy set tank auto
tierctl_ok tier pause tank
assert_eq "state paused" paused "$(stats .state)"
tierctl_fails 1 "paused" tier now tank
tierctl_ok tier resume tank

step "schedule every 1m starts a run by itself"
tierctl_fails 2 "" schedule set tank
tierctl_fails 2 "unknown schedule" schedule set tank weekly
tierctl_ok schedule set tank every 1m --io-awareness off --rate 0
"$TIERCTL" schedule show tank
assert_eq "schedule spec" "every 1m" "$("$TIERCTL" schedule show tank --json | jq -r .schedule.spec)"
next=$("$TIERCTL" schedule show tank --json | jq -r .schedule.next_run_at)
[ "$next" != null ] || fail "no next run"
for i in $(seq 150); do
	n=$("$TIERCTL" runs tank --json | jq '[.runs[] | select(.trigger == "schedule")] | length')
	[ "$n" -gt 0 ] && break
	sleep 1
done
[ "$n" -gt 0 ] || fail "no scheduled run within 150 s of $(date -u +%T) (next_run was $next)"
# One run per minute: the timer must not fire again a second later.
sleep 5
assert_eq "scheduled runs a few seconds on" 1 \
	"$("$TIERCTL" runs tank --json | jq '[.runs[] | select(.trigger == "schedule")] | length')"
"$TIERCTL" runs tank
tierctl_ok schedule set tank manual
check "after the scheduled run"

step "a clock stepped forward over a daily time starts the run it skipped"
idle() { [ "$("$TIERCTL" schedule show tank --json | jq .schedule.running)" = false ]; }
wait_until 60 "the scheduled run finished" idle
due=$((($(date +%s) / 60 + 3) * 60))
tierctl_ok schedule set tank "daily $(date -d @$due +%H:%M)"
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
assert_eq "next run before the step" "$(iso $due)" "$("$TIERCTL" schedule show tank --json | jq -r .schedule.next_run_at)"
runs_before=$("$TIERCTL" runs tank --json | jq '.runs | length')
date -s "@$((due + 60))" >/dev/null
for i in $(seq 30); do
	[ "$("$TIERCTL" runs tank --json | jq '.runs | length')" -gt "$runs_before" ] && break
	sleep 1
done
assert_eq "runs after the step" $((runs_before + 1)) "$("$TIERCTL" runs tank --json | jq '.runs | length')"
assert_eq "its trigger" schedule "$("$TIERCTL" runs tank --json | jq -r '.runs[0].trigger')"
grep "the clock was stepped over the run due at" /tmp/tierd.log ||
	fail "the catch-up is not logged"
assert_eq "next run after the step" "$(iso $((due + 86400)))" \
	"$("$TIERCTL" schedule show tank --json | jq -r .schedule.next_run_at)"

step "schedule auto moves extents that turn hot within a minute"
# Three times the reads of the first hot set: they outrank anything on the
# SSD, by more than the policy's hysteresis.
new_hot="29 31 35"
for le in $new_hot; do
	assert_eq "extent $le before" "$hdd_mm" "$(extent_dev $le)"
	random_reads "$le" 600
done
tierctl_ok schedule set tank auto --io-awareness off
t0=$(date +%s)
new_hot_on_ssd() {
	local le
	for le in $new_hot; do [ "$(extent_dev $le)" = "$ssd_mm" ] || return 1; done
}
wait_until 60 "the new hot extents on the SSD" new_hot_on_ssd
echo "on the SSD $(($(date +%s) - t0)) s after schedule set auto"
assert_eq "the run's trigger" auto "$("$TIERCTL" runs tank --json | jq -r '.runs[0].trigger')"
tierctl_ok schedule set tank manual
wait_until 60 "the auto run finished" idle
check "after auto"
tierd_stop TERM
echo "tiering: ok"
