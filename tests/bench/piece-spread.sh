#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# piece-spread: how finely hot I/O spreads inside extents, as tierd
# --piece-heat sees it, in the test VM. For each skew of TIERD_BENCH_SKEWS,
# a fresh pool on one loop device of bench-compare's size (352 MiB, extents
# of 4 MiB, pieces of 16 KiB), fio 4K random reads at QD16 for
# TIERD_BENCH_SECONDS, then the hottest extents with how few of their 256
# pieces took 90% of their I/O (tierctl heat's "90% IN"), and over the
# hottest 100 the least, median and most. Few pieces: hot blocks scattered
# in cold data, what placement finer than an extent would serve; most of
# them: heat spread evenly, what whole extents serve as well. Then tierctl
# advise for bench-compare's 96 MiB SSD: the share of the I/O whole extents
# would serve, and the same room in pieces.
#   tests/bench/piece-spread.sh
#   TIERD_BENCH_SKEWS    fio random_distribution values (default "zipf:1.2 zoned:90/10:10/90")
#   TIERD_BENCH_SECONDS  seconds of reads per skew (default 40)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/in-vm.sh"
bench_in_vm "${TIERD_BENCH_TIMEOUT:-1200}" "${TIERD_BENCH_MEMORY:-2048}" "${BASH_SOURCE[0]}" "$@"

. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"
SKEWS=${TIERD_BENCH_SKEWS:-zipf:1.2 zoned:90/10:10/90}
SECONDS_EACH=${TIERD_BENCH_SECONDS:-40}
command -v fio >/dev/null || skip "fio is missing"

vm_modprobe loop dm-mod
for skew in $SKEWS; do
	hdd=$(vm_loop_create 360M)
	rm -rf "$TIERD_STATE"
	tierd_start --sample-interval 1 --piece-heat
	tierctl_ok pool create spread --hdd "$hdd" >/dev/null
	vol=/dev/mapper/spread
	fio --name=spread --filename=$vol --direct=1 --rw=randread --bs=4k --iodepth=16 \
		--ioengine=libaio --random_distribution="$skew" --runtime="$SECONDS_EACH" \
		--time_based --norandommap --randrepeat=0 --eta=never --output=/dev/null
	sleep 3 # a few samples after the last read
	echo "== $skew, $(pool_field spread .total_extents) extents, $SECONDS_EACH s"
	"$TIERCTL" heat spread --top 12
	"$TIERCTL" heat spread --top 100 --json | jq -r '[.heat.extents[].pieces.holding_90_percent // empty] | sort_by(.) |
		"hottest \(length) extents: 90% of the I/O in \(.[0]) to \(.[-1]) of 256 pieces, median \(.[length / 2 | floor])"'
	"$TIERCTL" advise spread --ssd-size 96M --json | jq -r '.advice.points[] | select(.ssd_size_bytes == 100663296) |
		"a 96 MiB SSD would serve \(.ssd_io_share * 1000 | round / 10)% of the I/O in whole extents, \(.ssd_io_share_with_pieces * 1000 | round / 10)% in pieces"'
	tierctl_ok pool destroy spread --yes >/dev/null
	tierd_stop TERM
	losetup -d "$hdd"
done
