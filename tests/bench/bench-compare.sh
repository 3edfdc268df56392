#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-compare: tierd side by side with HDD-only, SSD-only, lvmcache (dm-cache,
# smq) and bcache, on identical emulated devices, in the test VM. Not part of
# the test run: it takes over an hour. docs/benchmarks.md has the
# results, the method and what the numbers mean.
#
#   tests/bench/bench-compare.sh           the whole benchmark (~70 min)
#   tests/bench/bench-compare.sh --quick   a short smoke run (4K random reads only)
#   tests/bench/bench-compare.sh --here    what the VM runs (needs device-mapper)
#
# Environment: TIERD_BUILD_DIR (default build/, built with scripts/build when
# unset), TIERD_BENCH_OUT (results; default $TIERD_BUILD_DIR/bench-compare).
# Parts of a run, to redo one: TIERD_BENCH_SKEWS ("z100 z90 zipf"),
# TIERD_BENCH_PROFILES (beyond 4K random read), TIERD_BENCH_EXTENT_MB (tierd's
# extent size, 4 by default; 1, 2 or 4), TIERD_BENCH_PHASE_C (0: no
# caches beyond 4K random read), TIERD_BENCH_REPS (steady-state runs per
# configuration), TIERD_BENCH_ONLY ("refs" (HDD-only and SSD-only),
# "overhead", "seq", "profiles", "tierd", "auto", "slice", "lvmcache",
# "bcache": only those; their 4K random reads, and the caches' other
# profiles unless quick; "profiles-pieces": phase B's profiles under tierd
# without and with --piece-heat in turn, "tierd" and "pieces" in
# results.tsv).
# "slice" is not in the whole run: tierd over a dm-cache (smq) of the HDD
# tier, the SSD split between tierd's SSD tier and the cache
# (TIERD_BENCH_SLICE_MB of cache data, 44 by default), to compare the
# kernel's cache for scattered hot blocks with finer placement. "auto":
# tierd with schedule auto instead of a tier now, WARM_AUTO seconds from
# cold (TIERD_BENCH_WARM_AUTO, 90); the whole run has it after "tierd".
# TIERD_BENCH_PIECE_HEAT=0 starts tierd with --piece-heat=no: its runs move
# whole extents only (=1 passes --piece-heat; unset, tierd's default: on). TIERD_BENCH_VERBOSE=1 starts it with --verbose: tierd.log
# then has each batch's timing (copy, stall, commit).
# TIERD_BENCH_PIECE_COPY=held|mirror starts it with --piece-copy, and
# TIERD_BENCH_PIECE_SIZE (4K, 16K, ...) with --piece-size (tierd's defaults
# when unset). TIERD_BENCH_SEEDS=replay runs every fio job on fio's default
# seed, each replaying the one before it (fresh, the default: a seed each).
# The report (Markdown tables and an SVG chart) is written to the results
# folder by tests/bench/compare/report.py.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

# ---- the parameters (docs/benchmarks.md explains each choice) ---------------
DELAY_MS=8          # dm-delay on each RAID6 member: a 7,200 rpm disk's access time
MEMBER_MB=96        # 6 RAID6 members of this size: 4 x 96 MiB of data
SSD_MB=96           # the SSD tier, and every cache's SSD: the same device size
EXTENT_MB=${TIERD_BENCH_EXTENT_MB:-4} # tierd's extent size (pool create --extent-size)
SIZE_MB=352         # what every configuration's fio jobs address (88 x 4 MiB)
QD=16               # one fio job, libaio, this many I/Os in flight
RUN=6               # seconds measured per steady-state fio job (after RAMP)
REPS=2              # steady-state jobs per configuration, each followed by a reference
RAMP=2
WARM=45             # cold start to steady state: fio with a 5 s IOPS log
SLICE=5
CACHE_SLICE_MB=${TIERD_BENCH_SLICE_MB:-44} # "slice": cache data; 4 MiB of its metadata
WARM_AUTO=${TIERD_BENCH_WARM_AUTO:-90} # "auto": cold start to steady state, no tier now
TRIGGER=10          # tierd: the on-demand tiering run starts this far into WARM
WARM_B=20           # profiles beyond 4K random read: warm-up before tiering
WARM_C=30           # ... and for the caches, which only learn while loaded
PHASE_C=1           # the caches on the profiles beyond 4K random read
# fresh: each fio job draws its offsets from a seed of its own, the same
# hot set in another order. replay: fio's default seed for every job, so
# each job replays the one before it I/O for I/O, and a cache that kept
# the blocks one run missed finds them all in the next (runs before
# 2026-12-07 were made so; docs/benchmarks.md, "Runs that replay").
SEEDS=${TIERD_BENCH_SEEDS:-fresh}

# zipf's third field pins where its hot blocks lie: fio otherwise derives
# that from the job's seed, and every job here has a seed of its own (SEEDS).
declare -A SKEWS=(
	[z100]="zoned:100/10:0/90"
	[z90]="zoned:90/10:10/90"
	[zipf]="zipf:1.2:0"
)
SKEW_ORDER=(z100 z90 zipf)
declare -A PROFILES=(
	[rr4k]="--rw=randread --bs=4k"
	[rw4k]="--rw=randwrite --bs=4k"
	[sr64k]="--rw=read --bs=64k"
	[sw64k]="--rw=write --bs=64k"
	[mix8k]="--rw=randrw --rwmixread=70 --bs=8k"
	[sql90]="--rw=randrw --rwmixread=90 --bs=8k"
	[sql80]="--rw=randrw --rwmixread=80 --bs=8k"
)
# Beyond 4K random reads: random profiles under zoned:90/10:10/90, sequential
# ones over the whole range (a skew means nothing to them).
PROFILES_B=(rw4k mix8k sql90 sql80 sr64k sw64k)
PROFILES_C=(rw4k mix8k sql90 sql80)
SKEW_B=z90

