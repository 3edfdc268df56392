#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tierd --piece-heat: a dm-stats region with an area per 16 KiB piece beside
# the one per extent, and what it tells. Random 4 KiB reads on two blocks of
# one extent put 90% of its I/O in one or two pieces; random 4 KiB reads over
# a whole extent need most of its 256; tierctl advise predicts what the same
# SSD room would serve in pieces. Without the setting no such region is made
# and no piece is reported.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 160M)
E=$((4 << 20))
P=16384

step "a pool with pieces watched"
tierd_start --sample-interval 1 --piece-heat
tierctl_ok pool create tank --hdd "$hdd" >/dev/null
vol=/dev/mapper/tank
extents=$(pool_field tank .total_extents)
guard=$(((extents + 63) / 64))
assert_eq "piece areas" $((extents * 256)) "$(pool_field tank .heat.piece_areas)"
assert_eq "areas: an extent each, the guard's, a piece each" \
	$((extents + guard + extents * 256)) "$(pool_field tank .heat.areas)"
assert_eq "kernel memory of them all" \
	$(((extents + guard + extents * 256) * $(pool_field tank .heat.area_kernel_bytes))) \
	"$(pool_field tank .heat.kernel_bytes)"
assert_eq "regions of tierd's" 3 "$(dmsetup message tank 0 "@stats_list tierd" | wc -l)"

step "hot blocks in one extent, random reads over another"
# Extent 5: two 4 KiB blocks, in pieces 10 and 200, read 150 times each.
for i in $(seq 150); do
	dd if=$vol of=/dev/null bs=4096 count=1 skip=$(((5 * E + 10 * P) / 4096)) iflag=direct status=none
	dd if=$vol of=/dev/null bs=4096 count=1 skip=$(((5 * E + 200 * P + 8192) / 4096)) iflag=direct status=none
done
fio --name=r --filename=$vol --direct=1 --rw=randread --bs=4k --offset=$((9 * E)) \
	--size=$E --number_ios=2000 --randrepeat=0 --output=/dev/null
held() { "$TIERCTL" heat tank --top 10 --json | jq -r ".heat.extents[] | select(.extent == $1) | .pieces.holding_90_percent // empty"; }
seen() { [ -n "$(held 5)" ] && [ -n "$(held 9)" ]; }
wait_until 30 "the pieces of extents 5 and 9 in the heat" seen
"$TIERCTL" heat tank --top 5
json_save heat heat tank --top 10
n5=$(held 5) n9=$(held 9)
[ "$n5" -ge 1 ] && [ "$n5" -le 2 ] || fail "extent 5: 90% of its I/O in $n5 pieces, not 1 or 2"
[ "$n9" -ge 180 ] || fail "extent 9: 90% of its random reads in $n9 pieces, fewer than 180 of 256"
echo "ok: 90% of the I/O in $n5 pieces of extent 5, in $n9 of extent 9"
assert_eq "piece size in the reply" $P "$("$TIERCTL" heat tank --top 1 --json | jq '.heat.extents[0].pieces.piece_bytes')"
"$TIERCTL" heat tank --top 10 | grep -qE "^ *5 .* (1|2) of 256 *$" ||
	fail "tierctl heat does not show extent 5's pieces"

step "tierctl advise: the same SSD room spent on pieces"
# 12 MiB of SSD: one extent of data beside its swap reserve. Whole, it holds
# extent 9 (the hotter); in pieces, extent 5's two and most of extent 9's.
"$TIERCTL" advise tank --ssd-size 12M
json_save advice advise tank --ssd-size 12M
whole=$("$TIERCTL" advise tank --ssd-size 12M --json | jq '.advice.points[] | select(.ssd_size_bytes == 12582912) | .ssd_io_share')
pieces=$("$TIERCTL" advise tank --ssd-size 12M --json | jq '.advice.points[] | select(.ssd_size_bytes == 12582912) | .ssd_io_share_with_pieces')
awk -v w="$whole" -v p="$pieces" 'BEGIN { exit !(w > 0.6 && w < 0.9 && p > 0.95) }' ||
	fail "advise with 12 MiB: whole extents $whole, pieces $pieces"
echo "ok: 12 MiB of SSD: $whole of the I/O in whole extents, $pieces in pieces"
assert_eq "piece size in the advice" $P "$("$TIERCTL" advise tank --json | jq '.advice.piece_bytes')"
json_save pool pool show tank
json_check

step "a busy extent's piece areas wait in the kernel for a minute; a report reads them at once"
# Reads of one block of extent 2, sampled every second for 25 s: its
# extent's area shows them at each sample, but its piece area keeps
# counting in the kernel (@stats_print does not clear) until a minute has
# passed since the report before them read the pieces. Reading them every
# 10 s was most of tierd's CPU at 4 KiB pieces.
piece_region=$(dmsetup message tank 0 "@stats_list tierd" |
	awk -v step=$((P / 512)) '$3 == step { sub(":", "", $1); print $1 }')
[ -n "$piece_region" ] || fail "no region with an area per piece"
piece_reads() { # AREA: reads counted in the kernel since tierd last took them
	dmsetup message tank 0 "@stats_print $piece_region $1 1" | awk '{ print $2 }'
}
area=$(((2 * E + 7 * P) / P))
"$TIERCTL" heat tank --top 1 >/dev/null
vm_read_4k $vol $((2 * E + 7 * P)) 40
sleep 25
reads=$(piece_reads $area)
echo "piece area of extent 2's block after 25 s of samples: $reads reads waiting"
[ "$reads" -ge 40 ] || fail "$reads reads of 40 wait in the kernel: a sample read the piece areas within 25 s"
"$TIERCTL" heat tank --top 10 >/dev/null
assert_eq "reads waiting after a report" 0 "$(piece_reads $area)"
# One block of extent 3, never read before, then a sample for the extent's own area.
vm_read_4k $vol $((3 * E + 40 * P)) 100
sleep 1.5
assert_eq "pieces holding 90% of extent 3's I/O, a report right after its reads" 1 "$(held 3)"

step "with --piece-heat=no: no region of pieces, nothing reported"
tierd_stop TERM
tierd_start --sample-interval 1 --piece-heat=no
assert_eq "piece areas" 0 "$(pool_field tank .heat.piece_areas)"
assert_eq "regions of tierd's" 2 "$(dmsetup message tank 0 "@stats_list tierd" | wc -l)"
dd if=$vol of=/dev/null bs=4096 count=1 skip=$(((5 * E + 10 * P) / 4096)) iflag=direct status=none
wait_until 30 "extent 5 in the heat" sh -c "'$TIERCTL' heat tank --top 3 --json | jq -e '.heat.extents[] | select(.extent == 5)' >/dev/null"
assert_eq "pieces in the reply" "" "$("$TIERCTL" heat tank --top 10 --json | jq -r '.heat.extents[] | .pieces // empty')"
"$TIERCTL" heat tank --top 3 | grep -qE " - *$" || fail "tierctl heat shows no '-' without pieces"
assert_eq "advice without pieces" "null null" \
	"$("$TIERCTL" advise tank --json | jq -r '[.advice.piece_bytes, .advice.points[0].ssd_io_share_with_pieces] | map(tostring) | join(" ")')"
tierd_stop TERM
echo "piece-heat: ok"
