/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zone: heat at two resolutions under a kernel-memory budget.
 *
 * dm-stats costs kernel memory per area (about 330 bytes with two possible
 * CPUs, 3.4 KiB with 32), so an area per extent over a 100 TiB volume would
 * take gigabytes.  When a pool's extents do not all fit the budget, the
 * volume is cut into zones of zone_extents extents (a power of two): one
 * coarse region with an area per zone counts all of the volume, and up to
 * max_fine zones at a time get a fine region of their own with an area per
 * extent.  Which zones are fine is chosen from the heat: most of the fine
 * regions go to the hottest zones, the rest survey the volume a few zones at
 * a time, so that every extent's own heat is seen now and then and kept when
 * its zone goes coarse again.  docs/heat.md has the reasons and the numbers.
 *
 * Pure: no I/O; the caller creates and deletes the regions.
 */
#ifndef TIERD_ZONE_H
#define TIERD_ZONE_H

#include <stdint.h>

#include "heat.h"

/* The coarse region takes at most 1/this of the budget; the fine regions the rest. */
#define ZONE_COARSE_SHARE 8
/*
 * Fine regions at most, whatever the budget: dm-stats walks every region of
 * the device at the start and at the end of each bio (dm_stats_account_io),
 * so each region costs every I/O of the volume some CPU.  33 regions cost a
 * bio 33 range checks where one region over the volume costs one.
 */
#define ZONE_MAX_FINE 32u
/*
 * The daemon's cadence (tierd/pool/heat.c, and tests/bench/bench-zones,
 * which measures it): fine zones are chosen again every ZONE_CHOOSE_SAMPLES
 * samples (a minute at the default interval), the survey moves on every
 * ZONE_SURVEY_CHOICES choices, and a choice makes at most ZONE_MAX_NEW new
 * regions, so one sample never spends long creating them (docs/heat.md).
 */
#define ZONE_CHOOSE_SAMPLES 6u
#define ZONE_SURVEY_CHOICES 5u
#define ZONE_MAX_NEW 64u
/* Zones larger than this would hide too much: heat is off instead (-ENOSPC). */
#define ZONE_MAX_EXTENTS 65536u

struct zone_layout {
	uint32_t nr_extents;
	uint32_t zone_extents; /* a power of two; 1: every extent has an area (full resolution) */
	uint32_t nr_zones;     /* the last may be shorter */
	uint32_t max_fine;     /* fine regions at most; 0 at full resolution */
	uint64_t area_bytes;   /* kernel memory of one area */
	uint64_t budget_bytes;
};

/*
 * Full resolution when nr_extents areas fit budget_bytes; else zones.  A
 * zone size fits when its coarse region takes at most 1/ZONE_COARSE_SHARE
 * of the budget and leaves room for a fine zone; max_fine is then as many
 * fine zones as the rest holds, at most ZONE_MAX_FINE and nr_zones.  From
 * the smallest size that fits, sizes double while ZONE_MAX_FINE rather than
 * the budget bounds max_fine; of those tried, the one with the most extents
 * at extent resolution at once (max_fine * zone_extents) is the layout, the
 * smaller on a tie.  -EINVAL for area_bytes 0; -ENOSPC when no zone size up
 * to ZONE_MAX_EXTENTS fits (*l is then still filled with the largest layout
 * tried, for the message).
 */
int zone_layout_plan(struct zone_layout *l, uint32_t nr_extents, uint64_t area_bytes,
		     uint64_t budget_bytes);

/* Extents of zone z: [*first, *first + return). */
uint32_t zone_extents_of(const struct zone_layout *l, uint32_t z, uint32_t *first);
/* Kernel memory of the coarse region, and of the fine regions of nr_fine whole zones. */
uint64_t zone_coarse_bytes(const struct zone_layout *l);
uint64_t zone_fine_bytes(const struct zone_layout *l, uint32_t nr_fine);

enum zone_kind {
	ZONE_COARSE = 0,
	ZONE_HOT = 1,    /* fine because it is among the hottest */
	ZONE_SURVEY = 2, /* fine for a while, in turn, to learn its extents' heat */
};

struct zone_choice {
	/* A fine hot zone gives way only to one hotter by this factor (churn costs regions). */
	double hysteresis;         /* 1.25 */
	uint32_t survey;           /* of max_fine, zones surveying at a time (max_fine / 4) */
	uint32_t max_new;          /* fine regions created per call at most; 0: no limit */
	uint32_t survey_next;      /* the zone the next survey starts from; kept by zone_choose */
	int advance_survey;        /* move the survey on to its next zones in this call */
};

/* Defaults for layout l, survey starting at zone 0. */
void zone_choice_default(struct zone_choice *c, const struct zone_layout *l);

/*
 * The zones to make fine, from each zone's heat (heat[0..nr_zones), the sum
 * of its extents') and what each zone is now (kind[], updated in place).
 * Hot: the hottest zones with any heat, up to max_fine - survey, a fine one
 * replaced only by a zone hotter by the hysteresis factor.  Survey: the
 * next zones that are not hot, from survey_next on, wrapping; kept until a
 * call with advance_survey.  At most max_new zones turn fine per call (hot
 * ones first).  At full resolution (max_fine 0) every kind stays coarse.
 * Returns the number of zones whose kind changed, or -ENOMEM.
 */
int zone_choose(const struct zone_layout *l, struct zone_choice *c, const double *heat,
		uint8_t *kind);

/*
 * One sample of zone z into the heat: a fine zone's areas (fine, one per
 * extent of the zone) apply as they are; a coarse zone's single area
 * (coarse) is shared among its extents (heat_apply_shared(), which fills
 * share, zone_extents entries or NULL, when the area has I/O), after
 * heat_sample_begin().
 * Returns 1 when fine was used, 0 when coarse was, or -EINVAL.
 */
int zone_apply(const struct zone_layout *l, const uint8_t *kind, uint32_t z,
	       struct heat_table *t, const struct heat_params *p,
	       const struct statsparse_area *coarse, const struct statsparse_area *fine,
	       double *share);

#endif
