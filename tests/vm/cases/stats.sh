#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tierctl stats: the extents each tier uses match what `dmsetup table` maps,
# and the share of I/O served by the SSD follows a workload that touches only
# SSD-mapped extents (above 0.8), then only HDD-mapped ones (below 0.2); the
# history and the plot cover moves too.
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
tierd_stop TERM
echo "stats: ok"
