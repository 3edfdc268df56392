#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The power fails at a random time during a tiering run that moves extents
# both ways under a writer of self-checking blocks, on disks qemu opens with
# O_DIRECT (cache=none: a flush from the guest is an fdatasync on the host).
# After each boot tierd activates the pool by itself (the activation's
# allocation check passed), no run is left "running", the table has no
# mirror, maps every physical extent once and matches each tier's
# accounting, and every block holds data written to it, none older than its
# last acknowledged write (`writelog check`). The next run starts from there.
#
# Each boot but the last ends in a power cut: TIERD_VM_BOOTS=21 gives 20 cuts
# (docs/testing.md). TIERD_CUT_SEED (default 1) chooses the times (up to
# TIERD_CUT_MAX_MS, default 2000, after a run starts) and the pinned ranges.
# vm-disks: 384M 128M 64M
# vm-boots: 3
# vm-boots-any: yes
# vm-cache: none
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

WRITELOG=$TIERD_BUILD_DIR/tests/writelog/writelog
SEED=${TIERD_CUT_SEED:-1}
MAX_MS=${TIERD_CUT_MAX_MS:-2000}
RANDOM=$((SEED * 1000 + TIERD_VM_BOOT))
echo "powercut-random: boot $TIERD_VM_BOOT of $TIERD_VM_BOOTS, seed $SEED"

# /dev/vda is the HDD, /dev/vdb the SSD; tierd's state lives on an ext4 on
# /dev/vdc. The writer's journal is in the shared folder, on the host: its
# record of a write goes out before the write, and survives the cut.
hdd=/dev/vda ssd=/dev/vdb
ssd_mm=$(majmin $ssd)
E=$((4 << 20))
vol=/dev/mapper/tank
J=$VM_SHARE/journal
mkdir -p /run/state
[ "$TIERD_VM_BOOT" = 1 ] && mkfs.ext4 -q /dev/vdc
mount /dev/vdc /run/state
TIERD_STATE=/run/state/tierd
known=(--device $vol --journal $J)

# The highest seq the journal calls acknowledged (records of 16 bytes after
# a 16-byte head: kind 'A' = 65, block, seq).
journal_acked() {
	od -An -v -t u4 -w16 -j16 "$J" | awk '$1 == 65 { a = $3 + $4 * 4294967296 } END { printf "%d\n", a }'
}
check_after_boot() {
	local acked
	tierd_start
	grep -E "in flight|newer|warn|error" /tmp/tierd.log || true
	assert_eq "pool state after the power cut" active "$(pool_field tank .state)"
	grep -E "inconsistent|not activating" /tmp/tierd.log && fail "tierd refused its map"
	assert_eq "runs still running" 0 \
		"$("$TIERCTL" runs tank --limit 1000 --json | jq '[.runs[] | select(.result == "running")] | length')"
	"$TIERCTL" runs tank --limit 1 --json |
		jq -M -c '.runs[0] | {id, result, planned_extents, promoted_extents, demoted_extents}'
	pool_check_table "after cut $((TIERD_VM_BOOT - 1))" tank $hdd $ssd
	acked=$(journal_acked)
	echo "journal: $(($(stat -c %s "$J") / 16 - 1)) records, acknowledged up to $acked"
	"$WRITELOG" check "${known[@]}" --acked "$acked" || fail "acknowledged writes lost (above)"
	# The last boot's writes after its last ack may or may not have landed:
	# this boot's acks must not cover them. A fill writes every block anew
	# and acks it, so the next check needs nothing older than the fill.
	"$WRITELOG" write "${known[@]}" --blocks 4096 --fill --seed "$RANDOM" >/dev/null
}
# Three ranges of k/3 extents pinned to the SSD at random places, the rest
# of the volume to the HDD: the run demotes the last boot's ranges that were
# not chosen again and promotes the new ones. Then the power fails.
run_and_cut() {
	local nr k w chosen ms le run where
	nr=$(($(blockdev --getsize64 $vol) / E))
	k=$(pool_field tank '[.tiers[] | select(.class == "ssd") | .devices[] |
		.total_extents - .reserved_extents] | add')
	w=$((k / 3))
	chosen="$((RANDOM % (nr - w + 1))) $((RANDOM % (nr - w + 1))) $((RANDOM % (nr - w + 1)))"
	ms=$((RANDOM % MAX_MS))
	step "pin $w extents from each of $chosen to the SSD, power cut after $ms ms"
	"$WRITELOG" write "${known[@]}" --blocks 4096 --rate 100 --sync-every 16 --seed "$RANDOM" &
	"$TIERCTL" pin tank 0 "$(blockdev --getsize64 $vol)" --tier hdd >/dev/null || fail "pin to the HDD failed"
	for le in $chosen; do
		"$TIERCTL" pin tank $((le * E)) $((w * E)) --tier ssd >/dev/null || fail "pin at $le failed"
	done
	: >/tmp/tierd.log
	run=$("$TIERCTL" tier now tank --json | jq -r '.run.id')
	sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
	# Where the cut lands, as the devices show it (a few ms before it).
	if [[ $(dmsetup info tank) == *SUSPENDED* ]]; then
		where=suspended
	elif [[ $(dmsetup table tank) == *mirror* ]]; then
		where=copying
	elif [[ $(</tmp/tierd.log) == *"tiering run $run (on-demand) "* ]]; then
		where=after-run
	else
		where=between
	fi
	# The console may lose its last lines at the cut: the next boot says it.
	echo "run $run: $where" >>"$VM_SHARE/landed"
	vm_power_cut
}

