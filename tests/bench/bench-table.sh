#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-table: what a device-mapper table of many linear targets costs, in
# the test VM, for the budget of table entries that placement finer than an
# extent needs. For each count N of TIERD_BENCH_ENTRIES, a table of N
# linear targets of TIERD_BENCH_ENTRY_KIB each, alternating between two
# loop devices (so that no two neighbours could merge), over sparse files
# on a tmpfs:
#
#   text_mb    the table's text, as tierd hands it to libdevmapper
#   create_s   dmsetup create from that text (the ioctl's copy and parse);
#              a table libdevmapper or the kernel refuses says so instead,
#              and so does one loaded that libdevmapper cannot read back
#   kmem_mib   the kernel memory the live table holds: Slab + VmallocUsed +
#              Percpu of /proc/meminfo after the create, less before it
#   swap_ms    a reload of the same table then suspend and resume: the
#              table swap of a batch of moves (median of three, each
#              dmsetup's own start included: compare with N = 1), of which
#   resume_ms  the resume
#   iops       4K random reads, QD16, 5 s, through the table (fio, libaio,
#              direct): the lookup of a target among N (the devices are RAM)
#
# Absolute numbers under qemu TCG mean little; compare within one run.
#   tests/bench/bench-table.sh
#   TIERD_BENCH_ENTRIES   counts of targets (default "1 1024 16384 65536 262144 1048576")
#   TIERD_BENCH_ENTRY_KIB size of each target (default 64)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/in-vm.sh"
bench_in_vm "${TIERD_BENCH_TIMEOUT:-3600}" "${TIERD_BENCH_MEMORY:-8192}" "${BASH_SOURCE[0]}" "$@"

. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"
ENTRIES=${TIERD_BENCH_ENTRIES:-1 1024 16384 65536 262144 1048576}
KIB=${TIERD_BENCH_ENTRY_KIB:-64}
command -v fio >/dev/null || skip "fio is missing"

vm_modprobe loop dm-mod
max=1
for n in $ENTRIES; do
	[ "$n" -gt "$max" ] && max=$n
done
sectors=$((KIB * 2))
dev_bytes=$(((max + 1) / 2 * KIB * 1024 + (1 << 20)))
a=$(vm_loop_create "$dev_bytes") b=$(vm_loop_create "$dev_bytes")
a_mm=$(majmin "$a") b_mm=$(majmin "$b")

now() { date +%s.%N; }
ms_since() { awk "BEGIN { printf \"%.1f\", ($(now) - $1) * 1000 }"; }
kmem_kib() { awk '/^(Slab|VmallocUsed|Percpu):/ { n += $2 } END { print n }' /proc/meminfo; }
median3() { sort -n | sed -n 2p; }

echo "entries of $KIB KiB alternating between $a and $b; $(nproc) guest CPUs, $(free -m | awk '/^Mem:/ { print $2 }') MiB"
printf '%9s %8s %9s %9s %8s %10s %8s\n' entries text_mb create_s kmem_mib swap_ms resume_ms iops
for n in $ENTRIES; do
	awk -v n="$n" -v s="$sectors" -v a="$a_mm" -v b="$b_mm" 'BEGIN {
		for (i = 0; i < n; i++)
			printf "%d %d linear %s %d\n", i * s, s, i % 2 ? b : a, int(i / 2) * s
	}' >/tmp/table
	text_mb=$(awk -v b="$(stat -c %s /tmp/table)" 'BEGIN { printf "%.1f", b / 1048576 }')
	sync
	echo 3 >/proc/sys/vm/drop_caches
	before=$(kmem_kib)
	t0=$(now)
	if ! dmsetup --noudevsync create benchtable </tmp/table 2>/tmp/create.err; then
		printf '%9s %8s  refused: %s\n' "$n" "$text_mb" "$(tr '\n' ' ' </tmp/create.err)"
		continue
	fi
	create_ms=$(ms_since "$t0")
	after=$(kmem_kib)
	kmem=$(awk -v d=$((after - before)) 'BEGIN { printf "%.1f", d / 1024 }')
	# libdevmapper's buffer for reading a table back has a ceiling of its own.
	if lines=$(dmsetup table benchtable 2>/tmp/table.err | wc -l) && [ "$lines" -gt 0 ]; then
		[ "$lines" -eq "$n" ] || fail "the table has $lines lines, not $n"
	else
		echo "$n: loaded, but reading it back was refused: $(tr '\n' ' ' </tmp/table.err)"
	fi
	swaps=() resumes=()
	for _ in 1 2 3; do
		dmsetup --noudevsync load benchtable </tmp/table
		t0=$(now)
		dmsetup --noudevsync suspend benchtable
		t1=$(now)
		dmsetup --noudevsync resume benchtable
		swaps+=("$(ms_since "$t0")") resumes+=("$(ms_since "$t1")")
	done
	swap=$(printf '%s\n' "${swaps[@]}" | median3)
	resume=$(printf '%s\n' "${resumes[@]}" | median3)
	iops=$(fio --name=r --filename=/dev/mapper/benchtable --direct=1 --ioengine=libaio \
		--iodepth=16 --rw=randread --bs=4k --runtime=5 --time_based --randrepeat=0 \
		--output-format=json | jq '.jobs[0].read.iops | floor')
	dmsetup --noudevsync remove benchtable
	printf '%9s %8s %9.2f %9s %8s %10s %8s\n' "$n" "$text_mb" \
		"$(awk -v m="$create_ms" 'BEGIN { print m / 1000 }')" "$kmem" "$swap" "$resume" "$iops"
done
