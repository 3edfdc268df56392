#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tierd moves pieces of extents itself ('extent move --pieces'): out to a
# container it makes of a free SSD extent, between slots, and home, live,
# with a writer writing a moving piece, copied while the volume is
# suspended and through mirrors. After every step the volume reads
# what was written, and each piece the newest metadata slot puts out holds
# its bytes in its slot. Without piece heat, a split extent's I/O counts
# for each tier by its pieces' bytes. The pieces survive a restart from the state and an
# import from the devices alone. tierd killed at each step of a piece
# batch's commit leaves each piece wholly where it was or wholly where it
# went, as the step says, and activation says which of the moves whose
# intents it finds had committed. A split extent moves whole once its pieces are
# home. The SSD detaches with pieces out: they come home first.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

slots() { python3 "$TIERD_SOURCE_DIR/tests/vm/slots.py" "$@"; }

hdd=$(vm_loop_create 128M)
ssd=$(vm_loop_create 48M)
P=16384
tierd_start
tierctl_ok pool create tank --hdd "$hdd" >/dev/null
tierctl_ok tier attach tank --ssd "$ssd" --no-grow >/dev/null
vol=/dev/mapper/tank
ext=$("$TIERCTL" pool show tank --json | jq .pool.extent_size_bytes)
vm_fill_random $vol
targets_before=$(dmsetup table tank | wc -l)

# check WHAT [FIRST COUNT]: the volume (or its extents FIRST to
# FIRST + COUNT - 1) reads /tmp/data, and each piece out in the newest slot
# of the pool's devices ($devs) holds its bytes in its slot.
devs="$hdd $ssd"
# data_sum: the digest of /tmp/data, taken again only once the file changed:
# hashing it was half of a check's time under TCG, and most checks follow no
# write.
data_sum_update() {
	local stamp
	stamp=$(stat -c %y.%s /tmp/data)
	if [ "$stamp" != "${data_stamp:-}" ]; then
		data_sum=$(vm_digest /tmp/data)
		data_stamp=$stamp
	fi
}
check() {
	local said
	vm_drop_caches
	if [ $# -gt 1 ]; then
		assert_eq "extents $2-$(($2 + $3 - 1)) $1" "$(vm_digest /tmp/data $(($3 * ext)) $(($2 * ext)))" \
			"$(vm_digest $vol $(($3 * ext)) $(($2 * ext)))"
	else
		data_sum_update
		assert_eq "the volume's data $1" "$data_sum" "$(vm_digest $vol)"
	fi
	# shellcheck disable=SC2086
	said=$(slots check /tmp/data $devs) || fail "$said $1"
	assert_eq "pieces in their slots $1" "$(out) pieces hold their bytes in their slots" "$said"
}
# Write 16 KiB of fresh data at piece IDX of extent LE, through the volume and into /tmp/data.
write_piece() {
	vm_random_file /tmp/piece $P
	dd if=/tmp/piece of=$vol bs=$P seek=$((($1 * ext + $2 * P) / P)) oflag=direct conv=notrunc status=none
	dd if=/tmp/piece of=/tmp/data bs=$P seek=$((($1 * ext + $2 * P) / P)) conv=notrunc status=none
}
out() { pool_field tank .pieces.pieces; }

step "pieces of four extents go to the SSD, a writer writing one of them"
vm_random_file /tmp/new $P
(
	for _ in $(seq 40); do
		dd if=/tmp/new of=$vol bs=$P seek=$(((10 * ext + 2 * P) / P)) oflag=direct conv=notrunc \
			status=none
	done
) &
writer=$!
tierctl_ok extent move tank 10 --tier ssd --pieces 0-7 >/dev/null
wait $writer
dd if=/tmp/new of=/tmp/data bs=$P seek=$(((10 * ext + 2 * P) / P)) conv=notrunc status=none
moved=$("$TIERCTL" extent move tank 11 3 --tier ssd --pieces 100)
echo "$moved"
grep -q "pieces 100 of extents 11-13 are on the SSD tier" <<<"$moved" || fail "extent move said: $moved"
check "with 11 pieces out"
assert_eq "pool show's pieces" '{"piece_bytes":16384,"containers":1,"pieces":11,"split_extents":4,"bytes":180224}' \
	"$(pool_field tank '.pieces' | jq -c .)"
shown=$(slots show "$hdd" "$ssd")
grep -q "version 2 containers 1 pieces 11" <<<"$shown" || fail "the newest slot: $shown"
targets=$(dmsetup table tank | wc -l)
[ "$targets" -gt "$targets_before" ] || fail "the table has $targets targets, no more than $targets_before"
dmsetup table tank | grep -q mirror && fail "mirror targets left after the moves"
# The container is an SSD extent, used; the whole extents on the SSD are none.
assert_eq "SSD extents used" 1 "$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"
json_save pool pool show tank
# pool.locate of extent 10: its pieces 0-7 in the container's slots, the rest at home.
located=$(/usr/bin/python3 - "$TIERD_SOCKET" "$ext" <<'EOF'
import json, socket, sys
path, e = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_UNIX)
s.connect(path)
s.sendall((json.dumps({"protocol": 2, "method": "pool.locate",
                       "params": {"name": "tank", "ranges": [[10 * e, e]]}}) + "\n").encode())
print(s.makefile().readline().strip())
EOF
)
echo "$located"
assert_eq "extent 10's runs" "ssd:131072 hdd:$((ext - 131072))" \
	"$(jq -r '[.result.locate.runs[] | "\(.tier):\(.size_bytes)"] | join(" ")' <<<"$located")"
