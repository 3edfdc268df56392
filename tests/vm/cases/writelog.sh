#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The write-log crash harness (docs/testing.md, "Write-log replay"). Each pool
# device sits on dm-log-writes; a scenario runs (create, attach, moves both
# ways, pieces out, between and home, detach) under a writer of known data that flushes now and then. Then
# every crash point the logs allow is rebuilt, each device keeping what it had
# flushed (and, right before a flush, part of what it had not), and judged by
# tests/writelog/check-cut: the pool imports from the devices alone and no
# acknowledged write is lost or replaced by older data.
#
# TIERD_WRITELOG_CUTS (default 24) caps the crash points judged, half at
# flushes and half at ticks; 0 judges every one. TIERD_WRITELOG_ROUNDS
# (default 1) repeats the moves. The long run (docs/testing.md) sets both.
# vm-memory: 4096
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

WRITELOG=$TIERD_BUILD_DIR/tests/writelog/writelog
CUTS=${TIERD_WRITELOG_CUTS:-24}
SEED=${TIERD_WRITELOG_SEED:-1}
ROUNDS=${TIERD_WRITELOG_ROUNDS:-1}
# The SSD's cache flush takes this long: the commit's devices then never
# flush between the same two ticks, so a crash point falls between them.
FLUSH_DELAY_MS=100
vm_modprobe loop dm-mod dm-log-writes dm-snapshot dm-delay dm-mirror

W=/tmp/wl
mkdir -p $W
mount -t tmpfs -o size=3G tmpfs $W
img() {
	truncate -s "$2" "$W/$1"
	losetup --find --show "$W/$1"
}
hdd=$(img hdd.img 256M) ssd=$(img ssd.img 96M)
hdd_log=$(img hdd.log 1200M) ssd_log=$(img ssd.log 1200M)
dmsetup create wl-hdd --table "0 $(blockdev --getsz "$hdd") log-writes $hdd $hdd_log"
dmsetup create wl-ssd-log --table "0 $(blockdev --getsz "$ssd") log-writes $ssd $ssd_log"
dmsetup create wl-ssd --table "0 $(blockdev --getsz "$ssd") delay /dev/mapper/wl-ssd-log 0 0 \
/dev/mapper/wl-ssd-log 0 0 /dev/mapper/wl-ssd-log 0 $FLUSH_DELAY_MS"

phase() {
	step "$1"
	dmsetup message wl-hdd 0 mark "phase:$1"
	dmsetup message wl-ssd-log 0 mark "phase:$1"
}
J=$W/journal
known=(write --device /dev/mapper/tank --journal $J --blocks 2048 --mark wl-hdd,wl-ssd-log
	--seed "$SEED")

# A scenario that stops making progress (tierd's log stands still for two
# minutes) shows the devices and the blocked tasks, then fails, rather than
# waiting for the case's timeout.
watchdog() {
	local last="" now
	while sleep 120; do
		now=$(wc -c </tmp/tierd.log)
		if [ "$now" = "$last" ]; then
			echo "== no progress for 120 s"
			dmsetup info -c
			dmsetup table
			tail -20 /tmp/tierd.log
			echo w >/proc/sysrq-trigger
			sleep 5
			kill -ABRT $$
		fi
		last=$now
	done
}
tierd_start
watchdog &
watcher=$!
tierctl_ok pool create tank --hdd /dev/mapper/wl-hdd --extent-size 1M
"$WRITELOG" tick --interval-ms 20 wl-hdd wl-ssd-log &
ticker=$!
phase fill
"$WRITELOG" "${known[@]}" --fill
phase attach
tierctl_ok tier attach tank --ssd /dev/mapper/wl-ssd --no-grow
"$WRITELOG" "${known[@]}" --rate 50 --sync-every 64 &
writer=$!
for ((round = 1; round <= ROUNDS; round++)); do
	phase "promote-$round"
	tierctl_ok extent move tank 16 24 --tier ssd
	phase "demote-$round"
	tierctl_ok extent move tank 16 12 --tier hdd
	phase "promote-again-$round"
	tierctl_ok extent move tank 120 20 --tier ssd
	# Pieces of 16 KiB: the writer's blocks, 128 KiB apart, are pieces 0, 8, 16...
	phase "pieces-out-$round"
	tierctl_ok extent move tank 200 4 --tier ssd --pieces 0-15
	phase "pieces-swap-$round"
	tierctl_ok extent move tank 200 2 --tier hdd --pieces 0-7
	tierctl_ok extent move tank 204 2 --tier ssd --pieces 0-31
	phase "pieces-home-$round"
	tierctl_ok extent move tank 200 8 --tier hdd --pieces all
	if ((round < ROUNDS)); then
		phase "demote-all-$round"
		tierctl_ok extent move tank 16 24 --tier hdd
		tierctl_ok extent move tank 120 20 --tier hdd
	fi
done
phase detach
tierctl_ok tier detach tank --ssd /dev/mapper/wl-ssd
phase end
kill $writer
wait $writer || fail "the writer failed: status $?"
kill $ticker
wait $ticker || fail "the ticker failed: status $?"
kill $watcher
tierd_stop
# Removing a log-writes target writes its log's last entries and count.
dmsetup remove tank
dmsetup remove wl-ssd
dmsetup remove wl-ssd-log
dmsetup remove wl-hdd
ls -ls $W

step "replay"
export WL_HDD_BASE WL_SSD_BASE WL_HDD_COW WL_SSD_COW WL_HDD_LOG WL_SSD_LOG WL_JOURNAL=$J
export TIERCTL WRITELOG
truncate -s 256M $W/hdd.base
truncate -s 96M $W/ssd.base
WL_HDD_BASE=$(losetup --find --show $W/hdd.base)
WL_SSD_BASE=$(losetup --find --show $W/ssd.base)
WL_HDD_COW=$(img hdd.cow 128M) WL_SSD_COW=$(img ssd.cow 64M)
WL_HDD_LOG=$W/hdd.log WL_SSD_LOG=$W/ssd.log
losetup -d "$hdd_log" "$ssd_log"
TIERD_STATE=/tmp/tierd-replay
tierd_start
"$WRITELOG" replay --log $W/hdd.log --image $W/hdd.base --log $W/ssd.log --image $W/ssd.base \
	--max "$CUTS" --seed "$SEED" --check "$TIERD_SOURCE_DIR/tests/writelog/check-cut" ||
	fail "crash points failed (above)"
tierd_stop
