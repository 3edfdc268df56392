#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-scale: what a pool costs as it grows, measured in the VM
# (tests/vm/vm-run, 8 GiB guest) on loop devices over sparse files on one
# tmpfs: an HDD of N TiB and an SSD of N * 32 GiB (16 TiB + 512 GiB), 4 MiB
# extents, no I/O. For each size, and each build of TIERD_BENCH_BUILDS (so
# that two builds compare within one boot):
#
#   create_s    tierctl pool create over the HDD, then tier attach of the SSD
#               with --no-grow (its space left free for the move below),
#               from the first request to the last reply
#   stop_s      tierd_stop (SIGTERM: heat stored, state closed) until it exited
#   db_bytes    tierd.db (and any -wal or -shm left) after that stop
#   activate_s  tierd started again until `pool show` says active
#   rss_*_mib   tierd's VmRSS (/proc/PID/status) after the create and after
#               the activation
#   show_ms, heat_ms, stats_ms, dry_ms
#               tierctl pool show, heat --top 20, stats and tier now --dry-run,
#               each from start to exit (the best of three)
#   stall_ms    the volume's I/O stall per table swap of a move of 64 extents
#               to the SSD (four batches: tierd's "batch of" lines), median
#               and worst, and prep_ms, the median time the commit of a batch
#               took to prepare before its suspend; each batch's line
#               (commit, suspend, resume, KiB written) goes to stderr
#   move_s      that move of 64 extents from the request to the reply:
#               the copies, and the tables and commits of its four batches
#   idle_cpu    tierd's CPU time (user + system, /proc/PID/stat) over
#               TIERD_BENCH_IDLE_S seconds of an idle pool at the default
#               sample and flush intervals, in % of one core: what heat
#               sampling and flushing cost a pool nobody uses
#
# Usage (on the host, from a build without sanitizers):
#   tests/bench/bench-scale.sh
#   TIERD_BENCH_TIB="1 16 100 200" TIERD_BENCH_BUILDS="build ../base/build" tests/bench/bench-scale.sh
# It boots the VM and runs itself inside it; the results end in a table.
# Environment (TIERD_* reaches the guest):
#   TIERD_BENCH_TIB     HDD sizes in TiB (default "1 16")
#   TIERD_BENCH_BUILDS  meson build directories to compare, absolute or
#                       relative to the source tree (default: TIERD_BUILD_DIR)
#   TIERD_BENCH_OTHERS_TIB  the sizes of TIERD_BENCH_TIB at which the builds
#                       after the first are measured too (default: all): the
#                       first build's growth at every size, the comparison
#                       at fewer
#   TIERD_BENCH_OPTS    tierd's options (default "--sample-interval 86400
#                       --client-timeout 0 --verbose": no heat sample runs
#                       into a timing, a create that holds the loop for over
#                       a minute does not lose its reply to the idle timeout,
#                       and each batch of a move logs its stall)
#   TIERD_BENCH_IDLE_S  seconds of idle CPU measured (default 120; 0: none),
#                       after a minute with the default intervals to settle
#   TIERD_BENCH_MEMORY  guest MiB (default 8192), TIERD_BENCH_TIMEOUT its s
# Absolute numbers under qemu TCG mean little; compare within one run.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/in-vm.sh"
bench_in_vm "${TIERD_BENCH_TIMEOUT:-5400}" "${TIERD_BENCH_MEMORY:-8192}" "${BASH_SOURCE[0]}" "$@"

. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"
TIBS=${TIERD_BENCH_TIB:-1 16}
BUILDS=${TIERD_BENCH_BUILDS:-$TIERD_BUILD_DIR}
OTHERS_TIBS=${TIERD_BENCH_OTHERS_TIB:-$TIBS}
read -r -a OPTS <<<"${TIERD_BENCH_OPTS:---sample-interval 86400 --client-timeout 0 --verbose}"
BIG=/tmp/big
SCALE=/tmp/scale
IDLE_S=${TIERD_BENCH_IDLE_S:-120}
export TIERD_SOCKET=$SCALE/tierd.sock