slot0=$(slots pieces "$hdd" "$ssd" | awk '$1 == 10 && $2 == 0 { print $4 }')
assert_eq "where extent 10's first run lies" "$slot0" \
	"$(jq -r '.result.locate.runs[0].device_offset_bytes' <<<"$located")"

step "a write to a piece out lands in its slot"
write_piece 10 5
write_piece 12 100
check "after the writes"

step "without piece heat, a split extent's reads count for each tier by its pieces' bytes"
# Extent 10 has 128 KiB of its 4 MiB out: 1/32 of reads spread evenly
# over it land on the SSD, and no weights say otherwise.
tierd_stop TERM
tierd_start --piece-heat=no --sample-interval 1
ssd_reads() { "$TIERCTL" stats tank --window 1h --json | jq '.stats.io | .reads * (.ssd_io_share // 0) | round'; }
before=$(ssd_reads)
fio --name=r --filename=$vol --direct=1 --rw=randread --bs=4k --offset=$((10 * ext)) \
	--size=$ext --io_size=$((3200 * 4096)) --norandommap --randrepeat=0 --output=/dev/null
sleep 2
after=$(ssd_reads)
echo "reads the SSD served: $before, then $after after 3,200 reads over extent 10"
[ $((after - before)) -ge 60 ] && [ $((after - before)) -le 140 ] ||
	fail "$((after - before)) of 3,200 reads counted for the SSD, not about 100"

# The moves before copied the pieces while the volume was suspended (the
# default); these copy them through mirrors.
step "pieces come home and others go out, copied through mirrors"
tierd_stop TERM
tierd_start --piece-copy mirror
tierctl_ok extent move tank 10 --tier hdd --pieces 0-3 >/dev/null
tierctl_ok extent move tank 20 --tier ssd --pieces 200-203 >/dev/null
tierctl_ok extent move tank 10 --tier ssd --pieces 0-7 >/dev/null # 0-3 again, 4-7 stay
assert_eq "pieces out" 15 "$(out)"
check "after pieces came home and went out again"
tierctl_ok extent move tank 0 --tier ssd >/dev/null
tierctl_fails 2 "only pieces of extents on the HDD tier go to the SSD" extent move tank 0 --tier ssd --pieces 0
tierctl_fails 2 "pool tank has pieces 0 to 255 of each extent" extent move tank 10 --tier ssd --pieces 256
tierctl_fails 2 "--pieces takes all, a piece number or a range" extent move tank 10 --tier ssd --pieces 3-1
check "after the refusals"

step "a restart from the state, then an import from the devices alone"
tierd_stop TERM
: >/tmp/tierd.log
tierd_start
wait_until 20 "the pool active" test -e $vol
grep "differs from generation\|newer than the state" /tmp/tierd.log &&
	fail "the state's pieces are not the devices'"
assert_eq "pieces out after a restart" 15 "$(out)"
check "after a restart"
tierd_stop TERM
dmsetup remove tank
rm -rf "$TIERD_STATE"
tierd_start
tierctl_ok pool import "$hdd" "$ssd" >/dev/null
assert_eq "pieces out after import" 15 "$(out)"
check "after import"
tierd_stop TERM

