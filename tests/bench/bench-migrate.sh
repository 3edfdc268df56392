#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-migrate: what a live move costs the volume's users, measured in the
# VM (tests/vm/vm-run) on loop devices over sparse tmpfs files, 1 MiB extents.
#
#   (a) The I/O stall of each table swap (suspend start to resume end, as
#       tierd logs it per batch of 16 extents) for pools of 10,000 and 100,000
#       extents, while a QD1 4K random-read job runs on the volume; the job's
#       worst latency is the cross-check (it cannot be below a stall it sat
#       through). A commit writes only the blocks of the extent map that
#       changed (docs/pools.md; tierd logs the KiB): the swap's stall should
#       no longer grow with the pool.
#   (b) Throughput of a move of COUNT extents (the mirror's copy plus the
#       table swaps and commits) against a plain O_DIRECT dd of as many bytes
#       between the same two devices, as a ratio within one run.
#   (c) p99 latency of a 4K random-read job alone, then, for each mode of
#       TIERD_BENCH_C_MODES, the same job while extents move to the SSD and
#       back in that io-awareness mode for the whole of the job. A mode that
#       yields moves little while the reader keeps the volume busy: the
#       extents moved within the job's window are counted and reported.
#
# Usage (on the host, from a build without sanitizers):
#   TIERD_BUILD_DIR=build tests/bench/bench-migrate.sh
# It boots the VM and runs itself inside it; the results end in a summary.
# Environment (TIERD_* reaches the guest):
#   TIERD_BENCH_POOLS        pool sizes in extents for (a) (default "10000 100000")
#   TIERD_BENCH_COUNT        extents per move (default 64, four batches)
#   TIERD_BENCH_RUNTIME      seconds of each random-read job in (c) (default 20)
#   TIERD_BENCH_CYCLES       moves there and back in (a) (default 2: 16 swaps)
#   TIERD_BENCH_IO_AWARENESS tierctl extent move --io-awareness MODE for the
#                            moves of (a) and (b) (default: off, full speed)
#   TIERD_BENCH_C_MODES      the io-awareness modes (c) measures, one reader
#                            each (default "off throttled")
# Absolute numbers under qemu TCG mean little; compare within one run.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/in-vm.sh"
bench_in_vm "${TIERD_BENCH_TIMEOUT:-3000}" "3072" "${BASH_SOURCE[0]}" "$@"

. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"
command -v fio >/dev/null || skip "fio is not installed"
POOLS=${TIERD_BENCH_POOLS:-10000 100000}
COUNT=${TIERD_BENCH_COUNT:-64}
RUNTIME=${TIERD_BENCH_RUNTIME:-20}
C_MODES=${TIERD_BENCH_C_MODES:-off throttled}
CYCLES=${TIERD_BENCH_CYCLES:-2}
E=$((1 << 20))
FIRST=1000 # the moved extents: [FIRST, FIRST + COUNT)
# ---- io-awareness: the mode every move runs in (see the header) ----
move_opts=()
[ -n "${TIERD_BENCH_IO_AWARENESS:-}" ] && move_opts=(--io-awareness "$TIERD_BENCH_IO_AWARENESS")
mode=${TIERD_BENCH_IO_AWARENESS:-full speed}
summary=()
say() {
	echo "$*"
	summary+=("$*")
}

# Heat sampling would add its own work to the timings: not within a run.
tierd_start --sample-interval 86400 --verbose

now() { date +%s.%N; }
# move POOL TIER [OPTIONS]: move the extents; prints the seconds it took.
move() {
	local t0 t1 pool=$1 tier=$2
	shift 2
	[ $# -gt 0 ] || set -- "${move_opts[@]}"
	t0=$(now)
	"$TIERCTL" extent move "$pool" $FIRST $COUNT --tier "$tier" "$@" >/dev/null ||
		fail "move of $pool to $tier failed"
	t1=$(now)
	calc "$t1 - $t0"
}
# stalls FILE: the swaps logged in FILE (tierd's "batch of" lines) in short:
# the stall's spread, and the medians of its parts.
median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] }'; }
stalls() {
	local f=$1
	field() { sed -n "s/.*$1 \([0-9.]*\) ms.*/\1/p" "$f"; }
	printf '%d swaps: stall min %.1f median %.1f max %.1f ms (median suspend %s, commit %s, resume %s ms; median %s KiB written per commit, prepared before the suspend in a median %s ms); swap into the mirrors median %s ms' \
		"$(wc -l <"$f")" "$(field stall | sort -n | head -1)" "$(field stall | median)" \
		"$(field stall | sort -n | tail -1)" "$(field suspend | median)" \
		"$(sed -n 's/.*(commit \([0-9.]*\) ms.*/\1/p' "$f" | median)" "$(field resume | median)" \
		"$(sed -n 's/.*, \([0-9]*\) KiB written).*/\1/p' "$f" | median)" \
		"$(field 'prepared in' | median)" \
		"$(sed -n 's/.*after a \([0-9.]*\) ms stall.*/\1/p' "$f" | median)"
}
calc() { awk "BEGIN { printf \"%.6f\", $* }"; }
# moved POOL: extents the pool has moved so far, both ways.
moved() {
	"$TIERCTL" stats "$1" --json | jq '.stats.migration.promoted_extents + .stats.migration.demoted_extents'
}
# job_wait POOL: until the pool has no job (a killed client leaves its move running).
job_wait() {
	local i
	for i in $(seq 600); do
		[ "$("$TIERCTL" pool show "$1" --json | jq -r .pool.job)" = null ] && return 0
		sleep 1
	done
	fail "the job of pool $1 did not end in 600 s"
}
# randread NAME SECONDS [OPTIONS]: 4K QD1 random reads over the first 2 GiB of
# the volume (the moved extents included), JSON to /tmp/NAME.json. Run it in
# the background (it execs fio, so that $! is fio and a TERM ends it with its
# report written); a background job in a script ignores SIGINT.
randread() {
	local name=$1 secs=$2
	shift 2
	exec fio --name="$name" --filename="$vol" --rw=randread --bs=4k --direct=1 --ioengine=psync \
		--size=$((2048 * E)) --time_based --runtime="$secs" --eta=never \
		--output-format=json --output=/tmp/"$name".json "$@"
}
lat() { # lat NAME: "p99 X ms, p99.9 Y ms, max Z ms, N IOPS" (past what fio said on a TERM)
	jq -r '.jobs[0].read | [.clat_ns.percentile["99.000000"], .clat_ns.percentile["99.900000"],
		.clat_ns.max, .iops] | "p99 \(.[0] / 1e5 | round / 10) ms, p99.9 \(.[1] / 1e5 | round / 10) ms,
		max \(.[2] / 1e5 | round / 10) ms, \(.[3] | floor) IOPS"' <(sed -n '/^{/,$p' /tmp/"$1".json) | tr -s '\n\t' ' '
}

