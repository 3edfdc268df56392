#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tierd-probe on the members of a real pool: the properties udev imports name
# the pool's uuid and name and each device's uuid as tierctl shows them; blank,
# ext4 and the pool's own volume are not members. Then the rule file in
# `udevadm test` (no udevd here): the probe's properties are imported for a
# member, not for a device blkid knows or a dm device with a tierd uuid.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

PROBE=$TIERD_BUILD_DIR/udev/tierd-probe
vm_modprobe loop dm-mod ext4

hdd=$(vm_loop_create 160M)
ssd=$(vm_loop_create 48M)
blank=$(vm_loop_create 16M)
ext=$(vm_loop_create 16M)
mkfs.ext4 -q -F "$ext"
tierd_start

step "create pool tank over $hdd (HDD) and $ssd (SSD)"
tierctl_ok pool create tank --hdd "$hdd" --ssd "$ssd"
pool_uuid=$(pool_field tank .uuid)
[ -n "$pool_uuid" ] || fail "tierctl shows no pool uuid"

# probe DEV: run tierd-probe, its output in props[], its status in probe_rc.
declare -A props
probe_rc=0
probe_out=
probe() {
	local key value
	probe_rc=0
	probe_out=$("$PROBE" "$1" 2>/tmp/probe.err) || probe_rc=$?
	props=()
	while IFS='=' read -r key value; do
		if [ -n "$key" ]; then
			props[$key]=$value
		fi
	done <<<"$probe_out"
}

# not_member WHAT DEV: nothing printed, exit 1, nothing on stderr.
not_member() {
	probe "$2"
	assert_eq "$1: probe status" 1 "$probe_rc"
	assert_eq "$1: probe output" "" "$probe_out"
	assert_eq "$1: probe messages" "" "$(cat /tmp/probe.err)"
}

step "each member names its pool and itself"
for dev in "$hdd" "$ssd"; do
	dev_uuid=$(pool_field tank ".tiers[].devices[] | select(.path == \"$dev\") | .uuid")
	[ -n "$dev_uuid" ] || fail "tierctl shows no uuid for $dev"
	probe "$dev"
	assert_eq "$dev: probe status" 0 "$probe_rc"
	assert_eq "$dev: lines" 10 "$(wc -l <<<"$probe_out")"
	assert_eq "$dev: ID_FS_TYPE" tierd_member "${props[ID_FS_TYPE]}"
	assert_eq "$dev: ID_FS_USAGE" raid "${props[ID_FS_USAGE]}"
	assert_eq "$dev: ID_FS_VERSION" 1 "${props[ID_FS_VERSION]}"
	assert_eq "$dev: ID_FS_UUID" "$pool_uuid" "${props[ID_FS_UUID]}"
	assert_eq "$dev: ID_FS_UUID_ENC" "$pool_uuid" "${props[ID_FS_UUID_ENC]}"
	assert_eq "$dev: ID_FS_UUID_SUB" "$dev_uuid" "${props[ID_FS_UUID_SUB]}"
	assert_eq "$dev: ID_FS_UUID_SUB_ENC" "$dev_uuid" "${props[ID_FS_UUID_SUB_ENC]}"
	assert_eq "$dev: ID_FS_LABEL" tank "${props[ID_FS_LABEL]}"
	assert_eq "$dev: ID_FS_LABEL_ENC" tank "${props[ID_FS_LABEL_ENC]}"
	assert_eq "$dev: TIERD_POOL_NAME" tank "${props[TIERD_POOL_NAME]}"
done
[ "$(pool_field tank '.tiers[].devices[].uuid' | sort -u | wc -l)" = 2 ] ||
	fail "the two devices do not have uuids of their own"

step "devices that are not members"
not_member "blank device" "$blank"
not_member "ext4" "$ext"
not_member "the pool's volume" /dev/mapper/tank
rc=0
"$PROBE" /dev/no-such-device 2>/tmp/probe.err || rc=$?
assert_eq "missing device: status" 1 "$rc"
grep -q 'No such file or directory' /tmp/probe.err || fail "missing device: $(cat /tmp/probe.err)"

step "the rule under udevadm test"
# udevadm finds the program by its bare name in its own directory, which is on
# the read-only root: a copy of that directory with the probe in it goes over
# it. Rules in /run/udev/rules.d are read with the installed ones.
udevlib=/usr/lib/udev
mkdir -p /tmp/udevlib /run/udev/rules.d
cp -a "$udevlib/." /tmp/udevlib/
cp "$PROBE" /tmp/udevlib/tierd-probe
mount --bind /tmp/udevlib "$udevlib"
cp "$TIERD_SOURCE_DIR/udev/69-tierd.rules" /run/udev/rules.d/

