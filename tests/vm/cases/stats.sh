#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tierctl stats: the extents each tier uses match what `dmsetup table` maps,
# and the share of I/O served by the SSD follows a workload that touches only
# SSD-mapped extents (above 0.8), then only HDD-mapped ones (below 0.2); the
# history and the plot cover moves too. advise predicts the SSD share of a
# skewed workload before tiering, within 5 points of what it serves after.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 128M)
ssd=$(vm_loop_create 64M)
hdd_mm=$(majmin "$hdd") ssd_mm=$(majmin "$ssd")
E=$((4 << 20))
tierd_start --sample-interval 1 --flush-interval 2
tierctl_ok pool create tank --hdd "$hdd"
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
vol=/dev/mapper/tank
tierctl_ok extent move tank 2 3 --tier ssd
stats() { "$TIERCTL" stats tank --json --window 1m | jq -r ".stats | $1"; }
mapped_extents() {
	dmsetup table tank | awk -v d="$1" -v e=$((E / 512)) '$4 == d { n += $2 / e } END { print n + 0 }'
}

step "used extents per tier as the table maps them"
"$TIERCTL" stats tank
"$TIERCTL" stats tank --json | jq -e '.stats | has("name") and has("extent_size_bytes") and has("state") and
	has("tiers") and has("io") and has("migration") and has("last_run") and has("schedule")' \
	>/dev/null || fail "stats --json lacks a member"
assert_eq "SSD used" "$(mapped_extents "$ssd_mm")" "$(stats '.tiers[] | select(.class == "ssd") | .used_extents')"
assert_eq "HDD used" "$(mapped_extents "$hdd_mm")" "$(stats '.tiers[] | select(.class == "hdd") | .used_extents')"
assert_eq "promoted by the move" 3 "$(stats .migration.promoted_extents)"
assert_eq "promoted bytes" $((3 * E)) "$(stats .migration.promoted_bytes)"
assert_eq "no run yet" null "$(stats .last_run)"
assert_eq "state" idle "$(stats .state)"

reads() {
	fio --name=r --filename=$vol --direct=1 --rw=randread --bs=4k --offset=$(($1 * E)) \
		--size=$((3 * E)) --number_ios=600 --randrepeat=0 --output=/dev/null
}
# The window counts whole minutes: start each workload in a fresh one.
next_minute() { sleep $((61 - $(date +%s) % 60)); }

step "a workload on SSD extents only"
next_minute
reads 2
sleep 2
f=$(stats .io.ssd_io_share)
echo "ssd_io_share $f"
# jq, not awk: awk compares a null share as a string, and "null" > "0.8".
stats_test() { "$TIERCTL" stats tank --json --window 1m | jq -e ".stats | $1" >/dev/null; }
stats_test '(.io.ssd_io_share | type) == "number" and .io.ssd_io_share > 0.8' ||
	fail "SSD share $f after SSD-only reads"

step "a workload on HDD extents only"
next_minute
reads 10
sleep 2
f=$(stats .io.ssd_io_share)
echo "ssd_io_share $f"
stats_test '(.io.ssd_io_share | type) == "number" and .io.ssd_io_share < 0.2' ||
	fail "SSD share $f after HDD-only reads"

step "history and plot"
"$TIERCTL" stats tank --history 10m --step 1m
n=$("$TIERCTL" stats tank --json --history 10m --step 1m | jq '.stats.history | length')
assert_eq "history intervals" 10 "$n"
moved=$("$TIERCTL" stats tank --json --history 10m --step 1m | jq '[.stats.history[].promoted_bytes] | add')
assert_eq "moves in the history" $((3 * E)) "$moved"
if command -v gnuplot >/dev/null; then
	tierctl_ok stats tank --history 10m --plot /tmp/stats.svg
	grep -q "<svg" /tmp/stats.svg || fail "the plot is not an SVG"
else
	fail "gnuplot is missing (scripts/install-deps installs gnuplot-nox)"
fi
step "advise: the prediction for the pool's own SSD is what tiering then serves"
# A pool of its own, so that its heat is this workload's alone: twelve
# extents, the k-th read 50 k times, more than its small SSD holds.
hdd2=$(vm_loop_create 128M)
ssd2=$(vm_loop_create 40M)
tierctl_ok pool create tank2 --hdd "$hdd2"
tierctl_ok tier attach tank2 --ssd "$ssd2" --no-grow
skewed() {
	local jobs=() k
	for k in $(seq 1 12); do
		jobs+=(--name=e$k --offset=$((k * E)) --size=$E --number_ios=$((50 * k)))
	done
	fio --filename=/dev/mapper/tank2 --direct=1 --rw=randread --bs=4k --randrepeat=0 \
		--output=/dev/null "${jobs[@]}"
}
skewed
sleep 3
"$TIERCTL" advise tank2
advice() { "$TIERCTL" advise tank2 --json | jq -r "$1"; }
predicted=$(advice '.advice.points[] | select(.current) | .ssd_io_share')
echo "predicted SSD share $predicted"
awk -v p="$predicted" 'BEGIN { exit !(p > 0.3 && p < 0.95) }' ||
	fail "prediction $predicted: the workload should overflow the SSD, not fill it or miss it"
assert_eq "a run would promote" "$(advice .advice.promoted_bytes)" \
	"$("$TIERCTL" tier now tank2 --dry-run --json | jq .plan.promoted_bytes)"
"$TIERCTL" advise tank2 --ssd-size 0,1G --json | jq -e '.advice.points | length == 3 and
	.[0].ssd_io_share == 0 and .[1].current and .[2].ssd_io_share > 0.99' >/dev/null ||
	fail "advise --ssd-size 0,1G: $("$TIERCTL" advise tank2 --ssd-size 0,1G --json)"
json_save advice advise tank2
json_save advice advise tank2 --ssd-size 0,1G
json_check
tierctl_ok advise tank2 --plot /tmp/advise.svg
grep -q "<svg" /tmp/advise.svg || fail "the advise plot is not an SVG"
tierctl_ok tier now tank2 --wait
# The I/Os each tier served since the run, from the counters before and after.
served() { "$TIERCTL" stats tank2 --json | jq -r '.stats.io | "\(.ssd_io_share // 0) \(.reads + .writes)"'; }
read -r f0 n0 <<<"$(served)"
skewed
sleep 3
read -r f1 n1 <<<"$(served)"
measured=$(awk -v f0="$f0" -v n0="$n0" -v f1="$f1" -v n1="$n1" \
	'BEGIN { if (n1 > n0) printf "%.4f", (f1 * n1 - f0 * n0) / (n1 - n0); else print "null" }')
echo "measured SSD share $measured, predicted $predicted"
awk -v p="$predicted" -v m="$measured" 'BEGIN { d = p - m; exit !(m != "null" && d <= 0.05 && d >= -0.05) }' ||
	fail "the SSD served $measured of the I/O after tiering, predicted $predicted"
tierd_stop TERM
echo "stats: ok"
