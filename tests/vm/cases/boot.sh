#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# systemd as PID 1: tierd installed from the build tree and enabled, a pool
# over an md RAID6 of six disks plus an SSD disk, ext4 on its volume in
# /etc/fstab. Boot 2 mounts it with the data intact, tierd.service is active
# and the system is `running`, not degraded; with udev running the volume has
# its /dev/mapper and /dev/disk/by-id links.
# Boot 1 also moves extents both ways under the unit's hardening (offline:
# tierd's io_uring copy with O_DIRECT; live: the kernel's) and checks the
# data after each; journalctl TIERD_POOL=tank and TIERD_RUN=ID find tierd's
# lines, a run's summary with its bytes and rate, and no batch line without
# --verbose. Boot 3, in the long run (TIERD_VM_BOOTS=3, the vm-long test
# boot-late-ssd), has no SSD disk: the boot still finishes, the pool says
# what it misses; the disk plugged in then (qemu device_add), the pool
# activates by itself and the file system mounts, data intact.
# vm-init: systemd
# vm-install: build
# vm-disks: 64M 64M 64M 64M 64M 64M 96M
# vm-late-disk: 6 3
# vm-boots: 2
# vm-boots-any: yes
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

# Installed in boot 1: /usr/local (the build tree) or /usr (TIERD_VM_DEB).
TIERCTL=tierctl
# On a failure, what tierd said (and how it ended).
trap '[ $? = 0 ] || journalctl --no-pager -b -u tierd.service | tail -n 30' EXIT
hdds=(/dev/vda /dev/vdb /dev/vdc /dev/vdd /dev/vde /dev/vdf)
ssd=/dev/vdg
mnt=/srv/tank

# udevadm settle gives up after 120 s; a guest under TCG beside another VM
# once took longer than that to drain the events of a plugged disk and of
# the volume it completed. Wait longer, and on a timeout show what udev's
# workers are blocked in.
udev_stuck() {
	local pid
	ps -eo pid,etimes,stat,wchan:32,args --forest | grep -A3 '[s]ystemd-udevd'
	for pid in $(pgrep -f 'udev-worker'); do
		echo "worker $pid: $(cat /proc/"$pid"/wchan 2>/dev/null)"
		cat /proc/"$pid"/stack 2>/dev/null | head -n 8
	done
	fail "$1"
}
settle() {
	local t0=$SECONDS
	udevadm settle --timeout=600 || udev_stuck "udev's queue still not empty after 600 s"
	[ $((SECONDS - t0)) -lt 30 ] || echo "udev's queue took $((SECONDS - t0)) s to drain"
}
# udev_ready DEV: udev has processed DEV's events (its links and properties
# are there), whatever else is still queued.
udev_ready() {
	local t0=$SECONDS
	udevadm wait --timeout=600 --initialized=yes "$1" || udev_stuck "udev has not initialised $1 after 600 s"
	[ $((SECONDS - t0)) -lt 30 ] || echo "udev took $((SECONDS - t0)) s to initialise $1"
}

# What systemd thinks of the boot: `running`, or fail naming what is not.
check_running() {
	local state t0=$SECONDS
	state=$(systemctl is-system-running --wait) || true
	[ $((SECONDS - t0)) -lt 30 ] || echo "systemctl is-system-running --wait took $((SECONDS - t0)) s"
	if [ "$state" != running ]; then
		systemctl --no-pager --failed
		journalctl --no-pager -b -p warning | tail -n 40
		fail "boot $TIERD_VM_BOOT: the system is '$state'"
	fi
	echo "ok: the system is running"
	# systemd breaks an ordering cycle by dropping a job and carries on.
	if journalctl --no-pager -b -q | grep -i 'ordering cycle'; then
		fail "boot $TIERD_VM_BOOT: ordering cycles"
	fi
	systemd-analyze --no-pager | head -n 1
	# When the units that matter here started and how long they took, from
	# one call: `systemd-analyze blame` asks about every unit and took
	# minutes in a guest beside another VM.
	systemctl show -p Id -p InactiveExitTimestampMonotonic -p ActiveEnterTimestampMonotonic \
		tierd.service systemd-udev-trigger.service srv-tank.mount |
		awk -F= 'function unit() { if (t1 > 0 && t0 > 0) printf "%s: started at %.1f s, took %.1f s\n", id, t0 / 1e6, (t1 - t0) / 1e6; id = ""; t0 = t1 = 0 }
			$0 == "" { unit() } $1 == "Id" { id = $2 }
			$1 == "InactiveExitTimestampMonotonic" { t0 = $2 } $1 == "ActiveEnterTimestampMonotonic" { t1 = $2 }
			END { unit() }'
}

