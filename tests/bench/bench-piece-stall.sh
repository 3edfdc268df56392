#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-piece-stall: how long a batch of pieces holds the volume's I/O as
# the pieces out, and so the volume's table, grow. In the test VM, quiet
# (no emulated disk latency, no other load): a pool of 4 MiB extents over a
# 64 GiB sparse HDD and a 1 GiB sparse SSD; piece 0 of the next N extents
# goes out for each N of TIERD_BENCH_PIECES (default "64 1024 4096 8192",
# so 64, 1,088, 5,184 and 13,376 pieces out), in batches of 64, while a QD1
# 4K random reader runs on the volume. TIERD_BENCH_PIECE_COPY=held|mirror
# starts tierd with --piece-copy (its default when unset). One line per step:
#
#   pieces_out, targets     after the step
#   stall_med, stall_max    tierd's stall per batch (suspend to the end of the
#                           resume ioctl, which tears the old table with its
#                           mirrors down after I/O restarted: an upper bound)
#   resume_med              of which the resume
#   reader_max, reader_p999 the reader's worst and 99.9th percentile latency
#                           (ms): what a batch held I/O, at most
#
# and the summary line of the step's worst batch (tierd --verbose).
#
#   tests/bench/bench-piece-stall.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/in-vm.sh"
bench_in_vm "${TIERD_BENCH_TIMEOUT:-1800}" "${TIERD_BENCH_MEMORY:-3072}" "${BASH_SOURCE[0]}" "$@"

. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"
command -v fio >/dev/null || skip "fio is missing"
vm_modprobe loop dm-mod dm-mirror
hdd=$(vm_loop_create 64G)
ssd=$(vm_loop_create 1G)
tierd_start --verbose ${TIERD_BENCH_PIECE_COPY:+--piece-copy "$TIERD_BENCH_PIECE_COPY"}
tierctl_ok pool create tank --hdd "$hdd" >/dev/null
tierctl_ok tier attach tank --ssd "$ssd" --no-grow >/dev/null 2>&1
batch_lines() { grep "pool tank: batch of [0-9]* [a-z]*: stall" /tmp/tierd.log || true; }
# med|max WHAT: of the ms after WHAT in this step's batch lines
med() { sed -n "s/.*$1 \([0-9.]*\) ms.*/\1/p" /tmp/step | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
max() { sed -n "s/.*$1 \([0-9.]*\) ms.*/\1/p" /tmp/step | sort -n | tail -n 1; }

printf '%10s %8s %8s %9s %9s %10s %10s %11s\n' pieces_out targets batches stall_med stall_max \
	resume_med reader_max reader_p999
from=0
for n in ${TIERD_BENCH_PIECES:-64 1024 4096 8192}; do
	before=$(batch_lines | wc -l)
	fio --name=reader --filename=/dev/mapper/tank --direct=1 --rw=randread --bs=4k \
		--iodepth=1 --size=1G --time_based --runtime=3600 --output-format=json \
		--output=/tmp/reader.json &
	reader=$!
	# Running before the move starts: fio writes no report if stopped while it sets up.
	sleep 2
	"$TIERCTL" extent move tank $from "$n" --tier ssd --pieces 0 >/dev/null ||
		fail "pieces 0 of extents $from-$((from + n - 1)) did not move"
	kill -TERM $reader
	wait $reader || true
	from=$((from + n))
	batch_lines | tail -n +$((before + 1)) >/tmp/step
	# fio may print a line of its own before the JSON.
	read -r lat_max lat_p999 < <(sed -n '/^{/,$p' /tmp/reader.json | jq -r '.jobs[0].read.clat_ns |
		"\(.max / 1e6) \(.percentile["99.900000"] / 1e6)"')
	printf '%10d %8d %8d %9s %9s %10s %10.1f %11.1f\n' $from "$(dmsetup table tank | wc -l)" \
		"$(wc -l </tmp/step)" "$(med stall)" "$(max stall)" "$(med resume)" "$lat_max" "$lat_p999"
	# Where the worst batch's time went.
	worst=$(max stall)
	grep -F "stall $worst ms" /tmp/step | head -n 1 | sed 's/.*: batch of/  worst: batch of/'
done
