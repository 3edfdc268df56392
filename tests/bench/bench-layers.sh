#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-layers: what the volume's own layers cost a 4K random read in the
# test VM, where the benchmark's "SSD" is a loop device over RAM and every
# I/O is CPU work under qemu TCG. One loop device of TIERD_BENCH_SIZE_MB
# (352, bench-compare's range), read (fio, libaio, direct, QD16, 4K random
# over the whole device, TIERD_BENCH_SECONDS each) through:
#
#   raw       the loop device itself (bench-compare's SSD-only)
#   linear    one dm linear target over it, no dm-stats region
#   extent    the same with tierd's extent region (an area per 4 MiB)
#   tierd     the same with the three regions tierd keeps on a pool at
#             full resolution with piece heat: an area per 4 MiB extent,
#             the guard (an area per 64 extents) and an area per 16 KiB piece
#
# TIERD_BENCH_ROUNDS rounds (default 7), each running the four in turn,
# starting one later each round; each round's figures are taken as ratios
# to its own raw run, and the medians reported: the host's load moves every
# figure, less so a ratio within one round.
#   tests/bench/bench-layers.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/in-vm.sh"
bench_in_vm "${TIERD_BENCH_TIMEOUT:-1800}" "${TIERD_BENCH_MEMORY:-2048}" "${BASH_SOURCE[0]}" "$@"

. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"
SIZE_MB=${TIERD_BENCH_SIZE_MB:-352}
SECONDS_EACH=${TIERD_BENCH_SECONDS:-5}
ROUNDS=${TIERD_BENCH_ROUNDS:-7}
command -v fio >/dev/null || skip "fio is missing"
vm_modprobe loop dm-mod

dev=$(vm_loop_create "${SIZE_MB}M")
# Written once, so that reads hit allocated tmpfs pages as the benchmark's do.
dd if=/dev/urandom of="$dev" bs=1M count="$SIZE_MB" oflag=direct status=none
sectors=$(blockdev --getsz "$dev")
for name in linear extent tierd; do
	dmsetup --noudevsync create "bl-$name" --table "0 $sectors linear $(majmin "$dev") 0"
done
stats() { dmsetup message "bl-$1" 0 "$2" >/dev/null; }
stats extent "@stats_create - 8192 tierd"
stats tierd "@stats_create - 8192 tierd"
stats tierd "@stats_create - $((64 * 8192)) tierd"
stats tierd "@stats_create 0+$sectors 32 tierd"
echo "regions: extent $(dmsetup message bl-extent 0 @stats_list | wc -l)," \
	"tierd $(dmsetup message bl-tierd 0 @stats_list | wc -l)"

path() { [ "$1" = raw ] && echo "$dev" || echo "/dev/mapper/bl-$1"; }
iops() {
	fio --name=r --filename="$(path "$1")" --direct=1 --ioengine=libaio --iodepth=16 \
		--rw=randread --bs=4k --runtime="$SECONDS_EACH" --time_based --randrepeat=0 \
		--output-format=json | jq '.jobs[0].read.iops | floor'
}
configs=(raw linear extent tierd)
echo "$(nproc) guest CPUs; $SIZE_MB MiB; $ROUNDS rounds of ${SECONDS_EACH} s each"
printf '%6s %9s %9s %9s %9s %8s %8s %8s\n' round raw linear extent tierd x_linear x_extent x_tierd
: >/tmp/ratios
for ((r = 0; r < ROUNDS; r++)); do
	declare -A got=()
	for ((i = 0; i < ${#configs[@]}; i++)); do
		c=${configs[$(((i + r) % ${#configs[@]}))]}
		got[$c]=$(iops "$c")
	done
	read -r xl xe xt < <(awk -v b="${got[raw]}" -v l="${got[linear]}" -v e="${got[extent]}" \
		-v t="${got[tierd]}" 'BEGIN { printf "%.3f %.3f %.3f\n", l / b, e / b, t / b }')
	echo "$xl $xe $xt" >>/tmp/ratios
	printf '%6s %9s %9s %9s %9s %8s %8s %8s\n' $((r + 1)) "${got[raw]}" "${got[linear]}" \
		"${got[extent]}" "${got[tierd]}" "$xl" "$xe" "$xt"
	unset got
done
median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%6s %9s %9s %9s %9s %8s %8s %8s\n' median "" "" "" "" \
	"$(cut -d' ' -f1 /tmp/ratios | median)" "$(cut -d' ' -f2 /tmp/ratios | median)" \
	"$(cut -d' ' -f3 /tmp/ratios | median)"
for name in linear extent tierd; do
	dmsetup --noudevsync remove "bl-$name"
done