quick() {
	RUN=4 RAMP=1 WARM=30 TRIGGER=5 PHASE_C=0 REPS=1
	PROFILES_B=()
}

# For trying the script out: a subset (space-separated names).
overrides() {
	# shellcheck disable=SC2206
	[ -z "${TIERD_BENCH_SKEWS:-}" ] || SKEW_ORDER=($TIERD_BENCH_SKEWS)
	# shellcheck disable=SC2206
	[ -z "${TIERD_BENCH_PROFILES+x}" ] || PROFILES_B=($TIERD_BENCH_PROFILES) PROFILES_C=($TIERD_BENCH_PROFILES)
	[ -z "${TIERD_BENCH_PHASE_C:-}" ] || PHASE_C=$TIERD_BENCH_PHASE_C
	[ -z "${TIERD_BENCH_REPS:-}" ] || REPS=$TIERD_BENCH_REPS
}

# ---- in the VM ---------------------------------------------------------------

story() {
	: "${TIERD_BUILD_DIR:?}"
	tierd=$TIERD_BUILD_DIR/tierd/tierd tierctl=$TIERD_BUILD_DIR/tierctl/tierctl
	out=${TIERD_BENCH_GUEST_OUT:-/run/vm}
	mkdir -p "$out/raw"
	work=$(mktemp -d /tmp/bench.XXXXXX)
	export TIERD_SOCKET=$work/tierd.sock
	results=$out/results.tsv
	: >"$results"
	loops=() delays=() ssd="" ssdonly="" md=/dev/md/tierdbench tierd_pid="" cur=""
	cleanup() {
		set +e
		teardown_current
		[ -n "$tierd_pid" ] && kill "$tierd_pid" && wait "$tierd_pid" 2>/dev/null
		[ -e $md ] && mdadm --stop $md >/dev/null 2>&1
		for dev in "${delays[@]}"; do dmsetup remove "$dev" 2>/dev/null; done
		for dev in "${loops[@]}" $ssd $ssdonly; do losetup -d "$dev" 2>/dev/null; done
	}
	trap cleanup EXIT
	local m
	for m in dm-delay raid456 dm-cache dm-cache-smq bcache; do
		modprobe -q -d "${TIERD_VM_KERNEL_TREE:-/}" "$m" 2>/dev/null || modprobe -q "$m" ||
			echo "bench: cannot load $m" >&2
	done

	log "machine: $(nproc) vCPU, $(awk '/MemTotal/ { print int($2 / 1024) " MiB" }' /proc/meminfo), kernel $(uname -r)"
	{
		echo "kernel	$(uname -r)"
		echo "guest_cpus	$(nproc)"
		echo "fio	$(fio --version)"
		echo "lvm	$(lvm version 2>/dev/null | awk '/LVM version/ { print $3 }')"
		echo "make-bcache	$(dpkg-query -W -f='${Version}' bcache-tools 2>/dev/null || echo none)"
		echo "params	delay_ms=$DELAY_MS member_mb=$MEMBER_MB ssd_mb=$SSD_MB size_mb=$SIZE_MB qd=$QD run=$RUN ramp=$RAMP warm=$WARM slice=$SLICE trigger=$TRIGGER warm_b=$WARM_B warm_c=$WARM_C extent_mb=$EXTENT_MB warm_auto=$WARM_AUTO seeds=$SEEDS"
	} >"$out/machine.tsv"

	devices_up

	# TIERD_BENCH_ONLY: run some parts alone (to redo them after a failure):
	# "overhead" (the volume against the raw SSD, concurrent runs), "seq"
	# (64K sequential reads of a fresh volume beside md), "profiles" (tierd
	# on the profiles beyond 4K random read, phase B), CONFIG
	# (tierd, lvmcache or bcache: its 4K random reads and, unless quick, its
	# other profiles).
	if [ -n "${TIERD_BENCH_ONLY:-}" ]; then
		local part i
		for part in $TIERD_BENCH_ONLY; do
			case "$part" in
			overhead)
				# The hot tenth placed on the SSD tier by hand.
				[ -n "$tierd_pid" ] || tierd_up
				tierd_pool
				"$tierctl" extent move bench 0 $((36 / EXTENT_MB)) --tier ssd >/dev/null
				concurrent
				tierd_pool_destroy ;;
			seq)
				[ -n "$tierd_pid" ] || tierd_up
				tierd_pool
				concurrent_seq
				tierd_pool_destroy ;;
			profiles)
				[ -n "$tierd_pid" ] || tierd_up
				tierd_profiles ;;
			profiles-pieces)
				# What piece heat costs or buys beyond 4K random reads,
				# in one boot: each profile of phase B under tierd
				# without --piece-heat ("tierd"), then with ("pieces"),
				# each beside HDD-only and SSD-only.
				for p in "${PROFILES_B[@]}"; do
					s=$(profile_skew "$p")
					for cfg in tierd pieces; do
						tierd_down
						TIERD_BENCH_PIECE_HEAT=$([ $cfg = pieces ] && echo 1 || echo 0) tierd_up
						tierd_pool
						warm_fixed "$cfg" "$p" "$s" /dev/mapper/bench "$WARM_B"
						tierd_tier_now "$p" "$s"
						measure_paired "$cfg" "$p" "$s" /dev/mapper/bench hdd ssd
						tierd_record "$p" "$s" "$cfg"
						tierd_pool_destroy
					done
				done ;;
			refs)
				for skew in "${SKEW_ORDER[@]}"; do
					for i in $(seq "$REPS"); do
						measure hdd rr4k "$skew" "$mddev" "r$i"
						measure ssd rr4k "$skew" "$ssdonly" "r$i"
					done
				done ;;
			tierd|slice|auto)
				[ -n "$tierd_pid" ] || tierd_up
				for skew in "${SKEW_ORDER[@]}"; do
					if [ "$part" = slice ]; then
						slice_pool || { skipped slice "setup failed"; teardown_current; break; }
					else
						tierd_pool
					fi
					if [ "$part" = auto ]; then
						auto_warm "$skew"
					else
						warm_run "$part" rr4k "$skew" /dev/mapper/bench "$TRIGGER"
					fi
					measure_paired "$part" rr4k "$skew" /dev/mapper/bench ssd
					tierd_record rr4k "$skew" "$part"
					[ "$part" != slice ] || slice_record rr4k "$skew"
					teardown_current
				done ;;
			lvmcache|bcache)
				for skew in "${SKEW_ORDER[@]}"; do
					setup_$part || { skipped "$part" "setup failed"; teardown_current; break; }
					warm_run "$part" rr4k "$skew" "$cachedev" ""
					measure_paired "$part" rr4k "$skew" "$cachedev" ssd
					record_$part rr4k "$skew"
					teardown_current
				done
				[ "$PHASE_C" = 1 ] || continue
				for p in "${PROFILES_C[@]}"; do
					s=$(profile_skew "$p")
					setup_$part || { skipped "$part" "setup failed"; teardown_current; break; }
					warm_fixed "$part" "$p" "$s" "$cachedev" "$WARM_C"
					measure_paired "$part" "$p" "$s" "$cachedev" hdd ssd
					record_$part "$p" "$s"
					teardown_current
				done ;;
			esac
		done
		log "done"
		return 0
	fi
	# Phase A: 4K random reads, three skews, five configurations.
	for skew in "${SKEW_ORDER[@]}"; do
		for i in $(seq "$REPS"); do
			measure hdd rr4k "$skew" "$mddev" "r$i"
			measure ssd rr4k "$skew" "$ssdonly" "r$i"
		done
	done
	tierd_up
	for skew in "${SKEW_ORDER[@]}"; do
		tierd_pool
		warm_run tierd rr4k "$skew" /dev/mapper/bench "$TRIGGER"
		measure_paired tierd rr4k "$skew" /dev/mapper/bench ssd
		tierd_record rr4k "$skew"
		[ "$skew" = z100 ] && overhead
		tierd_pool_destroy
	done
	tierd_pool
	concurrent_seq
	tierd_pool_destroy
	for skew in "${SKEW_ORDER[@]}"; do
		tierd_pool
		auto_warm "$skew"
		measure_paired auto rr4k "$skew" /dev/mapper/bench ssd
		tierd_record rr4k "$skew" auto
		tierd_pool_destroy
	done
	for cfg in lvmcache bcache; do
		for skew in "${SKEW_ORDER[@]}"; do
			setup_$cfg || { skipped "$cfg" "setup failed"; teardown_current; break; }
			warm_run "$cfg" rr4k "$skew" "$cachedev" ""
			measure_paired "$cfg" rr4k "$skew" "$cachedev" ssd
			record_$cfg rr4k "$skew"
			teardown_current
		done
	done

	# Phase B: the other profiles, HDD-only, SSD-only and tierd.
	tierd_profiles

	# Phase C: the caches on the same profiles, after a longer warm-up.
	if [ "$PHASE_C" = 1 ]; then
		for cfg in lvmcache bcache; do
			for p in "${PROFILES_C[@]}"; do
				s=$(profile_skew "$p")
				setup_$cfg || { skipped "$cfg" "setup failed"; teardown_current; break; }
				warm_fixed "$cfg" "$p" "$s" "$cachedev" "$WARM_C"
				measure_paired "$cfg" "$p" "$s" "$cachedev" hdd ssd
				record_$cfg "$p" "$s"
				teardown_current
			done
		done
	fi
	log "done"
}

