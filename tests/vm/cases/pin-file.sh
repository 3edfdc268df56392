#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tierctl pin --file: on ext4 made on the volume, a file in several pieces is
# pinned where FIEMAP says its data lies (checked against filefrag's own
# answer), a tiering run moves exactly those extents to the SSD, and the file
# reads back the same. A request whose ranges include one bad range changes
# no pin at all. unpin --file removes the file's pins. tierctl locate
# reports the file's pieces on the tiers, one extent moved by hand, with
# device offsets that hold the file's bytes.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 160M)
ssd=$(vm_loop_create 64M)
ssd_mm=$(majmin "$ssd")
E=$((4 << 20))
tierd_start --sample-interval 1 --verify-moves
tierctl_ok pool create tank --hdd "$hdd"
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
vol=/dev/mapper/tank
size=$(blockdev --getsize64 $vol)
mnt=/tmp/mnt
mkdir -p $mnt
mkfs.ext4 -q -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 $vol
mount $vol $mnt

extent_dev() {
	dmsetup table tank | awk -v s=$(($1 * E / 512)) '$1 <= s && s < $1 + $2 { print $4 }'
}
pins() { pool_field tank '[.pins[] | "\(.first_extent)+\(.extents):\(.tier)"] | join(" ")'; }
# The extents that hold a file's data, from filefrag -v (4 KiB blocks), as
# "FIRST+COUNT" runs: what the pins must be.
file_extent_runs() {
	filefrag -v "$1" | awk -v bpe=$((E / 4096)) '
		# "  0:   0..  3071:   6494..   9565:   3072: ...": physical first and last block.
		$1 ~ /^[0-9]+:$/ {
			for (e = int(($4 + 0) / bpe); e <= int(($5 + 0) / bpe); e++) used[e] = 1
		}
		END { for (e in used) print e }' | sort -n | awk '
		NR == 1 || $1 != last + 1 { if (NR > 1) printf "%s+%d ", first, last - first + 1; first = $1 }
		{ last = $1 }
		END { if (NR) printf "%s+%d\n", first, last - first + 1 }' | sed 's/ $//'
}

step "a file in pieces, with other files' data between them"
vm_random_file /tmp/data $((24 << 20))
: >$mnt/f
for i in 0 1 2 3 4 5; do
	dd if=/tmp/data of=$mnt/f bs=1M skip=$((i * 4)) seek=$((i * 4)) count=4 conv=notrunc,fsync status=none
	dd if=/dev/urandom of=$mnt/filler$i bs=1M count=6 conv=fsync status=none
done
filefrag -v $mnt/f | sed -n '1,20p'
want=$(file_extent_runs $mnt/f)
echo "extents of the file: $want"
[ "$(wc -w <<<"$want")" -ge 2 ] || fail "the file was not split over separate extents: $want"
sum=$(md5sum </tmp/data | cut -d' ' -f1)

step "locate: the file's pieces on the tiers, one of its extents moved by hand"
moved=${want%%+*}
tierctl_ok extent move tank "$moved" 1 --tier ssd
"$TIERCTL" locate $mnt/f
loc=$("$TIERCTL" locate $mnt/f --json)
assert_eq "located bytes" $((24 << 20)) "$(jq '[.locate.pieces[].size_bytes] | add' <<<"$loc")"
jq -e --argjson lo $((moved * E)) --argjson hi $(((moved + 1) * E)) --arg ssd "$ssd" --arg hdd "$hdd" \
	'.locate.pieces | length > 1 and all(.[];
		if .volume_offset_bytes >= $lo and .volume_offset_bytes < $hi
		then .tier == "ssd" and .device == $ssd and .volume_offset_bytes + .size_bytes <= $hi
		else .tier == "hdd" and .device == $hdd end)' <<<"$loc" >/dev/null ||
	fail "locate does not match the moved extent $moved: $loc"
json_save locate locate $mnt/f
json_check
ssd_bytes=$(jq .locate.tiers.ssd_bytes <<<"$loc")
[ "$ssd_bytes" -gt 0 ] || fail "locate puts none of the file on the SSD: $loc"
# Each piece's device offset holds the file's bytes: read both ends of every piece.
while read -r foff len dev doff; do
	for at in 0 $((len - 4096)); do
		cmp -s <(dd if="$dev" bs=4096 skip=$(((doff + at) / 4096)) count=1 iflag=direct status=none) \
			<(dd if=$mnt/f bs=4096 skip=$(((foff + at) / 4096)) count=1 status=none) ||
			fail "$dev at $((doff + at)) does not hold byte $((foff + at)) of the file"
	done
done < <(jq -r '.locate.pieces[] | "\(.file_offset_bytes) \(.size_bytes) \(.device) \(.device_offset_bytes)"' <<<"$loc")

step "pin --file pins exactly the file's extents"
tierctl_ok pin tank --file $mnt/f --tier ssd
assert_eq "pins" "$(sed 's/\([0-9+]*\)/\1:ssd/g' <<<"$want")" "$(pins)"

step "a tiering run moves them to the SSD; the file reads back the same"
tierctl_ok tier now tank --wait
for run in $want; do
	for le in $(seq "${run%+*}" $((${run%+*} + ${run#*+} - 1))); do
		assert_eq "extent $le" "$ssd_mm" "$(extent_dev "$le")"
	done
done
assert_eq "the file's bytes on the HDD after the run" 0 \
	"$("$TIERCTL" locate $mnt/f --json | jq .locate.tiers.hdd_bytes)"
vm_drop_caches
assert_eq "file contents" "$sum" "$(md5sum <$mnt/f | cut -d' ' -f1)"

step "several ranges with one bad: nothing changes; locate refuses them too"
before=$(pins)
replies=$(/usr/bin/python3 - "$TIERD_SOCKET" "$E" "$size" <<'EOF'
import json, socket, sys
path, e, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_UNIX)
s.connect(path)
replies = s.makefile()
for method, params in (("pin.add", {"ranges": [[0, e], [size, e], [2 * e, e]], "tier": "hdd"}),
                       ("pin.add", {"ranges": [[0, e]], "offset_bytes": 0, "size_bytes": e,
                                    "tier": "hdd"}),
                       ("pool.locate", {"ranges": [[0, e], [size - 1, 2]]})):
    params.update(name="tank")
    s.sendall((json.dumps({"protocol": 2, "method": method, "params": params}) + "\n").encode())
    print(replies.readline().strip())
EOF
)
echo "$replies"
assert_eq "all refused" "false false false" "$(jq .ok <<<"$replies" | xargs)"
jq -r .error.message <<<"$replies" | head -n1 | grep -q "range 2 of 3 .*no range was changed" ||
	fail "the error does not name the bad range: $replies"
jq -r .error.message <<<"$replies" | sed -n 2p |
	grep -q "give either offset_bytes and size_bytes, or ranges" ||
	fail "ranges beside offset_bytes and size_bytes not refused as such: $replies"
jq -r .error.message <<<"$replies" | tail -n1 | grep -q "range 2 of 2 .*reaches past the volume's end" ||
	fail "pool.locate past the volume's end not refused as such: $replies"
assert_eq "pins after the refused requests" "$before" "$(pins)"

step "unpin --file removes them"
tierctl_ok unpin tank --file $mnt/f
assert_eq "pins after unpin" "" "$(pins)"
umount $mnt
tierd_stop TERM
echo "pin-file: ok"
