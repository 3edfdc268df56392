#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Heat in zones: a pool of 1 TiB + 32 GiB (270,000 extents) under a 4 MiB
# heat budget gets one coarse dm-stats region of 2 GiB zones and fine regions
# only where it is hot. Six hot extents scattered over three far-apart zones
# make those zones fine, come out on top with their own heat (zone-mates
# cold), and are what a run promotes, data intact; the kernel regions are
# what pool show reports, within the budget; after a restart the hot zones
# are fine again at once, from the stored heat; a fresh tierd imports the
# pool from its devices alone, the hot extents still on the SSD, data intact.
#
# TIERD_HEAT_ZONES_TIB=N makes the HDD N TiB (and the SSD N * 32 GiB) under
# the default heat budget: the NAS-sized run, e.g. 128 TiB, 34 million
# extents (docs/testing.md):
#   TIERD_HEAT_ZONES_TIB=128 TIERD_VM_MEMORY=8192 tests/vm/vm-test --timeout 3600 heat-zones
#
# Two CPUs: a dm-stats area's kernel memory counts per possible CPU, and the
# zone sizes asserted below are those of a 2-CPU guest.
# vm-cpus: 2
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

TIB=${TIERD_HEAT_ZONES_TIB:-1}
big=/tmp/big
mkdir -p $big
mount -t tmpfs -o size=$((TIB * 2))T tmpfs $big
truncate -s "${TIB}T" $big/hdd.img
truncate -s "$((TIB * 32))G" $big/ssd.img
hdd=$(losetup --find --show $big/hdd.img)
ssd=$(losetup --find --show $big/ssd.img)
# Without piece heat: its windows would take an eighth of the budget from
# the zones asserted here (piece-windows has them).
opts=(--sample-interval 1 --flush-interval 2 --piece-heat=no)
[ "$TIB" -ne 1 ] || opts+=(--heat-kernel-memory 4M)
# A restart of a huge pool answers once its heat and map are loaded.
[ "$TIB" -eq 1 ] || export TIERD_START_WAIT=600
tierd_start "${opts[@]}"
t0=$(date +%s.%N)
tierctl_ok pool create tank --hdd "$hdd" --ssd "$ssd"
echo "pool create: $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }") s"
vol=/dev/mapper/tank
E=$((4 << 20))
show=$("$TIERCTL" pool show tank)
grep -i heat <<<"$show"
json_save pool pool show tank
assert_eq "heat enabled" true "$(pool_field tank .heat.enabled)"
ZE=$(($(pool_field tank .heat.zone_bytes) / E))
if [ "$TIB" -eq 1 ]; then
	# Extents per zone: 256 (1 GiB) is the smallest whose coarse region fits
	# 1/8 of 4 MiB, but there 32 fine zones (the cap) use only part of the
	# budget; at 512 the budget binds first (lib/zone.c).
	assert_eq "zone size" $((512 * E)) "$(pool_field tank .heat.zone_bytes)"
	grep -q "on in zones of 2.0 GiB" <<<"$show" || fail "pool show does not say heat is in zones"
fi
[ "$ZE" -ge 512 ] || fail "zones of $ZE extents: the hot extents below need 512"
sectors_per_zone=$((ZE * E / 512))
extents=$(pool_field tank .total_extents)
assert_eq "zones" $(((extents + ZE - 1) / ZE)) "$(pool_field tank .heat.zones)"
per_area=$(pool_field tank .heat.area_kernel_bytes)
max_fine=$(pool_field tank .heat.max_fine_zones)
zones=$(pool_field tank .heat.zones)
limit=$(pool_field tank .heat.kernel_limit_bytes)
# The guard's area per 64 zones comes off the budget first.
guard=$(((zones + 63) / 64))
fits=$(((limit - limit / 65 - zones * per_area) / (ZE * per_area)))
assert_eq "fine zones at most" $((fits < 32 ? fits : 32)) "$max_fine"

# regions_match: one coarse region over the volume, the guard over it (an
# area per 64 zones) and one per fine zone, as pool show counts them, and
# their areas' kernel memory within the budget.
regions_match() {
	local list fine kernel limit before tries=0
	# tierd may make a zone fine or coarse between two reads: the kernel's
	# list is taken between two equal reports of tierd's, or again.
	while :; do
		before=$("$TIERCTL" pool show tank --json | jq -c '.pool.heat | [.fine_zones, .kernel_bytes]')
		list=$(dmsetup message tank 0 "@stats_list tierd")
		fine=$(pool_field tank .heat.fine_zones)
		kernel=$(pool_field tank .heat.kernel_bytes)
		[ "$before" = "[$fine,$kernel]" ] && break
		tries=$((tries + 1))
		[ $tries -lt 10 ] || fail "tierd's fine zones keep changing: $before, then [$fine,$kernel]"
		sleep 1
	done
	limit=$(pool_field tank .heat.kernel_limit_bytes)
	assert_eq "dm-stats regions" $((2 + fine)) "$(grep -c . <<<"$list")"
	assert_eq "coarse region" 1 "$(grep -c ": 0+$((extents * E / 512)) $sectors_per_zone tierd" <<<"$list")"
	assert_eq "guard region" 1 "$(grep -c ": 0+$((extents * E / 512)) $((64 * sectors_per_zone)) tierd" <<<"$list")"
	assert_eq "kernel memory" $(((zones + guard + fine * ZE) * per_area)) "$kernel"
	[ "$kernel" -le "$limit" ] || fail "kernel memory $kernel over the budget $limit"
}
regions_match