vm_modprobe loop dm-mod
max=0
for tib in $TIBS; do
	[ "$tib" -gt "$max" ] || continue
	max=$tib
done
mkdir -p $BIG
# tmpfs keeps only the pages written: the limit is only there to be big enough.
mount -t tmpfs -o size=$((max * 2 + 1))T tmpfs $BIG

now() { date +%s.%N; }
since() { awk "BEGIN { printf \"%.3f\", $(now) - $1 }"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# best_ms CMD...: the quickest of three runs, in ms
best_ms() {
	local best= t0 t i
	for i in 1 2 3; do
		t0=$(now)
		"$@" >/dev/null 2>&1 || fail "$*: failed"
		t=$(awk "BEGIN { printf \"%.0f\", ($(now) - $t0) * 1000 }")
		if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
	done
	echo "$best"
}
rss_mib() { awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }

# start [POOL]: tierd on the scale state; waits (as long as a big state
# takes) for it to answer and for POOL to be active; START_S: how long.
start() {
	local t0 i state
	t0=$(now)
	"$TIERD" --state-dir $SCALE/state --socket "$TIERD_SOCKET" \
		--policy-dir "$TIERD_SOURCE_DIR/policies" "${OPTS[@]}" 2>>$SCALE/tierd.log &
	TIERD_PID=$!
	for i in $(seq 36000); do
		kill -0 "$TIERD_PID" 2>/dev/null || { cat $SCALE/tierd.log >&2; fail "tierd exited"; }
		if [ $# -eq 0 ]; then
			"$TIERCTL" pool list >/dev/null 2>&1 && break
		else
			state=$("$TIERCTL" pool show "$1" --json 2>/dev/null | jq -r .pool.state || true)
			[ "$state" = active ] && break
		fi
		sleep 0.1
	done
	[ "$i" -lt 36000 ] || fail "tierd not ready within an hour"
	START_S=$(since "$t0")
}

rows=()
# measure BUILD TIB
measure() {
	local build=$1 tib=$2 label hdd ssd t0 create stop activate db rss1 rss2 extents heat
	local show heatcmd stats dry idle=- ticks hz stall prep move
	label=${build%/build}
	label=${label##*/}
	TIERD=$build/tierd/tierd
	TIERCTL=$build/tierctl/tierctl
	[ -x "$TIERD" ] && [ -x "$TIERCTL" ] || fail "$build: no tierd or tierctl built there"
	rm -rf $SCALE
	mkdir -p $SCALE
	truncate -s "${tib}T" $BIG/hdd.img
	truncate -s "$((tib * 32))G" $BIG/ssd.img
	hdd=$(losetup --find --show $BIG/hdd.img)
	ssd=$(losetup --find --show $BIG/ssd.img)
	step "$label: $tib TiB"
	start
	t0=$(now)
	if ! "$TIERCTL" pool create scale --hdd "$hdd" >/dev/null ||
		! "$TIERCTL" tier attach scale --ssd "$ssd" --no-grow >/dev/null; then
		tail -n 20 $SCALE/tierd.log >&2
		kill -0 "$TIERD_PID" 2>/dev/null || wait "$TIERD_PID" || echo "tierd exited: status $?" >&2
		fail "pool create failed"
	fi
	create=$(since "$t0")
	rss1=$(rss_mib "$TIERD_PID")
	extents=$("$TIERCTL" pool show scale --json | jq -r .pool.total_extents)
	heat=$("$TIERCTL" pool show scale --json | jq -r 'if .pool.heat.enabled then "on" else "off" end')
	t0=$(now)
	tierd_stop
	stop=$(since "$t0")
	db=$(find $SCALE/state -name 'tierd.db*' -printf '%s\n' | awk '{ n += $1 } END { print n }')
	start scale
	activate=$START_S
	rss2=$(rss_mib "$TIERD_PID")
	show=$(best_ms "$TIERCTL" pool show scale)
	heatcmd=$(best_ms "$TIERCTL" heat scale --top 20)
	stats=$(best_ms "$TIERCTL" stats scale)
	dry=$(best_ms "$TIERCTL" tier now scale --dry-run)
	t0=$(now)
	"$TIERCTL" extent move scale 0 64 --tier ssd >/dev/null || fail "extent move failed"
	move=$(since "$t0")
	grep "pool scale: batch of [0-9]* extents: stall" $SCALE/tierd.log >$SCALE/swaps || true
	[ -s $SCALE/swaps ] || fail "the move logged no batch"
	# Where each stall went (commit, suspend, resume), for a figure that surprises.
	sed "s/^/$tib TiB $label: /" $SCALE/swaps >&2
	stall=$(sed -n 's/.*: stall \([0-9.]*\) ms.*/\1/p' $SCALE/swaps | sort -n |
		awk '{ v[NR] = $1 } END { printf "%.0f/%.0f", v[int((NR + 1) / 2)], v[NR] }')
	prep=$(sed -n 's/.*prepared in \([0-9.]*\) ms.*/\1/p' $SCALE/swaps | sort -n |
		awk '{ v[NR] = $1 } END { printf "%s", NR ? sprintf("%.0f", v[int((NR + 1) / 2)]) : "-" }')
	if [ "$IDLE_S" -gt 0 ]; then
		# The same state at the default intervals (the bench's own options
		# keep samples out of the timings above).
		tierd_stop
		OPTS_SAVED=("${OPTS[@]}")
		OPTS=(--client-timeout 0)
		start scale
		OPTS=("${OPTS_SAVED[@]}")
		sleep 60
		hz=$(getconf CLK_TCK)
		ticks=$(cpu_ticks "$TIERD_PID")
		sleep "$IDLE_S"
		ticks=$(($(cpu_ticks "$TIERD_PID") - ticks))
		idle=$(awk "BEGIN { printf \"%.1f%%\", $ticks / $hz / $IDLE_S * 100 }")
	fi
	rows+=("$(printf '%4s %-10s %9s %4s %8.1f %7.1f %10.1f %12s %10s %10s %7s %7s %8s %6s %9s %7s %6.1f %8s' \
		"$tib" "$label" "$extents" "$heat" "$create" "$stop" "$activate" "$db" "$rss1" \
		"$rss2" "$show" "$heatcmd" "$stats" "$dry" "$stall" "$prep" "$move" "$idle")")
	echo "${rows[-1]}"
	"$TIERCTL" pool destroy scale --yes >/dev/null 2>&1 || dmsetup remove scale
	tierd_stop
	losetup -d "$hdd" "$ssd"
	rm -f $BIG/hdd.img $BIG/ssd.img
}

for tib in $TIBS; do
	first=1
	for build in $BUILDS; do
		case $build in
		/*) ;;
		*) build=$TIERD_SOURCE_DIR/$build ;;
		esac
		if [ $first -eq 1 ] || [[ " $OTHERS_TIBS " == *" $tib "* ]]; then
			measure "$build" "$tib"
		fi
		first=0
	done
done
echo
echo "bench-scale: HDD TiB, build, extents, heat, create s, stop s, activate s, tierd.db bytes,"
echo "RSS MiB after create, after activation; pool show, heat, stats, tier now --dry-run ms;"
echo "stall per batch of a move (median/worst) and its commit's preparation ms; the move s;"
echo "idle CPU over ${IDLE_S} s ($(nproc) guest CPUs, $(($(awk '/MemTotal/ { print $2 }' /proc/meminfo) / 1024)) MiB)"
printf '%4s %-10s %9s %4s %8s %7s %10s %12s %10s %10s %7s %7s %8s %6s %9s %7s %6s %8s\n' tib build \
	extents heat create stop activate db_bytes rss_create rss_active show_ms heat_ms stats_ms \
	dry_ms stall_ms prep_ms move_s idle_cpu
printf '%s\n' "${rows[@]}"
