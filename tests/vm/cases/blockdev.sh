#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blockdev (how tierd examines and opens a device before writing to it) on real
# devices: sizes and block sizes as blockdev(8) reports them, signatures as
# blkid(8) finds them plus tierd's own, exclusive opens refused while md, dm or
# a mount holds the device, and O_DIRECT I/O that reads back with dd.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

T=$TIERD_BUILD_DIR/tests/kernel/test-blockdev
vm_modprobe loop dm-mod raid1 ext4

# loop_create SIZE LOSETUP_OPTION...: vm_loop_create with losetup options.
loop_create() {
	local size=$1 file
	shift
	mkdir -p /tmp/loops
	file=$(mktemp /tmp/loops/img.XXXXXX)
	truncate -s "$size" "$file"
	losetup --find --show "$@" "$file"
}

# probe_dev DEV: what blockdev_probe() finds, in probe[size], probe[lbs], ...
declare -A probe
probe_dev() {
	local out key value
	out=$("$T" probe "$1")
	probe=()
	while IFS='=' read -r key value; do
		probe[$key]=$value
	done <<<"$out"
}

# blkid_says DEV: blkid's TYPE, else pt:PTTYPE, else "".
blkid_says() {
	local line type="" pttype=""
	while read -r line; do
		case $line in
		TYPE=*) type=${line#TYPE=} ;;
		PTTYPE=*) pttype=pt:${line#PTTYPE=} ;;
		esac
	done <<<"$(blkid -p -o export "$1" || true)"
	echo "${type:-$pttype}"
}

# check_signature DEV WANT [BLKID_WANT]: blockdev_probe() finds WANT, blkid
# BLKID_WANT (WANT by default; blkid does not know tierd's superblock).
check_signature() {
	probe_dev "$1"
	assert_eq "signature of $1" "$2" "${probe[signature]}"
	assert_eq "blkid on $1" "${3-$2}" "$(blkid_says "$1")"
}

# check_geometry DEV: size, block sizes, rotational and number as the kernel says.
check_geometry() {
	local sys=/sys/block/${1#/dev/}
	probe_dev "$1"
	assert_eq "$1 size" "$(blockdev --getsize64 "$1")" "${probe[size]}"
	assert_eq "$1 logical block size" "$(blockdev --getss "$1")" "${probe[lbs]}"
	assert_eq "$1 physical block size" "$(blockdev --getpbsz "$1")" "${probe[pbs]}"
	assert_eq "$1 rotational" "$(cat "$sys/queue/rotational")" "${probe[rotational]}"
	assert_eq "$1 device number" "$(cat "$sys/dev")" "${probe[rdev]}"
}

# check_io DEV OFFSET: 1 MiB written at OFFSET with O_DIRECT, 128 KiB of it
# wiped 64 KiB in; dd must read back exactly that.
check_io() {
	vm_random_file /tmp/io $((1 << 20))
	"$T" io "$1" /tmp/io "$2" $(($2 + 65536)) 131072
	cp /tmp/io /tmp/io.want
	dd if=/dev/zero of=/tmp/io.want bs=64K seek=1 count=2 conv=notrunc status=none
	assert_eq "data on $1 at $2" "$(vm_digest /tmp/io.want)" "$(vm_digest "$1" $((1 << 20)) "$2")"
}

step "a fresh 512-byte-sector loop device"
plain=$(vm_loop_create 32M)
check_geometry "$plain"
check_signature "$plain" ""
echo 1 >"/sys/block/${plain#/dev/}/queue/rotational"
check_geometry "$plain"
assert_eq "rotational after setting it" 1 "${probe[rotational]}"
"$T" free "$plain"
check_io "$plain" $((3 << 20))

step "a 4096-byte-sector loop device"
big=$(loop_create 32M --sector-size 4096)
check_geometry "$big"
assert_eq "logical block size" 4096 "${probe[lbs]}"
check_io "$big" $((5 << 20))

step "paths that are not usable devices"
touch /tmp/regular
"$T" errors "$plain" /dev/no-such-device /tmp/regular

step "tierd's own superblock"
{ printf TIERDSB1; head -c 4088 /dev/zero; } >/tmp/sb
dd if=/tmp/sb of="$plain" bs=4096 count=1 oflag=direct conv=notrunc status=none
check_signature "$plain" tierd ""

step "ext4, and the same device mounted"
ext=$(vm_loop_create 16M)
mkfs.ext4 -q -F "$ext"
check_signature "$ext" ext4
mkdir -p /tmp/mnt
mount "$ext" /tmp/mnt
"$T" busy "$ext" ""
umount /tmp/mnt
"$T" free "$ext"

step "an md RAID1 member, while the array runs and after it stopped"
m1=$(vm_loop_create 16M)
m2=$(vm_loop_create 16M)
mdadm --create /dev/md0 --run --quiet --assume-clean --level=1 --raid-devices=2 \
	--metadata=1.2 "$m1" "$m2"
"$T" busy "$m1" md0
mdadm --stop /dev/md0
check_signature "$m1" linux_raid_member
"$T" free "$m1"

step "a device under a dm linear volume"
mm=$(cat "/sys/block/${big#/dev/}/dev")
echo "0 8192 linear $mm 0" | dmsetup create tierd-hold
"$T" busy "$big" "dm-$(dmsetup info -c --noheadings -o minor tierd-hold)"
dmsetup remove tierd-hold
"$T" free "$big"

step "a DOS partition table, and its partition"
pt=$(loop_create 16M --partscan)
# One entry, type 83, from sector 2048 for 2048 sectors; then the 55 aa mark.
{
	head -c 446 /dev/zero
	printf '\x00\x00\x00\x00\x83\x00\x00\x00\x00\x08\x00\x00\x00\x08\x00\x00'
	head -c 48 /dev/zero
	printf '\x55\xaa'
} >/tmp/mbr
dd if=/tmp/mbr of="$pt" bs=512 count=1 oflag=direct conv=notrunc status=none
blockdev --rereadpt "$pt"
check_signature "$pt" pt:dos
echo 1 >"/sys/block/${pt#/dev/}/queue/rotational"
probe_dev "${pt}p1"
assert_eq "partition size" $((1 << 20)) "${probe[size]}"
assert_eq "partition rotational, from its disk" 1 "${probe[rotational]}"
assert_eq "partition signature" "" "${probe[signature]}"

step "an LVM physical volume"
if command -v pvcreate >/dev/null; then
	pv=$(vm_loop_create 16M)
	pvcreate -q "$pv"
	check_signature "$pv" LVM2_member
else
	echo "skipped: lvm2 is not installed, LVM2_member not checked"
fi
echo "blockdev: ok"
