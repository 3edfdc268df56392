#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tierd is killed (SIGKILL) at random times during tiering runs that move
# extents both ways, while a writer of self-checking blocks keeps writing to
# the volume, before, during and after the kill. After each restart: the pool
# is active and passed the activation's allocation check, the volume has no
# mirror and no inactive table left, no run is still "running", every
# physical extent of the table is used once and each tier's accounting
# matches the table, and every block of the volume holds the last write the
# writer completed to it (tests/writelog: `writelog check`).
#
# TIERD_KILL_ROUNDS (default 5) kills; TIERD_KILL_SEED (default 1) chooses the
# times (up to TIERD_KILL_MAX_MS, default 2000, after a run starts) and the
# ranges pinned to the SSD. The long run (docs/testing.md) sets 50 rounds.
# vm-memory: 2048
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

WRITELOG=$TIERD_BUILD_DIR/tests/writelog/writelog
ROUNDS=${TIERD_KILL_ROUNDS:-5}
SEED=${TIERD_KILL_SEED:-1}
MAX_MS=${TIERD_KILL_MAX_MS:-2000}
RANDOM=$SEED
echo "kill-random: $ROUNDS rounds, seed $SEED, kills up to $MAX_MS ms into a run"
vm_modprobe loop dm-mod dm-mirror

# Big enough that a run moves some 40 extents, in about 1 to 4 s.
hdd=$(vm_loop_create 384M) ssd=$(vm_loop_create 128M)
hdd_mm=$(majmin "$hdd") ssd_mm=$(majmin "$ssd")
E=$((4 << 20))
S=$((E / 512))
vol=/dev/mapper/tank
J=/tmp/journal
# --verbose: the batches are logged at debug, and each says what it committed.
tierd_start --verbose
tierctl_ok pool create tank --hdd "$hdd" --extent-size 4M
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
# Runs go at full speed under the writer's load.
tierctl_ok schedule set tank manual --io-awareness off --rate 0
size=$(blockdev --getsize64 $vol)
nr=$((size / E))
# Pinned to the SSD each round: three ranges of k/3 extents at random places,
# k as many as the SSD holds outside its swap reserve; the rest of the volume
# is pinned to the HDD. A run then demotes the last round's that were not
# chosen again, and promotes the new ones.
k=$(pool_field tank '[.tiers[] | select(.class == "ssd") | .devices[] |
	.total_extents - .reserved_extents] | add')
echo "volume: $nr extents of 4 MiB, $k pinned to the SSD each round"
# 4096 blocks, about a hundred in each extent, spaced evenly: each costs an
# O_DIRECT write to fill and a read to check, tens of seconds for all
# 43,000 blocks of the volume under TCG.
known=(--device $vol --journal $J --blocks 4096)
t=$SECONDS
"$WRITELOG" write "${known[@]}" --fill --seed "$SEED"
echo "filled in $((SECONDS - t)) s"
writer_start() {
	"$WRITELOG" write "${known[@]}" --rate 100 --sync-every 16 --seed $((SEED * 1000 + $1)) \
		>/tmp/writer.out 2>&1 &
	WRITER=$!
}

# Stops the writer and checks that every block holds its last completed
# write: tierd died, not the machine, so nothing written may be lost.
check_data() {
	local last
	kill "$WRITER"
	wait "$WRITER" || fail "the writer failed: $(cat /tmp/writer.out)"
	last=$(sed -n 's/.*last seq \([0-9]*\).*/\1/p' /tmp/writer.out)
	[ -n "$last" ] || fail "the writer did not say its last seq: $(cat /tmp/writer.out)"
	"$WRITELOG" check --device $vol --journal $J --acked "$last" ||
		fail "$1: blocks lost writes (above)"
}
after_restart() {
	assert_eq "$1: pool state" active "$(pool_field tank .state)"
	grep -E "inconsistent|not activating" /tmp/tierd.log && fail "$1: tierd refused its map"
	assert_eq "$1: runs still running" 0 \
		"$("$TIERCTL" runs tank --limit 1000 --json | jq '[.runs[] | select(.result == "running")] | length')"
	local started=$SECONDS
	pool_check_table "$1" tank "$hdd" "$ssd"
	echo "table checked in $((SECONDS - started)) s"
	check_data "$1"
	echo "checked in $((SECONDS - started)) s"
}