# tierd on every profile of PROFILES_B: a fresh pool, a warm-up with the
# workload, one on-demand tiering run, then the steady state beside HDD-only
# and SSD-only.
tierd_profiles() {
	local p s
	for p in "${PROFILES_B[@]}"; do
		s=$(profile_skew "$p")
		tierd_pool
		warm_fixed tierd "$p" "$s" /dev/mapper/bench "$WARM_B"
		tierd_tier_now "$p" "$s"
		measure_paired tierd "$p" "$s" /dev/mapper/bench hdd ssd
		tierd_record "$p" "$s"
		tierd_pool_destroy
	done
}

log() { echo "bench [$(date +%T)] $*"; }

skipped() { echo "skip	$1	$2" >>"$out/skipped.tsv"; log "SKIP $1: $2"; }

profile_skew() {
	case "$1" in
	sr64k|sw64k) echo none ;;
	*) echo "$SKEW_B" ;;
	esac
}

devices_up() {
	local i dev size
	log "HDD tier: md RAID6 over 6 x ${MEMBER_MB} MiB tmpfs loops, each behind dm-delay ${DELAY_MS} ms"
	mkdir -p /tmp/loops
	for i in 0 1 2 3 4 5; do
		truncate -s ${MEMBER_MB}M /tmp/loops/hdd$i.img
		dev=$(losetup --find --show /tmp/loops/hdd$i.img)
		loops+=("$dev")
		size=$(blockdev --getsz "$dev")
		echo "0 $size delay $dev 0 $DELAY_MS" | dmsetup create "bench-hdd$i"
		delays+=("bench-hdd$i")
	done
	# Fresh zero-filled members have consistent (zero) parity: no resync.
	mdadm --create $md --run --quiet --assume-clean --level=6 --chunk=64 --raid-devices=6 \
		--metadata=1.2 /dev/mapper/bench-hdd[0-5]
	mddev=$(readlink -f $md)
	truncate -s ${SSD_MB}M /tmp/loops/ssd.img
	ssd=$(losetup --find --show /tmp/loops/ssd.img)
	# SSD-only: the same kind of device as the SSD tier, large enough for the
	# whole range.
	truncate -s ${SIZE_MB}M /tmp/loops/ssdonly.img
	ssdonly=$(losetup --find --show /tmp/loops/ssdonly.img)
	log "md $mddev ($(($(blockdev --getsize64 "$mddev") / 1048576)) MiB), SSD $ssd (${SSD_MB} MiB), SSD-only $ssdonly (${SIZE_MB} MiB)"
	echo "devices	md=$mddev md_mb=$(($(blockdev --getsize64 "$mddev") / 1048576)) ssd=$ssd ssdonly=$ssdonly" >>"$out/machine.tsv"
}