for n in $POOLS; do
	name=b$n
	step "pool of $n extents"
	# A little over n MiB: the metadata area takes some of it.
	hdd=$(vm_loop_create $(((n + 16) * E)))
	ssd=$(vm_loop_create $(((COUNT + 64) * E)))
	src_off=$((4096 * E))
	if [ "$n" = "${POOLS%% *}" ]; then
		# (b)'s reference, before the pool owns the devices: dd between them.
		dd if=/dev/urandom of="$hdd" bs=1M seek=4096 count=$COUNT oflag=direct status=none
		t0=$(now)
		dd if="$hdd" of="$ssd" bs=1M skip=4096 seek=16 count=$COUNT iflag=direct oflag=direct status=none
		t1=$(now)
		dd_s=$(calc "$t1 - $t0")
		dd_mbs=$(calc "$COUNT * 1.048576 / $dd_s")
		wipefs -a -q "$ssd" "$hdd" || true
	fi
	tierctl_ok pool create $name --hdd "$hdd" --extent-size 1M >/dev/null
	tierctl_ok tier attach $name --ssd "$ssd" --no-grow >/dev/null
	vol=/dev/mapper/$name
	extents=$(($(blockdev --getsize64 "$vol") / E))
	dd if=/dev/urandom of="$vol" bs=1M seek=$FIRST count=$COUNT oflag=direct status=none
	vm_drop_caches

	if [ "$n" = "${POOLS%% *}" ]; then
		step "(b) move throughput, $COUNT extents, nothing else running"
		secs=$(move $name ssd)
		mbs=$(calc "$COUNT * 1.048576 / $secs")
		secs_back=$(move $name hdd)
		say "$(printf '(b) %s extents (%d MiB): move to SSD %.2f s = %.1f MB/s, back %.2f s; dd %.2f s = %.1f MB/s; move/dd = %.2f [%s]' \
			"$extents" "$COUNT" "$secs" "$mbs" "$secs_back" "$dd_s" "$dd_mbs" \
			"$(calc "$mbs / $dd_mbs")" "$mode")"
		grep "pool $name: batch of [0-9]* extents: stall" /tmp/tierd.log | sed 's/.*batch of/  batch of/'
	fi

	step "(a) stalls per table swap, $extents extents, under random reads"
	pre=$(grep -c "pool $name: batch of [0-9]* extents: stall" /tmp/tierd.log || true)
	randread probe-$n 3600 &
	reader=$!
	sleep 2
	for i in $(seq "$CYCLES"); do
		move $name ssd >/dev/null
		move $name hdd >/dev/null
	done
	sleep 1
	kill -TERM $reader
	wait $reader || true
	grep "pool $name: batch of [0-9]* extents: stall" /tmp/tierd.log | tail -n +$((pre + 1)) >/tmp/swaps-$n
	sed 's/.*batch of/  batch of/' /tmp/swaps-$n
	say "$(printf '(a) %s extents: %s; reader %s [%s]' "$extents" "$(stalls /tmp/swaps-$n)" \
		"$(lat probe-$n)" "$mode")"

	if [ "$n" = "${POOLS%% *}" ]; then
		step "(c) 4K random reads alone, then during moves ($C_MODES)"
		randread alone "$RUNTIME" &
		wait $!
		say "$(printf '(c) %s extents, QD1 4K random reads for %s s: alone %s' "$extents" "$RUNTIME" "$(lat alone)")"
		for m in $C_MODES; do
			# The mover starts first so that the reader's whole window has a
			# move in progress; the count of moved extents is read when the
			# reader ends, and the move in flight then finishes unobserved.
			before=$(moved $name)
			(while :; do
				move $name ssd --io-awareness "$m" >/dev/null
				move $name hdd --io-awareness "$m" >/dev/null
			done) &
			mover=$!
			sleep 1
			randread busy-$m "$RUNTIME" &
			wait $!
			during=$(($(moved $name) - before))
			kill $mover
			wait $mover 2>/dev/null || true
			job_wait $name
			say "$(printf '(c) same while moving %d extents back and forth, io-awareness %s: %s; %d extents moved in the window' \
				"$COUNT" "$m" "$(lat busy-$m)" "$during")"
		done
	fi
	tierctl_ok pool destroy $name --yes --force >/dev/null 2>&1 ||
		"$TIERCTL" pool destroy $name --yes >/dev/null
done
tierd_stop TERM

echo
echo "== bench-migrate summary (1 MiB extents, batches of 16, loop devices on tmpfs, qemu TCG)"
printf '%s\n' "${summary[@]}"
