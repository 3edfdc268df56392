#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A state directory on a tierd volume (here a copy of the state on an ext4
# made on the volume, and on an LVM-free dm-linear stacked over it): the
# first commit would wait on itself, SQLite syncing on a volume tierd holds
# suspended. tierd must refuse to start and say why, and start again with
# the state where it belongs.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

vm_modprobe loop dm-mod dm-mirror ext4
hdd=$(vm_loop_create 128M)
vol=/dev/mapper/tank
tierd_start
tierctl_ok pool create tank --hdd "$hdd" --extent-size 1M
tierd_stop

refuses() {
	local rc=0
	# Still running after 30 s (status 124): it started.
	timeout 30 "$TIERD" --state-dir "$1" --socket /run/tierd/other.sock \
		--policy-dir "$TIERD_SOURCE_DIR/policies" 2>/tmp/refused.log || rc=$?
	[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "tierd started with its state on the volume ($2)"
	grep -q "lives on pool tank's volume" /tmp/refused.log ||
		fail "tierd did not say why ($2): $(cat /tmp/refused.log)"
	echo "ok: tierd refuses a state directory on the volume ($2)"
}

step "state on an ext4 on the volume"
mkfs.ext4 -q $vol
mkdir -p /tmp/mnt-t
mount $vol /tmp/mnt-t
cp -a "$TIERD_STATE" /tmp/mnt-t/state
refuses /tmp/mnt-t/state "ext4 on the volume"
umount /tmp/mnt-t

step "state on a device stacked on the volume"
dmsetup create over-tank --table "0 $(blockdev --getsz $vol) linear $vol 0"
mkfs.ext4 -q /dev/mapper/over-tank
mount /dev/mapper/over-tank /tmp/mnt-t
cp -a "$TIERD_STATE" /tmp/mnt-t/state
refuses /tmp/mnt-t/state "ext4 on a dm-linear over the volume"
umount /tmp/mnt-t
dmsetup remove over-tank

step "the state where it belongs"
tierd_start
assert_eq "pool state" active "$(pool_field tank .state)"
tierd_stop