# fio_job NAME DEV PROFILE SKEW [FIO ARGS...]
fio_job() {
	local name=$1 dev=$2 prof=$3 skew=$4
	shift 4
	local dist=()
	[ -z "${SKEWS[$skew]:-}" ] || dist=(--random_distribution="$(skew_spec "$skew")")
	# shellcheck disable=SC2086,SC2046
	fio --name="$name" --filename="$dev" --direct=1 --ioengine=libaio --iodepth=$QD \
		--size=${SIZE_MB}M --offset=0 --norandommap --time_based \
		--unified_rw_reporting=mixed --output-format=json \
		${PROFILES[$prof]} "${dist[@]}" $(fio_seed) "$@"
}

# fio_seed: the seed option of the next fio job, none when SEEDS=replay. A
# counter in the results folder, so that jobs run from subshells count too
# and a run is reproducible.
fio_seed() {
	local n
	[ "$SEEDS" = replay ] && return 0
	n=$(($(cat "$out/.fio-seed" 2>/dev/null || echo 0) + 1))
	echo "$n" >"$out/.fio-seed"
	echo "--randseed=$((1000003 * n))"
}

# skew_spec SKEW: the random_distribution of SKEW (fio's own placement of
# zipf's hot set when SEEDS=replay, as the runs before had it).
skew_spec() {
	if [ "$SEEDS" = replay ] && [ "$1" = zipf ]; then
		echo "zipf:1.2"
	else
		echo "${SKEWS[$1]}"
	fi
}

# cpu_ticks: the guest's CPU ticks in all, tierd's (user and system; 0
# without tierd) and the idle ones, from /proc.
cpu_ticks() {
	local all idle mine=0
	read -r all idle < <(awk '/^cpu / { for (i = 2; i <= NF; i++) t += $i; print t, $5 + $6 }' /proc/stat)
	if [ -n "$tierd_pid" ] && [ -r "/proc/$tierd_pid/stat" ]; then
		# Fields after the command's closing parenthesis: utime is the 12th, stime the 13th.
		mine=$(sed 's/.*) //' "/proc/$tierd_pid/stat" | awk '{ print $12 + $13 }')
	fi
	echo "$all $mine $idle"
}

# measure CONFIG PROFILE SKEW DEV TAG: steady state, one line in results.tsv:
# config, profile, skew, tag, IOPS, mean and p99 completion latency (us).
measure() {
	local cfg=$1 prof=$2 skew=$3 dev=$4 tag=$5 json cpu0 cpu1
	json=$out/raw/$cfg-$prof-$skew-$tag.json
	cpu0=$(cpu_ticks)
	fio_job "$cfg" "$dev" "$prof" "$skew" --ramp_time=$RAMP --runtime=$RUN >"$json"
	cpu1=$(cpu_ticks)
	# Under TCG every I/O is CPU work: what tierd's own work takes of it shows.
	awk -v a="$cpu0" -v b="$cpu1" -v c="$cfg" -v p="$prof" -v s="$skew" -v t="$tag" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		all = y[1] - x[1]; if (all <= 0) exit
		printf "%s\t%s\t%s\t%s\t%.1f\t%.1f\n", c, p, s, t, 100 * (y[2] - x[2]) / all,
			100 * (y[3] - x[3]) / all
	}' | tee -a "$out/cpu.tsv" | awk -F'\t' '{ printf "bench   CPU during the run: tierd %s%%, idle %s%% (of all guest CPUs)\n", $5, $6 }'
	jq -r --arg c "$cfg" --arg p "$prof" --arg s "$skew" --arg t "$tag" '.jobs[0].mixed |
		[$c, $p, $s, $t, (.iops | floor), (.clat_ns.mean / 1000 | floor),
		 ((.clat_ns.percentile["99.000000"] // 0) / 1000 | floor)] | @tsv' \
		"$json" | tee -a "$results" | sed 's/^/bench   /'
}

# measure_paired CONFIG PROFILE SKEW DEV REF...: REPS rounds of CONFIG, each
# followed by the references (hdd, ssd) on the same workload. The host's load
# drifts (TCG shares its CPUs): adjacent runs make fair ratios.
measure_paired() {
	local cfg=$1 prof=$2 skew=$3 dev=$4 i ref
	shift 4
	for i in $(seq "$REPS"); do
		measure "$cfg" "$prof" "$skew" "$dev" "r$i"
		for ref in "$@"; do
			case "$ref" in
			hdd) measure hdd "$prof" "$skew" "$mddev" "$cfg-r$i" ;;
			ssd) measure ssd "$prof" "$skew" "$ssdonly" "$cfg-r$i" ;;
			esac
		done
	done
}