# The installed unit runs tierd, which answers.
check_tierd() {
	assert_eq "tierd.service" active "$(systemctl is-active tierd.service)"
	echo "tierd: $(systemctl show -P StatusText tierd.service)"
	"$TIERCTL" pool list >/dev/null || fail "tierctl pool list"
}

# check_data WHAT: the file on the mounted volume, read from the devices.
check_data() {
	vm_drop_caches
	assert_eq "$1" "$(cat "$VM_SHARE/want")" "$(vm_digest "$mnt/data")"
}

# move_some FIRST COUNT TIER: a live move, then the table checks.
move_some() {
	tierctl_ok extent move tank "$1" "$2" --tier "$3" >/dev/null
	pool_check_table "after moving $2 extents from $1 to $3" tank /dev/md/hdd $ssd
}

case "$TIERD_VM_BOOT" in
1)
	if [ -e "$VM_SHARE/install.deb" ]; then
		step "install the package, enable and start tierd.service"
		dpkg -i "$VM_SHARE/install.deb"
	else
		step "install the build tree, enable and start tierd.service"
		tar -C "$VM_SHARE/install" -cf - . | tar -C / -xf - --keep-directory-symlink
		systemctl daemon-reload
	fi
	# tierd.conf where this install reads it (/etc or /usr/local/etc).
	conf=$(tierd --check-config | cut -d: -f1)
	mkdir -p "$(dirname "$conf")"
	echo "socket-group = adm" >"$conf"
	systemctl enable tierd.service
	systemctl start tierd.service
	echo "tierctl: $(command -v tierctl)"
	check_tierd

	step "socket-group under the unit: a member of adm reads, and only reads"
	sock=/run/tierd/tierd.sock
	assert_eq "the socket's group" "adm 660" "$(stat -c '%G %a' $sock)"
	setpriv --reuid=nobody --regid=adm --clear-groups tierctl pool list >/dev/null ||
		fail "a member of adm could not list the pools"
	rc=0
	out=$(setpriv --reuid=nobody --regid=adm --clear-groups tierctl schedule set tank manual 2>&1) ||
		rc=$?
	[ "$rc" != 0 ] && grep -q "only root may call it" <<<"$out" ||
		fail "a member of adm changed something (status $rc: $out)"
	echo "ok: adm reads, changes stay root's"

	step "md RAID6 over ${hdds[*]}"
	# Zero-filled members: the parity is already right (see md-raid6.sh).
	mdadm --create /dev/md/hdd --name=hdd --run --quiet --assume-clean --level=6 \
		--chunk=64 --raid-devices=6 --metadata=1.2 "${hdds[@]}"
	mdadm --detail --scan >>/etc/mdadm/mdadm.conf
	settle

	step "pool, ext4 and the fstab line"
	tierctl_ok pool create tank --hdd /dev/md/hdd --extent-size 1M
	tierctl_ok tier attach tank --ssd $ssd --no-grow >/dev/null
	mkfs.ext4 -q /dev/mapper/tank
	mkdir -p $mnt
	# nofail: a boot with a device of the pool missing goes on without it.
	# 120 s: on a loaded host udev assembles the array late in a slow boot
	# (the volume came 30 s after tierd started in one CI run).
	echo "/dev/mapper/tank $mnt ext4 nofail,x-systemd.device-timeout=120s 0 2" >>/etc/fstab
	systemctl daemon-reload
	mount $mnt
	vm_random_file $mnt/data $((24 << 20))
	vm_digest $mnt/data >"$VM_SHARE/want"
	check_data "data written"

	step "moves of the file's first 16 MiB under the unit's hardening"
	# So that the first live move has the kernel load it under the unit.
	modprobe -r dm_mirror 2>/dev/null || true
	grep -q '^dm_mirror ' /proc/modules && fail "dm_mirror is loaded before the first live move"
	# The extent (1 MiB) that holds the file's first block.
	first=$(filefrag -v $mnt/data | awk '$1 == "0:" { sub(/\.\./, "", $4); print int($4 * 4096 / 1048576) }')
	[ -n "$first" ] || fail "no extent list for $mnt/data"
	move_some "$first" 8 ssd
	check_data "data after a live move to the SSD"
	umount $mnt
	tierctl_ok pool deactivate tank
	tierctl_ok extent move tank $((first + 8)) 8 --tier ssd >/dev/null
	tierctl_ok pool activate tank
	pool_check_table "after the offline move" tank /dev/md/hdd $ssd
	assert_eq "SSD extents used" 16 "$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"
	mount $mnt
	check_data "data after an offline move to the SSD"
	move_some "$first" 4 hdd
	check_data "data after a live move back"
	[ -z "$(journalctl -b -u tierd.service -g 'SIGSYS|Bad system call' -q)" ] ||
		fail "tierd hit the system call filter"

	step "the journal's fields: journalctl TIERD_POOL=tank, TIERD_RUN=ID"
	tierctl_ok tier now tank --wait >/dev/null
	run=$("$TIERCTL" runs tank --json | jq -r '.runs[0].id')
	journalctl --sync
	journalctl --no-pager -b -q -o cat TIERD_POOL=tank >/tmp/pool.log
	cat /tmp/pool.log
	for line in "pool tank created" "pool tank: SSD $ssd attached" "pool tank: 8 extents moved"; do
		grep -q "^$line" /tmp/pool.log || fail "no line '$line' under TIERD_POOL=tank"
	done
	grep -q "^pool tank: tiering run $run " /tmp/pool.log || fail "no line of run $run under TIERD_POOL=tank"
	journalctl --no-pager -b -q TIERD_POOL=nosuch | grep . && fail "lines under TIERD_POOL=nosuch"
	# One summary per run: what moved, the bytes, the time and the rate.
	summary=$(journalctl --no-pager -b -q -o cat TIERD_POOL=tank TIERD_RUN="$run" -p info |
		grep "^pool tank: tiering run $run (on-demand) [a-z]*: ")
	echo "$summary"
	grep -qE "; [0-9.]+ [KMGT]?i?B in [0-9.]+ s, [0-9.]+ [KMGT]?i?B/s" <<<"$summary" ||
		fail "run $run's summary lacks bytes, duration and rate: $summary"
	fields=$(journalctl --no-pager -b -q -o json TIERD_POOL=tank TIERD_RUN="$run" | tail -n 1 |
		jq -r '[.PRIORITY, .SYSLOG_IDENTIFIER, (.CODE_FILE | test("runs\\.c$")), (.CODE_LINE | length > 0), .CODE_FUNC, ._SYSTEMD_UNIT] | map(tostring) | join(" ")')
	assert_eq "the summary's fields" "6 tierd true true tiering_run_summary tierd.service" "$fields"
	# The moves above ran in batches: at debug, not in the journal without --verbose.
	journalctl --no-pager -b -q -u tierd.service | grep "batch of" && fail "batch lines without --verbose"
	echo "ok: journalctl TIERD_POOL=tank has $(wc -l </tmp/pool.log) lines, run $run's among them"
	check_running
	# The unit's exposure score, for the record; it asks about much and is slow under TCG.
	timeout 120 systemd-analyze security tierd.service --no-pager | tail -n 1 || true
	;;
