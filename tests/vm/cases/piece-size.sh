#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tierd --piece-size: a pool without pieces is watched, planned and split at
# the setting's size. With 4 KiB pieces the heat has an area per 4 KiB, a
# run sends single hot blocks out through held copies (a 4 KiB piece is
# below the smallest buffer an io_uring copy that can verify takes), and
# the neighbouring blocks stay at home. Restarted with another size, the
# pool keeps the size of the pieces it has out; a new pool takes the new
# one. Held batches grow past 64 pieces where their copy is quick. The
# volume's data is compared after each step.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 64M)
ssd=$(vm_loop_create 34M)
P=4096
# For a second pool, made after the restart.
hdd2=$(vm_loop_create 64M)
ssd2=$(vm_loop_create 34M)

step "a size that is not a power of two is refused"
rc=0
out=$("$TIERD" --check-config --config /dev/null --piece-size 12K 2>&1) || rc=$?
echo "$out"
assert_eq "tierd --check-config --piece-size 12K status (a usage error)" 2 "$rc"
[[ "$out" == *"piece-size takes a power of two from 4 KiB to 64 KiB"* ]] ||
	fail "no reason given for 12K: $out"

step "a pool watched in pieces of 4 KiB"
tierd_start --sample-interval 1 --piece-size 4K
tierctl_ok pool create tank --hdd "$hdd" >/dev/null
tierctl_ok tier attach tank --ssd "$ssd" --no-grow >/dev/null
vol=/dev/mapper/tank
E=$(pool_field tank .extent_size_bytes)
extents=$(pool_field tank .total_extents)
ppe=$((E / P))
assert_eq "piece areas: an area per 4 KiB" $((extents * ppe)) "$(pool_field tank .heat.piece_areas)"
assert_eq "pool show's piece size before any piece is out" $P "$(pool_field tank .pieces.piece_bytes)"
# Written before the pieces that count are read: the fill weighs every piece.
vm_fill_random $vol
tierd_stop TERM
: >/tmp/tierd.log
tierd_start --sample-interval 1 --piece-size 4K --verbose
wait_until 20 "the pool active" test -e $vol
grep -q "pool tank: heat of 4.0 KiB pieces too" /tmp/tierd.log ||
	fail "the heat is not in 4 KiB pieces: $(grep 'heat of' /tmp/tierd.log)"

step "hot 4 KiB blocks in extents 5 and 12, random reads all over extent 9"
# Blocks 41 and 801 of extent 5 are in its 16 KiB pieces 10 and 200.
readers=()
for block in $((5 * E + 41 * P)) $((5 * E + 801 * P)) $((12 * E + 29 * P)); do
	vm_read_4k $vol $block 150 &
	readers+=($!)
done
fio --name=r --filename=$vol --direct=1 --rw=randread --bs=4k --offset=$((9 * E)) \
	--size=$E --number_ios=3000 --randrepeat=0 --output=/dev/null
wait "${readers[@]}"
held() { "$TIERCTL" heat tank --top 10 --json | jq -r ".heat.extents[] | select(.extent == $1) | .pieces.holding_90_percent // empty"; }
seen() { [ -n "$(held 5)" ] && [ -n "$(held 12)" ]; }
wait_until 30 "the pieces of extents 5 and 12 in the heat" seen
"$TIERCTL" heat tank --top 5
assert_eq "pieces holding 90% of extent 5's I/O" 2 "$(held 5)"
assert_eq "the heat's piece size" $P \
	"$("$TIERCTL" heat tank --top 10 --json | jq -r '.heat.extents[] | select(.extent == 5) | .pieces.piece_bytes')"

step "a run sends the hot blocks out, held, and nothing beside them"
plan=$("$TIERCTL" tier now tank --dry-run --json)
assert_eq "the plan's piece size" $P "$(jq -r .plan.piece_bytes <<<"$plan")"
for want_move in 5:41 5:801 12:29; do
	jq -e --arg m "$want_move" '[.plan.moves[] | select(.piece) | "\(.extent):\(.piece)"] | index($m)' \
		<<<"$plan" >/dev/null || fail "the plan does not send piece $want_move out"
done
tierctl_ok tier now tank --wait >/dev/null
"$TIERCTL" runs tank --limit 1
assert_eq "run result" done "$("$TIERCTL" runs tank --limit 1 --json | jq -r '.runs[0].result')"
if grep -q "cannot set up held copies" /tmp/tierd.log; then
	fail "4 KiB pieces went through mirrors: $(grep 'cannot set up held' /tmp/tierd.log)"