# warm_run CONFIG PROFILE SKEW DEV TRIGGER: from a cold start, WARM seconds of
# the workload with its IOPS logged per SLICE; for tierd, an on-demand tiering
# run starts TRIGGER seconds in.
warm_run() {
	local cfg=$1 prof=$2 skew=$3 dev=$4 trigger=$5 bg="" t0
	local base=$out/raw/warm-$cfg-$prof-$skew
	rm -f "$base"_iops.*.log
	log "$cfg $prof $skew: ${WARM} s from cold${trigger:+, tier now at ${trigger} s}"
	t0=$(date +%s.%N)
	if [ -n "$trigger" ]; then
		(
			sleep "$trigger"
			t1=$(date +%s.%N)
			"$tierctl" tier now bench --wait >"$base.tiering.txt" 2>&1 </dev/null || echo "tier now failed: $?" >>"$base.tiering.txt"
			t2=$(date +%s.%N)
			awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "trigger_s=%.1f done_s=%.1f\n", b - a, c - a }' >"$base.times"
		) &
		bg=$!
	fi
	fio_job "$cfg" "$dev" "$prof" "$skew" --runtime=$WARM \
		--write_iops_log="$base" --log_avg_msec=$((SLICE * 1000)) >"$base.json"
	[ -z "$bg" ] || wait "$bg"
	# One line per slice: end of the slice (s), IOPS (reads and writes).
	cat "$base"_iops.*.log | awk -F', *' '{ s[$1] += $2 } END { for (t in s) print t / 1000, s[t] }' |
		sort -n >"$base.slices"
	[ ! -e "$base.times" ] || cat "$base.times"
	tr '\n' ' ' <"$base.slices" | sed 's/^/bench   slices: /; s/$/\n/'
}

# warm_fixed CONFIG PROFILE SKEW DEV SECONDS: load before the measurement.
warm_fixed() {
	log "$1 $2 $3: warm-up ${5} s"
	fio_job "$1" "$4" "$2" "$3" --runtime="$5" >"$out/raw/warm-$1-$2-$3.json"
}

# ---- tierd -----------------------------------------------------------------

tierd_up() {
	local opts=()

	case "${TIERD_BENCH_PIECE_HEAT:-}" in
	1) opts=(--piece-heat) ;;
	0) opts=(--piece-heat=no) ;;
	esac
	[ "${TIERD_BENCH_VERBOSE:-0}" = 1 ] && opts+=(--verbose)
	[ -z "${TIERD_BENCH_PIECE_COPY:-}" ] || opts+=(--piece-copy "$TIERD_BENCH_PIECE_COPY")
	[ -z "${TIERD_BENCH_PIECE_SIZE:-}" ] || opts+=(--piece-size "$TIERD_BENCH_PIECE_SIZE")
	"$tierd" --state-dir "$work/state" --socket "$TIERD_SOCKET" --sample-interval 1 \
		--policy-dir "$TIERD_SOURCE_DIR/policies" "${opts[@]}" 2>>"$out/tierd.log" &
	tierd_pid=$!
	local i
	for i in $(seq 100); do "$tierctl" pool list >/dev/null 2>&1 && return 0; sleep 0.1; done
	echo "bench: tierd did not start" >&2
	return 1
}

tierd_down() {
	[ -n "$tierd_pid" ] || return 0
	kill "$tierd_pid"
	wait "$tierd_pid" 2>/dev/null || true
	tierd_pid=""
}

tierd_pool() {
	wipefs -qa "$mddev" "$ssd"
	"$tierctl" pool create bench --hdd "$mddev" --extent-size "${EXTENT_MB}M" >/dev/null
	# Like a cache, the SSD adds no capacity: it only holds hot extents.
	"$tierctl" tier attach bench --ssd "$ssd" --no-grow >/dev/null
	# 'tier now' is asked for now: copy at full speed even under load (the
	# default, throttled, moves one extent per 5 busy seconds).
	"$tierctl" schedule set bench --io-awareness off >/dev/null
	cur=tierd
}

tierd_tier_now() {
	local t0 t1
	t0=$(date +%s.%N)
	"$tierctl" tier now bench --wait >"$out/raw/tiering-$1-$2.txt" 2>&1 </dev/null
	t1=$(date +%s.%N)
	log "tierd $1 $2: tier now --wait took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
}

# What the run moved and the SSD's share of I/O afterwards.
tierd_record() {
	local base=$out/raw/${3:-tierd}-$1-$2
	"$tierctl" runs bench --json >"$base.runs.json" || true
	"$tierctl" stats bench --window 1m --json >"$base.stats.json" || true
	"$tierctl" pool show bench --json >"$base.pool.json" || true
	jq -r '(if type == "array" then .[0] else .runs[0] end) | "bench   run: \(.result), \(.promoted_extents) promoted, \(.demoted_extents) demoted, \(.started_at) .. \(.ended_at)"' "$base.runs.json" || true
	jq -r '"bench   SSD share of I/O in the last minute: \(.stats.io.ssd_io_share)"' "$base.stats.json" || true
}

# Pieces out (a run with --piece-heat placed them) are brought home before
# extents of the range move whole: a split extent moves whole only then.
tierd_pieces_home() { # FIRST COUNT
	local out
	out=$("$tierctl" pool show bench --json | jq '.pool.pieces.pieces // 0')
	[ "$out" = 0 ] || "$tierctl" extent move bench "$1" "$2" --pieces all --tier hdd >/dev/null
}