if [ "$TIERD_VM_BOOT" = 1 ]; then
	tierd_start
	tierctl_ok pool create tank --hdd $hdd --extent-size 4M
	tierctl_ok tier attach tank --ssd $ssd --no-grow
	tierctl_ok schedule set tank manual --io-awareness off --rate 0 >/dev/null
	"$WRITELOG" write "${known[@]}" --blocks 4096 --fill --seed "$SEED"
else
	step "after power cut $((TIERD_VM_BOOT - 1)), in $(tail -n1 "$VM_SHARE/landed")"
	check_after_boot
fi
if [ "$TIERD_VM_BOOT" -lt "$TIERD_VM_BOOTS" ]; then
	run_and_cut
fi

step "runs after the last cut honour the pins"
"$WRITELOG" write "${known[@]}" --blocks 4096 --rate 100 --sync-every 16 --seed "$RANDOM" >/tmp/writer.out &
writer=$!
for ((i = 0; i < 5; i++)); do
	[ "$("$TIERCTL" tier now tank --dry-run --json | jq .plan.planned_extents)" = 0 ] && break
	tierctl_ok tier now tank --wait >/dev/null
done
n=0
for le in $(pool_field tank '.pins[] | select(.tier == "ssd") |
	range(.first_extent; .first_extent + .extents)'); do
	dmsetup table tank | awk -v s=$((le * E / 512)) -v d="$ssd_mm" '$1 <= s && s < $1 + $2 { exit $4 != d }' ||
		fail "extent $le, pinned to the SSD, is not on the SSD"
	n=$((n + 1))
done
echo "ok: the $n extents pinned to the SSD are on it"
kill $writer
wait $writer || fail "the writer failed: $(cat /tmp/writer.out)"
pool_check_table "after the last runs" tank $hdd $ssd
# No cut since the writer stopped: every write it made must be there.
last=$(sed -n 's/.*last seq \([0-9]*\).*/\1/p' /tmp/writer.out)
"$WRITELOG" check "${known[@]}" --acked "$last" || fail "writes lost (above)"
tierd_stop TERM
echo "powercut-random: $((TIERD_VM_BOOTS - 1)) power cuts, landed:" \
	"$(cut -d' ' -f3 "$VM_SHARE/landed" 2>/dev/null | sort | uniq -c | xargs)"
echo "powercut-random: ok"