3)
	step "boot $TIERD_VM_BOOT: no SSD disk"
	check_running
	check_tierd
	pool_field tank .inactive_reason | grep -q missing ||
		fail "the pool does not say it misses a device: $("$TIERCTL" pool show tank)"
	echo "ok: tank: $(pool_field tank .state): $(pool_field tank .inactive_reason)"
	findmnt $mnt && fail "$mnt is mounted without the SSD"
	# device-timeout (30 s) counts from tierd's start, which a quick boot
	# reaches here before.
	still_inactive() { journalctl --no-pager -b -u tierd.service -q | grep 'still inactive'; }
	wait_until 90 "tierd reporting the pool after device-timeout" still_inactive

	step "plug the SSD disk in"
	d=$(vm_plug_late_disk)
	echo "the SSD disk is $d"
	wait_until 30 "the pool activating once $d is there" test "$(pool_field tank .state)" = active
	udev_ready /dev/mapper/tank
	systemctl start srv-tank.mount
	assert_eq "what is mounted on $mnt" /dev/mapper/tank "$(findmnt -n -o SOURCE $mnt)"
	check_data "data after the SSD came back"
	pool_check_table "after the SSD came back" tank /dev/md/hdd "$d"
	;;
*)
	step "boot $TIERD_VM_BOOT: the volume mounted from /etc/fstab"
	check_running
	check_tierd
	assert_eq "pool state" active "$(pool_field tank .state)"
	assert_eq "what is mounted on $mnt" /dev/mapper/tank "$(findmnt -n -o SOURCE $mnt)"
	check_data "data after reboot $((TIERD_VM_BOOT - 1))"
	pool_check_table "boot $TIERD_VM_BOOT" tank /dev/md/hdd $ssd

	step "udev's links for the volume"
	udev_ready /dev/mapper/tank
	# udev's rules link both to dm-N; a node libdevmapper made in
	# /dev/mapper (no udev sync) would keep udev from linking it.
	dm=/dev/$(basename "$(readlink -f /sys/dev/block/"$(majmin /dev/mapper/tank)")")
	for link in /dev/mapper/tank /dev/disk/by-id/dm-name-tank; do
		if [ ! -L $link ] || [ "$(readlink -f $link)" != "$dm" ]; then
			ls -l /dev/mapper /dev/disk/by-id
			journalctl --no-pager -b -u systemd-udevd -q | tail -n 20
			fail "$link is not udev's link to $dm"
		fi
		echo "ok: $link -> $(readlink $link)"
	done
	udevadm info -q property $dm | grep -E '^(DM_NAME|DM_UDEV_RULES_VSN|SYSTEMD_READY|DM_UDEV_DISABLE)' || true
	# 69-tierd.rules and tierd-probe, installed with tierd, under real udev.
	assert_eq "the md array's file system type (lsblk)" tierd_member "$(lsblk -dno FSTYPE /dev/md/hdd)"

	step "systemctl reload: SIGHUP, tierd stays"
	pid=$(systemctl show -P MainPID tierd.service)
	systemctl reload tierd.service
	assert_eq "tierd.service after a reload" active "$(systemctl is-active tierd.service)"
	assert_eq "tierd's pid after a reload" "$pid" "$(systemctl show -P MainPID tierd.service)"
	;;
esac
# Boot 3 has no SSD: its mount waits out the whole timeout, keep it short.
if [ "$TIERD_VM_BOOT" = 2 ] && [ "$TIERD_VM_BOOTS" -ge 3 ]; then
	sed -i 's/x-systemd.device-timeout=120s/x-systemd.device-timeout=30s/' /etc/fstab
fi
echo "boot: boot $TIERD_VM_BOOT ok"