tierd_pool_destroy() {
	"$tierctl" pool destroy bench --yes --force >/dev/null
	cur=""
}

# With the data on the SSD tier, the volume against the raw device: 4K random
# reads over the first 32 MiB, which the zoned:100/10:0/90 run made hot. The
# two alternate three times; the report takes the medians.
# tierd from a cold pool under schedule auto, no tier now: the warm-up is
# WARM_AUTO seconds, and a run auto started is aborted at its end, so that
# the steady state is measured without a copy under way.
auto_warm() {
	"$tierctl" schedule set bench auto >/dev/null
	WARM=$WARM_AUTO warm_run auto rr4k "$1" /dev/mapper/bench ""
	"$tierctl" schedule set bench manual >/dev/null
	"$tierctl" job abort bench >/dev/null 2>&1 || true
}

overhead() {
	local i saved=$SIZE_MB
	tierd_pieces_home 0 $((32 / EXTENT_MB))
	"$tierctl" extent move bench 0 $((32 / EXTENT_MB)) --tier ssd >/dev/null
	SIZE_MB=32
	for i in 1 2 3; do
		measure ovh-tierd rr4k uniform /dev/mapper/bench "r$i"
		measure ovh-ssd rr4k uniform "$ssdonly" "r$i"
	done
	SIZE_MB=$saved
	concurrent
}