# udev_props ACTION DEV: the properties udevadm test ends with.
udev_props() {
	udevadm test --action="$1" "/sys/dev/block/$(majmin "$2")" \
		2>/tmp/udevadm.err | sed -n '/^[A-Z_][A-Z0-9_]*=/p' >/tmp/udevadm.out ||
		{ cat /tmp/udevadm.err >&2; fail "udevadm test $2 failed"; }
	cat /tmp/udevadm.out
}

# udev_prop KEY: one of them.
udev_prop() {
	sed -n "s/^$1=//p" /tmp/udevadm.out
}

# probe_ran: udevadm's log of the last test says the probe was started.
probe_ran() {
	grep -q "Starting 'tierd-probe " /tmp/udevadm.err
}

for dev in "$hdd" "$ssd"; do
	udev_props add "$dev" >/dev/null
	probe_ran || fail "$dev: the probe did not run: $(grep tierd /tmp/udevadm.err)"
	assert_eq "$dev: udev ID_FS_TYPE" tierd_member "$(udev_prop ID_FS_TYPE)"
	assert_eq "$dev: udev ID_FS_USAGE" raid "$(udev_prop ID_FS_USAGE)"
	assert_eq "$dev: udev ID_FS_UUID" "$pool_uuid" "$(udev_prop ID_FS_UUID)"
	assert_eq "$dev: udev ID_FS_UUID_SUB" \
		"$(pool_field tank ".tiers[].devices[] | select(.path == \"$dev\") | .uuid")" \
		"$(udev_prop ID_FS_UUID_SUB)"
	assert_eq "$dev: udev ID_FS_LABEL" tank "$(udev_prop ID_FS_LABEL)"
	assert_eq "$dev: udev SYSTEMD_WANTS" tierd.service "$(udev_prop SYSTEMD_WANTS)"
	# udevadm test saved the event's properties in the udev database, which is
	# where lsblk reads them.
	assert_eq "$dev: lsblk" "tierd_member 1 $pool_uuid tank" \
		"$(lsblk -nd -o FSTYPE,FSVER,UUID,LABEL "$dev" | tr -s ' ')"
done

udev_props add "$ext" >/dev/null
assert_eq "ext4: udev ID_FS_TYPE" ext4 "$(udev_prop ID_FS_TYPE)"
assert_eq "ext4: udev TIERD_POOL_NAME" "" "$(udev_prop TIERD_POOL_NAME)"
assert_eq "ext4: udev SYSTEMD_WANTS" "" "$(udev_prop SYSTEMD_WANTS)"
assert_eq "ext4: lsblk" ext4 "$(lsblk -nd -o FSTYPE "$ext")"
! probe_ran || fail "the probe ran on ext4"
udev_props add "$blank" >/dev/null
probe_ran || fail "the probe did not run on a blank device"
assert_eq "blank: udev ID_FS_TYPE" "" "$(udev_prop ID_FS_TYPE)"
assert_eq "blank: lsblk" "" "$(lsblk -nd -o FSTYPE "$blank" | tr -d ' ')"
# On remove udev brings back the database's properties: for a member its
# ID_FS_TYPE would skip the probe anyway, for a blank device only the rule can.
udev_props remove "$blank" >/dev/null
! probe_ran || fail "the probe ran on remove"

# The same first sectors of a member behind two dm devices: the one whose uuid
# says it is a tierd volume is skipped, the other is probed.
mm=$(majmin "$hdd")
echo "0 8192 linear $mm 0" | dmsetup create --uuid "TIERD-probe-test" probe-ours
echo "0 8192 linear $mm 0" | dmsetup create --uuid "OTHER-probe-test" probe-other
dmsetup mknodes
udev_props change /dev/mapper/probe-other >/dev/null
assert_eq "dm device of another owner: udev ID_FS_TYPE" tierd_member "$(udev_prop ID_FS_TYPE)"
udev_props change /dev/mapper/probe-ours >/dev/null
assert_eq "dm device with a tierd uuid: udev ID_FS_TYPE" "" "$(udev_prop ID_FS_TYPE)"
! probe_ran || fail "the probe ran on a tierd volume"
# Suspended: device-mapper's rules set DM_UDEV_DISABLE_OTHER_RULES_FLAG, and a
# read would wait for the resume. The timeout is for a rule that probes anyway
# (-k: udevadm outlives a SIGTERM while its program hangs).
dmsetup suspend probe-other
rc=0
timeout -k 5 60 udevadm test --action=change "/sys/dev/block/$(majmin /dev/mapper/probe-other)" \
	>/dev/null 2>/tmp/udevadm.err || rc=$?
dmsetup resume probe-other
assert_eq "udevadm test on a suspended dm device: status" 0 "$rc"
! probe_ran || fail "the probe ran on a suspended dm device"
dmsetup remove probe-ours
dmsetup remove probe-other

tierd_stop TERM
umount "$udevlib"
echo "probe: ok"