# Two hot extents in each of three far-apart zones: 50, 250 and 450 of the
# 1 TiB pool's 540, at the same places in a larger one.
za=$((zones * 50 / 540))
zb=$((zones * 250 / 540))
zc=$((zones * 450 / 540))
hot="$((za * ZE + 7)) $((za * ZE + 401)) $((zb * ZE + 64)) $((zb * ZE + 65)) $((zc * ZE)) $((zc * ZE + 511))"
step "known data in the hot extents: $hot"
for le in $hot; do
	vm_random_file /tmp/data.$le $E
	dd if=/tmp/data.$le of=$vol bs=1M seek=$((le * 4)) oflag=direct conv=notrunc status=none
done
random_reads() {
	fio --name=r --filename=$vol --direct=1 --rw=randread --bs=4k --offset=$(($1 * E)) \
		--size=$E --number_ios="$2" --randrepeat=0 --output=/dev/null
}
# fine_zone Z: zone Z has a fine region (areas of one extent).
fine_zone() {
	dmsetup message tank 0 "@stats_list tierd" |
		grep -q ": $(($1 * sectors_per_zone))+$sectors_per_zone $((E / 512)) tierd"
}
hot_zones_fine() { fine_zone $za && fine_zone $zb && fine_zone $zc; }

step "a few reads make the three zones fine"
for le in $hot; do random_reads $le 50; done
wait_until 60 "zones $za, $zb and $zc fine" hot_zones_fine
regions_match
# Idle again: the guard saw nothing, so neither the coarse region nor the
# fine ones are read.
idle_sample() { [ "$(pool_field tank .heat.sample_areas)" = "$guard" ]; }
wait_until 30 "a sample of the idle pool reading the guard's $guard areas alone" idle_sample

step "reads on the fine zones put exactly the hot extents on top"
for le in $hot; do random_reads $le 300; done
top6() { "$TIERCTL" heat tank --top 6 --json | jq -r '.heat.extents[].extent' | sort -n | xargs; }
want=$(echo $hot | tr ' ' '\n' | sort -n | xargs)
on_top() { [ "$(top6)" = "$want" ]; }
wait_until 30 "the hot extents on top" on_top
"$TIERCTL" heat tank --top 8
# A zone-mate has only its share of the 100 reads made while the zone was coarse.
mate=$("$TIERCTL" heat tank --top 7 --json | jq '.heat.extents[6].heat // 0')
low=$("$TIERCTL" heat tank --top 6 --json | jq '.heat.extents[5].heat')
awk -v m="$mate" -v l="$low" 'BEGIN { exit !(m * 20 < l) }' ||
	fail "the 7th extent's heat $mate is not far below the 6th's $low"

step "a run promotes the hot extents, data intact"
"$TIERCTL" tier now tank --dry-run --limit 10
planned=$("$TIERCTL" tier now tank --dry-run --limit 1000 --json |
	jq -r '.plan.moves[] | select(.to == "ssd") | .extent' | sort -n | xargs)
assert_eq "planned promotions" "$want" "$planned"
tierctl_ok tier now tank --wait
for le in $hot; do
	assert_eq "extent $le's tier" ssd \
		"$("$TIERCTL" heat tank --top 6 --json | jq -r ".heat.extents[] | select(.extent == $le) | .tier")"
	assert_eq "extent $le's data" "$(vm_digest /tmp/data.$le)" "$(vm_digest $vol $E $((le * E)))"
done

step "after a restart the hot zones are fine at once"
tierd_stop TERM
t0=$(date +%s.%N)
tierd_start "${opts[@]}"
wait_until 600 "the pool active again" eval '[ "$(pool_field tank .state)" = active ]'
echo "restart to active: $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }") s"
hot_zones_fine || fail "zones $za, $zb and $zc not fine right after the start"
regions_match
assert_eq "hottest after the restart" "$want" "$(top6)"
json_save pool pool show tank

step "a fresh tierd imports the pool from its devices alone"
tierd_stop TERM
dmsetup remove tank
rm -rf "$TIERD_STATE"
tierd_start "${opts[@]}"
tierctl_ok pool import "$hdd" "$ssd" >/dev/null
assert_eq "state after the import" active "$(pool_field tank .state)"
assert_eq "extents after the import" "$extents" "$(pool_field tank .total_extents)"
# The import has no heat to say where an extent is: the live table does.
ssd_dev=$(lsblk -dno MAJ:MIN "$ssd" | tr -d ' ')
on_ssd() {
	dmsetup table tank | awk -v s=$(($1 * E / 512)) -v d="$ssd_dev" \
		'$1 <= s && s < $1 + $2 { found = $3 == "linear" && $4 == d } END { exit !found }'
}
for le in $hot; do
	on_ssd "$le" || fail "extent $le is not on the SSD after the import: $(dmsetup table tank)"
	assert_eq "extent $le's data after the import" "$(vm_digest /tmp/data.$le)" \
		"$(vm_digest $vol $E $((le * E)))"
done
json_check
tierctl_ok pool destroy tank --yes
tierd_stop TERM
losetup -d "$hdd" "$ssd"
echo "heat-zones: ok"