# The same comparisons with both jobs running at the same time, one on the
# volume and one on the SSD-only device: whatever load the host puts on the
# emulated CPUs, both see it at the same moments. Lines: conc-tierd and
# conc-ssd, skew uniform (32 MiB on the SSD tier) or z100 (the whole range).
concurrent() {
	local i skew json size dist
	for skew in uniform z100; do
		for i in 1 2 3; do
			json=$out/raw/conc-rr4k-$skew-c$i.json
			size=${SIZE_MB}M dist=()
			[ "$skew" = uniform ] && size=32M
			[ -z "${SKEWS[$skew]:-}" ] || dist=(--random_distribution="$(skew_spec "$skew")")
			# shellcheck disable=SC2046
			fio --direct=1 --ioengine=libaio --iodepth=$QD --rw=randread --bs=4k \
				--size="$size" --offset=0 --norandommap --time_based --runtime=$RUN \
				--ramp_time=$RAMP "${dist[@]}" $(fio_seed) --output-format=json \
				--name=conc-tierd --filename=/dev/mapper/bench \
				--name=conc-ssd --filename="$ssdonly" >"$json"
			jq -r --arg s "$skew" --arg t "c$i" '.jobs[] | [.jobname, "rr4k", $s, $t,
				(.read.iops | floor), (.read.clat_ns.mean / 1000 | floor),
				((.read.clat_ns.percentile["99.000000"] // 0) / 1000 | floor)] | @tsv' \
				"$json" | tee -a "$results" | sed 's/^/bench   /'
		done
	done
}

# 64K sequential reads on a fresh tierd volume (every extent on the HDD
# tier) and on the md device, at the same time: the cost of the volume's
# linear mapping, with the host's load the same for both. Reads only: writes
# to the md device would overwrite the pool. Lines conc-tierd and conc-hdd.
concurrent_seq() {
	local i json
	for i in 1 2 3; do
		json=$out/raw/conc-sr64k-c$i.json
		fio --direct=1 --ioengine=libaio --iodepth=$QD --rw=read --bs=64k \
			--size=${SIZE_MB}M --offset=0 --time_based --runtime=$RUN \
			--ramp_time=$RAMP --output-format=json \
			--name=conc-tierd --filename=/dev/mapper/bench \
			--name=conc-hdd --filename="$mddev" >"$json"
		jq -r --arg t "c$i" '.jobs[] | [.jobname, "sr64k", "none", $t,
			(.read.iops | floor), (.read.clat_ns.mean / 1000 | floor),
			((.read.clat_ns.percentile["99.000000"] // 0) / 1000 | floor)] | @tsv' \
			"$json" | tee -a "$results" | sed 's/^/bench   /'
	done
}

# ---- slice: tierd over a dm-cache of its HDD tier -------------------------------

# The SSD in three: the cache's metadata (4 MiB), its data (CACHE_SLICE_MB)
# and tierd's SSD tier (the rest). The pool's HDD tier is the md device
# behind dm-cache: tierd moves hot extents whole, the cache takes the hot
# 32 KiB blocks of the extents left on the HDD tier.
slice_pool() {
	local ssd_s meta_s=8192 data_s tier_s md_s
	ssd_s=$(blockdev --getsz "$ssd")
	data_s=$((CACHE_SLICE_MB * 2048))
	tier_s=$((ssd_s - meta_s - data_s))
	md_s=$(blockdev --getsz "$mddev")
	wipefs -qa "$mddev" "$ssd"
	cur=slice
	dd if=/dev/zero of="$ssd" bs=1M count=4 oflag=direct status=none
	echo "0 $meta_s linear $ssd 0" | dmsetup create bench-slice-meta &&
	echo "0 $data_s linear $ssd $meta_s" | dmsetup create bench-slice-data &&
	echo "0 $tier_s linear $ssd $((meta_s + data_s))" | dmsetup create bench-slice-tier &&
	echo "0 $md_s cache /dev/mapper/bench-slice-meta /dev/mapper/bench-slice-data $mddev 64 1 writethrough smq 0" |
		dmsetup create bench-slice-cached || return 1
	"$tierctl" pool create bench --hdd /dev/mapper/bench-slice-cached --extent-size "${EXTENT_MB}M" >/dev/null &&
	"$tierctl" tier attach bench --ssd /dev/mapper/bench-slice-tier --no-grow >/dev/null &&
	"$tierctl" schedule set bench --io-awareness off >/dev/null || return 1
	log "slice: tierd's SSD tier $((tier_s / 2048)) MiB, dm-cache $CACHE_SLICE_MB MiB (32 KiB blocks, smq) of its HDD tier"
}

slice_record() {
	dmsetup status bench-slice-cached >"$out/raw/slice-$1-$2.status" || true
	log "slice cache status: $(cat "$out/raw/slice-$1-$2.status")"
}

teardown_slice() {
	"$tierctl" pool destroy bench --yes --force >/dev/null 2>&1 || true
	local d
	for d in bench-slice-cached bench-slice-tier bench-slice-data bench-slice-meta; do
		dmsetup remove "$d" 2>/dev/null || true
	done
	wipefs -qa "$mddev" "$ssd"
}

# ---- lvmcache ----------------------------------------------------------------

setup_lvmcache() {
	export LVM_SYSTEM_DIR=$work/lvm
	mkdir -p "$LVM_SYSTEM_DIR"
	cat >"$LVM_SYSTEM_DIR/lvm.conf" <<-'EOF'
	devices { filter = [ "a|.*|" ] obtain_device_list_from_udev = 0 use_devicesfile = 0 }
	activation { udev_sync = 0 udev_rules = 0 monitoring = 0 }
	global { use_lvmpolld = 0 cache_check_executable = "" cache_repair_executable = "" thin_check_executable = "" }
	backup { backup = 0 archive = 0 }
	EOF
	wipefs -qa "$mddev" "$ssd"
	cur=lvmcache
	{
		pvcreate -ff -y "$mddev" "$ssd" &&
		vgcreate -s 1m bvg "$mddev" "$ssd" &&
		lvcreate -y -n origin -L ${SIZE_MB}m bvg "$mddev" &&
		lvcreate -y -n cmeta -L 8m bvg "$ssd" &&
		lvcreate -y -n cdata -l 100%FREE bvg "$ssd" &&
		lvconvert -y --type cache-pool --poolmetadata bvg/cmeta --poolmetadataspare n \
			--cachepolicy smq --cachemode writethrough bvg/cdata &&
		lvconvert -y --type cache --cachepool bvg/cdata bvg/origin
	} >"$out/raw/lvm-setup.log" 2>&1 || { cat "$out/raw/lvm-setup.log" >&2; return 1; }
	cachedev=/dev/mapper/bvg-origin
	log "lvmcache: $(dmsetup table bvg-origin)"
	lvs -a -o lv_name,lv_size,chunk_size,cache_policy,cache_mode bvg 2>/dev/null | sed 's/^/bench   /' || true
}

record_lvmcache() {
	dmsetup status bvg-origin >"$out/raw/lvmcache-$1-$2.status" || true
	log "lvmcache status: $(cat "$out/raw/lvmcache-$1-$2.status")"
}

teardown_lvmcache() {
	vgchange -an bvg >/dev/null 2>&1 || true
	local d
	for d in $(dmsetup ls 2>/dev/null | awk '/^bvg-/ { print $1 }'); do dmsetup remove "$d" || true; done
	wipefs -qa "$mddev" "$ssd"
}

# ---- bcache --------------------------------------------------------------------

setup_bcache() {
	command -v make-bcache >/dev/null || { echo "bench: make-bcache missing (bcache-tools)" >&2; return 1; }
	[ -e /sys/fs/bcache/register ] || { echo "bench: no bcache in this kernel" >&2; return 1; }
	wipefs -qa "$mddev" "$ssd"
	cur=bcache bdev=none cset=none
	# The backing device gets a bcache superblock and its data moves 8 KiB
	# on: a volume with data on it must be copied off and back.
	# 64 KiB buckets: the kernel refuses a cache of fewer than 513 buckets
	# ("cache device is too small", EPERM), which the default 512 KiB
	# buckets would make of anything under 257 MiB.
	make-bcache --wipe-bcache --bucket 64k -B "$mddev" -C "$ssd" >"$out/raw/bcache-setup.log" 2>&1 ||
		{ cat "$out/raw/bcache-setup.log" >&2; return 1; }
	cset=$(awk '/^Set UUID:/ { print $3; exit }' "$out/raw/bcache-setup.log")
	echo "$ssd" >/sys/fs/bcache/register 2>>"$out/raw/bcache-setup.log" || true
	echo "$mddev" >/sys/fs/bcache/register 2>>"$out/raw/bcache-setup.log" || true
	local i b=""
	for i in $(seq 50); do
		for b in /sys/block/bcache*; do
			[ -e "$b/bcache/state" ] && break 2
		done
		b=""
		sleep 0.2
	done
	[ -n "$b" ] || { dmesg | grep -i bcache >&2; echo "bench: no bcache device appeared" >&2; return 1; }
	bdev=${b##*/}
	[ -d "/sys/fs/bcache/$cset" ] || { dmesg | grep -i bcache >&2; echo "bench: cache set $cset not registered" >&2; return 1; }
	[ "$(cat "$b/bcache/state")" != "no cache" ] || echo "$cset" >"$b/bcache/attach"
	for i in $(seq 50); do
		[ "$(cat "$b/bcache/state")" = clean ] && break
		sleep 0.2
	done
	[ "$(cat "$b/bcache/state")" = clean ] || { dmesg | grep -i bcache >&2; echo "bench: bcache not attached: $(cat "$b/bcache/state")" >&2; return 1; }
	# Standard tuning: do not bypass the cache when the SSD is "congested"
	# (under TCG its latency can exceed the 2 ms default).
	echo 0 >"/sys/fs/bcache/$cset/congested_read_threshold_us"
	echo 0 >"/sys/fs/bcache/$cset/congested_write_threshold_us"
	cachedev=/dev/$bdev
	# shellcheck disable=SC2046
	[ -b "$cachedev" ] || mknod "$cachedev" b $(tr ':' ' ' <"$b/dev")
	log "bcache: $cachedev, state $(cat "$b/bcache/state"), mode $(cat "$b/bcache/cache_mode"), bucket $(cat "/sys/fs/bcache/$cset/bucket_size"), cache set $cset"
	dmesg | grep -i bcache >>"$out/raw/bcache-setup.log" || true
}

record_bcache() {
	local s=/sys/block/$bdev/bcache/stats_total
	echo "hits=$(cat $s/cache_hits) misses=$(cat $s/cache_misses) bypass_hits=$(cat $s/cache_bypass_hits) bypass_misses=$(cat $s/cache_bypass_misses) hit_ratio=$(cat $s/cache_hit_ratio)" \
		>"$out/raw/bcache-$1-$2.status"
	log "bcache stats: $(cat "$out/raw/bcache-$1-$2.status")"
}

teardown_bcache() {
	local b
	for b in /sys/block/bcache*/bcache/stop; do [ -e "$b" ] && echo 1 >"$b"; done
	for b in /sys/fs/bcache/*-*/unregister; do [ -e "$b" ] && echo 1 >"$b"; done
	local i
	for i in $(seq 100); do
		ls -d /sys/fs/bcache/*-* /sys/block/bcache* >/dev/null 2>&1 || break
		sleep 0.2
	done
	wipefs -qa "$mddev" "$ssd"
}

teardown_current() {
	case "$cur" in
	tierd) tierd_pool_destroy ;;
	slice) teardown_slice ;;
	lvmcache) teardown_lvmcache ;;
	bcache) teardown_bcache ;;
	esac
	cur=""
}

# ---- on the host -------------------------------------------------------------

mode=vm
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick; export TIERD_BENCH_QUICK=1; shift ;;
	--here) mode=here; shift ;;
	-h|--help) sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "usage: tests/bench/bench-compare.sh [--quick] [--here]" >&2; exit 2 ;;
	esac
done
[ "${TIERD_BENCH_QUICK:-0}" = 1 ] && quick
overrides

if [ "$mode" = here ]; then
	export TIERD_SOURCE_DIR=${TIERD_SOURCE_DIR:-$root}
	story
	exit 0
fi

cd "$root"
if [ -z "${TIERD_BUILD_DIR:-}" ]; then
	scripts/install-deps
	scripts/build
	export TIERD_BUILD_DIR=$root/build
else
	ninja -C "$TIERD_BUILD_DIR" >/dev/null
fi
export TIERD_SOURCE_DIR=$root
out=${TIERD_BENCH_OUT:-$TIERD_BUILD_DIR/bench-compare}
rm -rf "$out"
mkdir -p "$out"
start=$(date +%s)
{
	echo "host_cpu	$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
	echo "host_cpus	$(nproc)"
	echo "host_kernel	$(uname -r)"
	echo "qemu	$(qemu-system-x86_64 --version | head -n1)"
	# The settings that change what runs, so the report's command redoes it.
	bench_env=()
	for bench_var in TIERD_BENCH_PIECE_HEAT TIERD_BENCH_REPS TIERD_BENCH_PHASE_C \
		TIERD_BENCH_SKEWS TIERD_BENCH_ONLY TIERD_BENCH_EXTENT_MB TIERD_BENCH_PROFILES \
		TIERD_BENCH_SLICE_MB TIERD_BENCH_WARM_AUTO TIERD_BENCH_VERBOSE \
		TIERD_BENCH_PIECE_COPY TIERD_BENCH_PIECE_SIZE TIERD_BENCH_SEEDS; do
		[ -z "${!bench_var:-}" ] || bench_env+=("$bench_var=\"${!bench_var}\"")
	done
	echo "command	${bench_env[*]}${bench_env[*]:+ }tests/bench/bench-compare.sh${TIERD_BENCH_QUICK:+ --quick}"
	echo "date	$(date -u +%Y-%m-%dT%H:%MZ)"
} >"$out/host.tsv"
# The host's load during the run (the VM competes with it for CPU).
( while sleep 10; do echo "$(date +%s) $(cut -d' ' -f1-3 /proc/loadavg)"; done ) >"$out/host-load.txt" &
sampler=$!
trap 'kill $sampler 2>/dev/null' EXIT
# The guest runs a copy: editing the script during a run must not change it.
cp "$here/bench-compare.sh" "$out/.bench-compare.sh"
# A guard against a guest that hangs, not a budget: the whole run with
# TIERD_BENCH_REPS=3 passed an hour on a loaded 2-CPU host (2026-12-07).
guest_rc=0
tests/vm/vm-run --memory 3072 --timeout 10800 --share "$out" --log "$out/console.log" \
	-- bash "$out/.bench-compare.sh" --here || guest_rc=$?
echo "wall_s	$(($(date +%s) - start))" >>"$out/host.tsv"
# A run cut short still reports what it measured, and still fails.
python3 "$here/compare/report.py" "$out" || [ "$guest_rc" -ne 0 ]
if [ "$guest_rc" -ne 0 ]; then
	echo "bench-compare: the guest failed or stopped early (exit $guest_rc, see" \
		"$out/console.log); $out/report.md has the parts that finished" >&2
	exit "$guest_rc"
fi
echo "bench-compare: results in $out (report.md, benchmarks.svg)"
