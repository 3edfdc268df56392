#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Tiering runs place pieces (tierd --piece-heat, a heat policy): whole
# extents and the hot pieces of others ranked together for the SSD's room.
# Extents read at random all over go whole; two extents whose I/O sits on
# a few 4 KiB blocks send those pieces out. The dry run lists the moves
# a run then makes; a second plan moves nothing (what is in place stays),
# nor one after a restart, which keeps the split extents' weights; reads of
# a piece out count for the SSD in the pool's I/O; a pin to the
# HDD brings an extent's pieces home in the next run. A pool read evenly
# gets all its room in whole extents. The volume's data is compared after
# every run and a restart.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 64M)
ssd=$(vm_loop_create 34M)
P=16384

step "a pool with a small SSD tier, then pieces watched"
tierd_start --sample-interval 1
tierctl_ok pool create tank --hdd "$hdd" >/dev/null
tierctl_ok tier attach tank --ssd "$ssd" --no-grow >/dev/null
vol=/dev/mapper/tank
E=$(pool_field tank .extent_size_bytes)
ssd_pe=$(pool_field tank '.tiers[] | select(.class == "ssd") | .total_extents')
echo "extents of $E bytes; $ssd_pe on the SSD"
# Room for six extents beside the swap reserve of two: the ranking's room
# is 1,127 slots of a piece (the headroom and one container's worth, kept
# for the fill of containers, taken off), less than the six hot extents
# whole.
assert_eq "SSD extents" 8 "$ssd_pe"
# Written before pieces are watched: the volume's every piece would
# otherwise weigh a write (their weights are not kept over a restart).
vm_fill_random $vol
tierd_stop TERM
tierd_start --sample-interval 1 --piece-heat
wait_until 20 "the pool active" test -e $vol

step "random reads all over extents 8-11, hot blocks in extents 5 and 12"
hot_block() { vm_read_4k $vol $(($1 * E + $2 * P)) "$3"; } # EXTENT PIECE COUNT
pids=()
hot_block 5 10 150 & pids+=($!)
hot_block 5 200 150 & pids+=($!)
hot_block 12 7 150 & pids+=($!)
fio --name=r --filename=$vol --direct=1 --rw=randread --bs=4k --offset=$((8 * E)) \
	--size=$((4 * E)) --number_ios=6000 --randrepeat=0 --output=/dev/null
wait "${pids[@]}"
held() { "$TIERCTL" heat tank --top 10 --json | jq -r ".heat.extents[] | select(.extent == $1) | .pieces.holding_90_percent // empty"; }
seen() { [ -n "$(held 5)" ] && [ -n "$(held 12)" ] && [ -n "$(held 9)" ]; }
wait_until 30 "the pieces of extents 5, 9 and 12 in the heat" seen
"$TIERCTL" heat tank --top 5

step "the plan: extents 8-11 whole, the hot pieces of 5 and 12"
"$TIERCTL" tier now tank --dry-run
plan=$("$TIERCTL" tier now tank --dry-run --json)
json_save plan tier now tank --dry-run
moves=$(jq -r '[.plan.moves[] | "\(.extent)\(if .piece then ":\(.piece)" else "" end)>\(.to)"] | join(" ")' <<<"$plan")
echo "planned: $moves"
# Whole extents, then pieces; each phase hottest first, and these are about as hot.
assert_eq "planned moves, whole ones first" "wwwwppp" \
	"$(jq -r '[.plan.moves[] | if .piece then "p" else "w" end] | join("")' <<<"$plan")"
assert_eq "planned moves" "10>ssd 11>ssd 12:7>ssd 5:10>ssd 5:200>ssd 8>ssd 9>ssd" \
	"$(tr ' ' '\n' <<<"$moves" | LC_ALL=C sort | paste -sd ' ')"
assert_eq "pieces out, home, their size" "3 0 $P" \
	"$(jq -r '.plan | "\(.pieces_out) \(.pieces_home) \(.piece_bytes)"' <<<"$plan")"
assert_eq "promoted bytes" $((4 * E + 3 * P)) "$(jq .plan.promoted_bytes <<<"$plan")"

step "tier now moves them"
tierctl_ok tier now tank --wait >/dev/null
run=$("$TIERCTL" runs tank --limit 1 --json | jq -c '.runs[0]')
echo "$run"
assert_eq "run result" done "$(jq -r .result <<<"$run")"
assert_eq "run: extents promoted, bytes" "4 $((4 * E + 3 * P))" \
	"$(jq -r '"\(.promoted_extents) \(.promoted_bytes)"' <<<"$run")"
assert_eq "run: pieces planned, out, home, moved" "3 3 0 3" \
	"$(jq -r '"\(.planned_pieces) \(.promoted_pieces) \(.demoted_pieces) \(.moved_pieces)"' <<<"$run")"
"$TIERCTL" runs tank --limit 1
assert_eq "pool show's pieces" '{"pieces":3,"split_extents":2,"containers":1}' \
	"$(pool_field tank '.pieces | {pieces, split_extents, containers}' | jq -c .)"
assert_eq "extent 9 on the SSD" ssd "$(pool_tier_at tank $((9 * E + E / 2)))"
assert_eq "piece 200 of extent 5 out" ssd "$(pool_tier_at tank $((5 * E + 200 * P)))"
assert_eq "piece 201 of extent 5 at home" hdd "$(pool_tier_at tank $((5 * E + 201 * P)))"