fi
grep -q "pieces while suspended" /tmp/tierd.log || fail "no held copy of pieces in the log"
assert_eq "pool show's piece size" $P "$(pool_field tank .pieces.piece_bytes)"
assert_eq "block 41 of extent 5 out" ssd "$(pool_tier_at tank $((5 * E + 41 * P)))"
assert_eq "block 40 of extent 5 at home" hdd "$(pool_tier_at tank $((5 * E + 40 * P)))"
assert_eq "block 42 of extent 5 at home" hdd "$(pool_tier_at tank $((5 * E + 42 * P)))"
assert_eq "block 29 of extent 12 out" ssd "$(pool_tier_at tank $((12 * E + 29 * P)))"
vm_drop_caches
assert_eq "the volume's data after the run" "$want" "$(vm_digest $vol)"

step "held batches of 4 KiB pieces grow past 64 where their copy is quick"
log_from=$(($(wc -l </tmp/tierd.log) + 1))
tierctl_ok extent move tank 3 --tier ssd --pieces 0-639 >/dev/null
assert_eq "piece 639 of extent 3" ssd "$(pool_tier_at tank $((3 * E + 639 * P)))"
vm_drop_caches
assert_eq "the volume's data after 640 pieces moved" "$want" "$(vm_digest $vol)"
# The move's held batches: "batch of N pieces: stall S ms (held copy C ms, ...".
batches=$(tail -n +$log_from /tmp/tierd.log |
	sed -n 's/.*batch of \([0-9]*\) pieces: stall [0-9.]* ms (held copy \([0-9.]*\) ms.*/\1 \2/p')
echo "held batches (pieces, copy ms):" $batches
[ "$(wc -l <<<"$batches")" -ge 2 ] || fail "640 pieces moved in fewer than two held batches"
largest=$(awk '$1 > m { m = $1 } END { print m + 0 }' <<<"$batches")
read -r first_n first_copy <<<"$(head -n 1 <<<"$batches")"
if [ "$largest" -gt 64 ]; then
	echo "ok: held batches grew to $largest pieces"
elif awk -v c="$first_copy" -v n="$first_n" 'BEGIN { exit !(c < 10 && n > 32) }'; then
	# Under half the 20 ms target, the first copy fits twice its pieces in the next.
	fail "the first copy took $first_copy ms for $first_n pieces, and no held batch grew past 64"
else
	echo "not checked: the first copy took $first_copy ms for $first_n pieces, on this host"
fi

step "restarted with 16 KiB pieces: the pool keeps its 4 KiB ones"
tierd_stop TERM
: >/tmp/tierd.log
tierd_start --sample-interval 1 --piece-size 16K
wait_until 20 "the pool active" test -e $vol
grep -q "pool tank: heat of 4.0 KiB pieces too" /tmp/tierd.log ||
	fail "the pool's heat left its pieces' size: $(grep 'heat of' /tmp/tierd.log)"
assert_eq "pool show's piece size" $P "$(pool_field tank .pieces.piece_bytes)"
assert_eq "piece areas" $((extents * ppe)) "$(pool_field tank .heat.piece_areas)"
assert_eq "the plan's piece size" $P "$("$TIERCTL" tier now tank --dry-run --json | jq -r .plan.piece_bytes)"
tierctl_ok extent move tank 7 --tier ssd --pieces 3-5 >/dev/null
assert_eq "block 5 of extent 7 out" ssd "$(pool_tier_at tank $((7 * E + 5 * P)))"
assert_eq "block 6 of extent 7 at home" hdd "$(pool_tier_at tank $((7 * E + 6 * P)))"
vm_drop_caches
assert_eq "the volume's data after a restart and a move" "$want" "$(vm_digest $vol)"

step "a new pool takes 16 KiB"
tierctl_ok pool create tank2 --hdd "$hdd2" >/dev/null
assert_eq "tank2's piece areas: an area per 16 KiB" $(($(pool_field tank2 .total_extents) * E / 16384)) \
	"$(pool_field tank2 .heat.piece_areas)"
tierctl_ok tier attach tank2 --ssd "$ssd2" --no-grow >/dev/null
assert_eq "tank2's piece size before any piece is out" 16384 "$(pool_field tank2 .pieces.piece_bytes)"
tierctl_ok extent move tank2 3 --tier ssd --pieces 0-1 >/dev/null
assert_eq "tank2's piece size" 16384 "$(pool_field tank2 .pieces.piece_bytes)"
assert_eq "tank's piece size" $P "$(pool_field tank .pieces.piece_bytes)"