# tierd_start, but patient: under a loaded host activation may take more
# than its 10 s. What tierd waits on is shown if it takes longer than that.
tierd_restart() {
	local i t
	"$TIERD" --state-dir "$TIERD_STATE" --socket "$TIERD_SOCKET" \
		--policy-dir "$TIERD_SOURCE_DIR/policies" --verbose 2>>/tmp/tierd.log &
	TIERD_PID=$!
	for ((i = 1; i <= 600; i++)); do
		"$TIERCTL" pool list >/dev/null 2>&1 && return 0
		kill -0 "$TIERD_PID" 2>/dev/null || { cat /tmp/tierd.log >&2; fail "tierd exited at start"; }
		if ((i == 100)); then
			echo "== tierd does not answer after 10 s"
			cat /tmp/tierd.log
			dmsetup info -c
			dmsetup status
			for t in /proc/"$TIERD_PID"/task/*; do
				echo "task $t: $(cat "$t/comm")"
				cat "$t/stack" 2>/dev/null || true
			done
			echo w >/proc/sysrq-trigger
		fi
		sleep 0.1
	done
	fail "tierd did not answer within 60 s"
}

declare -A landed
writer_start 0
t0=$SECONDS
for ((round = 1; round <= ROUNDS; round++)); do
	w=$((k / 3))
	chosen="$((RANDOM % (nr - w + 1))) $((RANDOM % (nr - w + 1))) $((RANDOM % (nr - w + 1)))"
	ms=$((RANDOM % MAX_MS))
	step "round $round at $((SECONDS - t0)) s: pin $w extents from each of $chosen to the SSD," \
		"kill -9 after $ms ms"
	"$TIERCTL" pin tank 0 "$size" --tier hdd >/dev/null || fail "pin to the HDD failed"
	for le in $chosen; do
		"$TIERCTL" pin tank $((le * E)) $((w * E)) --tier ssd >/dev/null || fail "pin at $le failed"
	done
	: >/tmp/tierd.log
	run=$("$TIERCTL" tier now tank --json | jq -r '.run.id')
	sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
	tierd_stop KILL
	# Where the kill landed, as the devices show it.
	if dmsetup info tank | grep -q '^State: *SUSPENDED'; then
		where=suspended
	elif dmsetup table tank | grep -q mirror; then
		where=copying
	elif dmsetup info tank | grep -q '^Tables present:.*INACTIVE'; then
		where=loaded
	elif grep -q "tiering run $run ([a-z-]*) " /tmp/tierd.log; then
		where=after-run
	else
		where=between
	fi
	echo "killed in run $run: $where; $(grep -c "extents: stall" /tmp/tierd.log || true) batches committed"
	grep -o "batch of .* copied in [0-9.]* s" /tmp/tierd.log | sed 's/stall.*moved, //' || true
	landed[$where]=$((${landed[$where]:-0} + 1))
	# The writer goes on while tierd is dead (it waits while suspended).
	sleep 1
	tierd_restart
	grep -E "in flight|adopt|newer" /tmp/tierd.log || true
	"$TIERCTL" runs tank --limit 1 --json |
		jq -c '.runs[0] | {id, result, planned_extents, promoted_extents, demoted_extents}'
	after_restart "round $round ($where)"
	writer_start "$round"
done
echo "kill-random: $ROUNDS kills in $((SECONDS - t0)) s, landed: $(for w in "${!landed[@]}"; do
	printf '%s=%s ' "$w" "${landed[$w]}"
done)"

step "runs after the last kill honour the pins"
for ((i = 0; i < 5; i++)); do
	[ "$("$TIERCTL" tier now tank --dry-run --json | jq .plan.planned_extents)" = 0 ] && break
	tierctl_ok tier now tank --wait >/dev/null
done
n=0
for le in $(pool_field tank '.pins[] | select(.tier == "ssd") |
	range(.first_extent; .first_extent + .extents)'); do
	dmsetup table tank | awk -v s=$((le * S)) -v d="$ssd_mm" '$1 <= s && s < $1 + $2 { exit $4 != d }' ||
		fail "extent $le, pinned to the SSD, is not on the SSD"
	n=$((n + 1))
done
echo "ok: the $n extents pinned to the SSD are on it"
tierd_stop TERM
echo "kill-random: ok"