# Each step of a batch (tierd/move/migrate.c), and where the pieces moving
# must be after the restart: before the devices' commit where they were,
# from it where they went. Each step moves two pieces of extent 24 out, and
# two of extent 25's home.
# The steps before the devices' commit are one for the pieces (crash-points
# takes an extent's move through each); the last before it, and the two
# after it, that differ in whether the state has the commit too.
steps=(
	"move-after-suspend from"
	"commit-after-devices to"
	"move-after-commit to"
)
tierd_start
tierctl_ok extent move tank 25 --tier ssd --pieces 0-5 >/dev/null
tierd_stop TERM
k=0
for s in "${steps[@]}"; do
	read -r fault where <<<"$s"
	for move in "24 ssd" "25 hdd"; do
		read -r le tier <<<"$move"
		range=$k-$((k + 1))
		step "killed at $fault, during a move of pieces $range of extent $le to the $tier tier"
		TIERD_FAULT=$fault tierd_start
		before=$(out)
		"$TIERCTL" extent move tank "$le" --tier "$tier" --pieces "$range" &&
			fail "the move survived $fault"
		tierd_dead
		logged=$(wc -l </tmp/tierd.log)
		tierd_start
		dmsetup info tank | grep -q '^State: *ACTIVE' || fail "not active after the restart"
		# The batch's intents (step 1 of the protocol): the state's commit
		# takes them with it; before it, activation says what became of them.
		settled=$(tail -n +$((logged + 1)) /tmp/tierd.log | grep -o "[0-9]* piece moves were in flight.*" || true)
		case $fault in
		move-after-commit) want_settled= ;;
		commit-after-devices) want_settled="2 piece moves were in flight when tierd stopped: 2 had committed, 0 rolled back (their source places stayed authoritative)" ;;
		*) want_settled="2 piece moves were in flight when tierd stopped: 0 had committed, 2 rolled back (their source places stayed authoritative)" ;;
		esac
		assert_eq "the piece intents settled at activation" "$want_settled" "$settled"
		dmsetup table tank | grep -q mirror && fail "mirror targets left after the restart"
		grep -q "inconsistent" /tmp/tierd.log && fail "tierd found its map inconsistent"
		n=$(slots pieces "$hdd" "$ssd" | awk -v le="$le" -v a=$k -v b=$((k + 1)) \
			'$1 == le && $2 >= a && $2 <= b' | wc -l)
		delta=0
		if [ "$where" = to ]; then
			[ "$tier" = ssd ] && delta=2 || delta=-2
		fi
		if [ "$tier" = ssd ]; then want_n=$delta; else want_n=$((2 + delta)); fi
		assert_eq "pieces $range of extent $le out on the devices" $want_n "$n"
		assert_eq "pieces out in pool show" $((before + delta)) "$(out)"
		check "after a kill at $fault" 24 2
		tierd_stop TERM
	done
	k=$((k + 2))
done

step "a split extent moves whole once its pieces are home"
tierd_start
tierctl_fails 1 "extent 10 of pool tank is split into pieces: bring them home first" \
	extent move tank 10 --tier ssd
tierctl_ok extent move tank 10 --tier hdd --pieces all >/dev/null
check "with extent 10's pieces home"
tierctl_ok extent move tank 10 --tier ssd >/dev/null
check "after extent 10 moved whole"

left=$(out)
step "the SSD detaches with $left pieces out: they come home first"
[ "$left" -gt 0 ] || fail "no piece of another extent is out before the detach"
tierctl_ok tier detach tank --ssd "$ssd" >/dev/null
grep -q "$left pieces came home to detach $ssd" /tmp/tierd.log ||
	fail "tierd's log does not name the pieces the detach brought home"
assert_eq "pieces out after the detach" 0 "$(out)"
devs=$hdd
assert_eq "tiers after the detach" 1 "$(pool_field tank '.tiers | length')"
shown=$(slots show "$hdd")
grep -q "version 1 containers 0 pieces 0" <<<"$shown" || fail "the HDD's newest slot: $shown"
check "after the detach"
json_check
tierd_stop TERM
echo "pieces-move: ok"