step "reads of a piece out count for the SSD in the pool's I/O"
# Extent 5's home is on the HDD, its two hot pieces on the SSD: its reads
# are split as its piece weights divide them, nearly all to the SSD.
ssd_reads() { "$TIERCTL" stats tank --window 1h --json | jq '.stats.io | .reads * (.ssd_io_share // 0) | round'; }
before=$(ssd_reads)
hot_block 5 10 100
sleep 2
after=$(ssd_reads)
echo "reads the SSD served: $before, then $after after 100 reads of piece 10 of extent 5"
[ $((after - before)) -ge 90 ] || fail "$((after - before)) of 100 reads of a piece out counted for the SSD"

step "a move of 100 pieces, in batches of 64 and their progress reports"
tierctl_ok extent move tank 7 --tier ssd --pieces 0-99 >/dev/null
assert_eq "pieces out" 103 "$(pool_field tank .pieces.pieces)"
tierctl_ok extent move tank 7 --tier hdd --pieces all >/dev/null
assert_eq "pieces out after extent 7's came home" 3 "$(pool_field tank .pieces.pieces)"

step "a second plan leaves everything where it is"
planned() { "$TIERCTL" tier now tank --dry-run --json | jq -r '.plan | "\(.planned_extents) \(.pieces_out) \(.pieces_home)"'; }
hot_block 5 10 20
assert_eq "moves planned" "0 0 0" "$(planned)"

step "after a restart too, with the pieces' weights kept"
# The state keeps the weights of the split extents: the first I/O after a
# restart, on one hot block, does not make the other look cold. Weights
# of extents without pieces out start again; until they come back, pieces
# out would be taken to hold their extents' heat.
held_before=$(held 5)
tierd_stop TERM
tierd_start --sample-interval 1 --piece-heat
wait_until 20 "the pool active" test -e $vol
assert_eq "pieces holding 90% of extent 5's I/O, before and after" "2 2" "$held_before $(held 5)"
hot_block 5 10 20
sleep 2
assert_eq "pieces holding 90% of extent 5's I/O after reads of one" 2 "$(held 5)"
assert_eq "moves planned" "0 0 0" "$(planned)"
vm_drop_caches
assert_eq "the volume's data after the run" "$want" "$(vm_digest $vol)"

step "a pin to the HDD brings extent 5's pieces home in the next run"
# The read of the whole volume above weighed every piece: the room left
# may now go to pieces of extent 12 too, after the pieces home.
tierctl_ok pin tank $((5 * E)) $E --tier hdd >/dev/null
moves=$("$TIERCTL" tier now tank --dry-run --json |
	jq -r '[.plan.moves[] | "\(.extent)\(if .piece then ":\(.piece)" else "" end)>\(.to)"] | join(" ")')
echo "planned: $moves"
[[ "$moves" == "5:10>hdd 5:200>hdd"* ]] || fail "the plan does not bring extent 5's pieces home first: $moves"
tierctl_ok tier now tank --wait >/dev/null
for k in 10 200; do
	assert_eq "piece $k of extent 5 at home" hdd "$(pool_tier_at tank $((5 * E + k * P)))"
done
assert_eq "piece 7 of extent 12 out" ssd "$(pool_tier_at tank $((12 * E + 7 * P)))"
vm_drop_caches
assert_eq "the volume's data after the second run" "$want" "$(vm_digest $vol)"
json_save pool pool show tank

step "a restart"
tierd_stop TERM
tierd_start --sample-interval 1 --piece-heat
wait_until 20 "the pool active" test -e $vol
assert_eq "piece 7 of extent 12 out after a restart" ssd "$(pool_tier_at tank $((12 * E + 7 * P)))"
vm_drop_caches
assert_eq "the volume's data after a restart" "$want" "$(vm_digest $vol)"

step "a pool read evenly, no piece out: its extents whole take all the room"
# A plan with pieces keeps a container's worth of room back for the
# container being filled: here 4 extents whole and 103 pieces of a fifth,
# read as evenly as the others, in a container of their own. With no
# container in use, whole extents alone have the room the planner without
# piece heat has (six extents: it keeps its headroom of 10% in whole
# extents, none of six), which holds more heat. Extents 0-7 are read at random, each 4 KiB block twice over
# (fio's random map), so that their pieces are even.
hdd2=$(vm_loop_create 64M)
ssd2=$(vm_loop_create 34M)
tierctl_ok pool create even --hdd "$hdd2" >/dev/null
tierctl_ok tier attach even --ssd "$ssd2" --no-grow >/dev/null
vol2=/dev/mapper/even
vm_random_file /tmp/data2 "$(blockdev --getsize64 $vol2)"
dd if=/tmp/data2 of=$vol2 bs=1M oflag=direct status=none
want2=$(vm_digest /tmp/data2)
fio --name=r --filename=$vol2 --direct=1 --rw=randread --bs=4k --size=$((8 * E)) \
	--loops=2 --randrepeat=0 --output=/dev/null
# The heat samples each second: the reads of fio's last second come in
# the next, and until then its extents' first reads say little.
even_planned() { "$TIERCTL" tier now even --dry-run --json | jq -r '.plan | "\(.planned_extents) \(.pieces_out) \(.pieces_home)"'; }
even_full() { [ "$(even_planned)" = "6 0 0" ]; }
for ((i = 0; i < 15; i++)); do even_full && break; sleep 1; done
"$TIERCTL" tier now even --dry-run
assert_eq "extents whole, pieces out, home" "6 0 0" "$(even_planned)"
tierctl_ok tier now even --wait >/dev/null
assert_eq "SSD extents in use" 6 \
	"$(pool_field even '.tiers[] | select(.class == "ssd") | .used_extents')"
vm_drop_caches
assert_eq "the even pool's data after the run" "$want2" "$(vm_digest $vol2)"
json_check
tierd_stop TERM
echo "pieces-runs: ok"
