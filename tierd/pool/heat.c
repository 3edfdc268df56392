/* SPDX-License-Identifier: GPL-2.0-or-later */
/* heat: the volume's dm-stats region, samples into heat and per-tier I/O, and their flush. */
#include "pool-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "dmctl.h"
#include "iostats.h"
#include "log.h"
#include "pieceplan.h"
#include "planner.h"
#include "size.h"

/* The default budget: the smaller of this and 1/POOL_HEAT_RAM_SHARE of RAM (docs/heat.md). */
#define POOL_HEAT_BUDGET_MAX (UINT64_C(64) << 20)
#define POOL_HEAT_RAM_SHARE 64
/*
 * Areas read per dm message: the reply (~45 bytes an area) and the parsed
 * counters stay a constant 5 MB however large the pool (docs/heat.md).
 */
#define POOL_SAMPLE_CHUNK 65536u
#define POOL_NO_REGION UINT64_MAX
/*
 * Piece windows (lib/piecewatch.h, docs/heat.md), for a pool whose piece
 * areas over the whole volume are over the budget: at most this many, each
 * a region more on every bio of the volume (the reason ZONE_MAX_FINE is
 * 32), and at most 1/POOL_PIECE_WINDOW_SHARE of the budget. They are chosen
 * every POOL_PIECE_WINDOW_SAMPLES samples, a window staying on its extent
 * one choice at least, among the POOL_PIECE_CANDIDATES hottest extents; the
 * last POOL_PIECE_RECENT extents watched wait their turn again, and the
 * weights of as many extents as POOL_PIECE_WATCHED_BYTES holds are kept
 * (4,096 of 1 KiB for 4 MiB extents in 16 KiB pieces).
 */
#define POOL_PIECE_WINDOWS 16u
#define POOL_PIECE_WINDOW_SHARE 8u
#define POOL_PIECE_WINDOW_SAMPLES 6u
#define POOL_PIECE_WINDOW_DWELL 1u
#define POOL_PIECE_CANDIDATES 1024u
#define POOL_PIECE_RECENT 1024u
#define POOL_PIECE_WATCHED_BYTES (UINT64_C(4) << 20)
/*
 * Colder extents are not watched: the heat a zone shared among its extents
 * while it was coarse leaves most of them a little, and watching those
 * would move the windows every choice (each a region made) to learn
 * nothing. One small random read's worth, the default policies' min_heat.
 */
#define POOL_PIECE_MIN_HEAT 1.0
/*
 * Areas of the heat region (extents, or zones) per area of the guard: an
 * idle volume's sample reads 1/64 of the areas it would, for 1/64 more
 * kernel memory (docs/heat.md).
 */
#define POOL_GUARD_STEP 64u

static uint64_t ram_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);

	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

uint64_t pools_heat_budget(const struct pools *ps)
{
	uint64_t ram = ram_bytes() / POOL_HEAT_RAM_SHARE;

	if (ps->heat_budget)
		return ps->heat_budget;
	return ram && ram < POOL_HEAT_BUDGET_MAX ? ram : POOL_HEAT_BUDGET_MAX;
}

/* Forget the pieces' heat, the windows and their regions' ids (the regions go with the next start). */
static void pool_pieces_forget(struct pool *p)
{
	pieceheat_destroy(&p->pieces);
	free(p->piece_sample);
	p->piece_sample = NULL;
	free(p->piece_unread);
	p->piece_unread = NULL;
	p->piece_unread_words = 0;
	p->piece_read_ns = 0;
	p->piece_region = POOL_NO_REGION;
	p->piece_areas = 0;
	piecewatch_destroy(&p->piece_watch);
	free(p->piece_window_region);
	p->piece_window_region = NULL;
	p->piece_window_samples = 0;
}

void pool_heat_stop(struct pool *p)
{
	p->heat_on = 0;
	free(p->guard);
	p->guard = NULL;
	p->guard_region = POOL_NO_REGION;
	p->guard_areas = p->sample_areas = 0;
	free(p->zone_kind);
	free(p->zone_region);
	free(p->zone_fine);
	free(p->zone_share);
	free(p->zone_heat);
	p->zone_kind = NULL;
	p->zone_region = NULL;
	p->zone_fine = NULL;
	p->zone_share = p->zone_heat = NULL;
	p->nr_fine = p->zone_samples = p->zone_choices = 0;
	p->heat_kernel_bytes = p->heat_reserved_bytes = 0;
	pool_pieces_forget(p);
}

static uint64_t pool_zone_sectors(const struct pool *p)
{
	return (uint64_t)p->zones.zone_extents * pool_extent_sectors(p);
}

/*
 * Kernel memory of the regions there are now: the heat region (coarse in
 * zones), the fine zones', the guard and the pieces'.
 */
static void pool_heat_count_bytes(struct pool *p)
{
	uint64_t fine_areas = 0;
	uint32_t first;

	for (uint32_t z = 0; p->zone_kind && z < p->zones.nr_zones; z++)
		if (p->zone_kind[z] != ZONE_COARSE)
			fine_areas += zone_extents_of(&p->zones, z, &first);
	p->heat_kernel_bytes = zone_coarse_bytes(&p->zones) +
			       (fine_areas + p->guard_areas + p->piece_areas) * p->zones.area_bytes;
}

/*
 * The guard over the heat region's zones (extents at full resolution). Not
 * having one costs every sample a read of every area, nothing else: so a
 * region that cannot be made is only logged.
 */
static void pool_guard_start(struct pool *p)
{
	uint32_t areas = (p->zones.nr_zones + POOL_GUARD_STEP - 1) / POOL_GUARD_STEP;
	uint64_t sectors = (uint64_t)p->sp.map.nr_logical * pool_extent_sectors(p);
	int r;

	p->guard = malloc((size_t)areas * sizeof(*p->guard));
	r = p->guard ? iostats_region_create(p->sp.meta.name, 0, sectors,
					     POOL_GUARD_STEP * pool_zone_sectors(p),
					     &p->guard_region) : -ENOMEM;
	if (r < 0) {
		free(p->guard);
		p->guard = NULL;
		p->guard_region = POOL_NO_REGION;
		log_pool_debug(p->sp.meta.name, "heat: no guard region (%s): every sample reads"
			       " every area", dmctl_error_text(r));
		return;
	}
	p->guard_areas = areas;
}

/*
 * Choose the fine zones again from the heat and make the regions follow:
 * those that go coarse are deleted first, so their memory is free for the
 * new ones. A region that cannot be made leaves its zone coarse.
 */
static int pool_zones_choose(struct pool *p, uint32_t max_new)
{
	const struct zone_layout *l = &p->zones;
	uint64_t sectors = pool_extent_sectors(p);
	uint8_t *was = malloc(l->nr_zones);
	uint32_t first, n, created = 0, failed = 0;
	int r = 0, changes;

	if (!was)
		return -ENOMEM;
	memcpy(was, p->zone_kind, l->nr_zones);
	for (uint32_t z = 0; z < l->nr_zones; z++) {
		n = zone_extents_of(l, z, &first);
		p->zone_heat[z] = heat_sum(&p->heat, first, n);
	}
	p->zone_choice.max_new = max_new;
	p->zone_choice.advance_survey = p->zone_choices++ % ZONE_SURVEY_CHOICES == 0;
	changes = zone_choose(l, &p->zone_choice, p->zone_heat, p->zone_kind);
	if (changes < 0) {
		r = changes;
		goto out;
	}
	for (uint32_t z = 0; z < l->nr_zones; z++) {
		if (was[z] == ZONE_COARSE || p->zone_kind[z] != ZONE_COARSE)
			continue;
		iostats_region_delete(p->sp.meta.name, p->zone_region[z]);
		p->zone_region[z] = POOL_NO_REGION;
		p->nr_fine--;
	}
	for (uint32_t z = 0; z < l->nr_zones; z++) {
		if (was[z] != ZONE_COARSE || p->zone_kind[z] == ZONE_COARSE)
			continue;
		n = zone_extents_of(l, z, &first);
		if (iostats_region_create(p->sp.meta.name, first * sectors, n * sectors, sectors,
					  &p->zone_region[z]) < 0) {
			p->zone_kind[z] = ZONE_COARSE;
			failed++;
			continue;
		}
		p->nr_fine++;
		created++;
	}
	pool_heat_count_bytes(p);
	if (changes)
		log_pool_debug(p->sp.meta.name, "heat: %u of %u zones fine (%u new%s), %llu KiB of"
			       " kernel memory", p->nr_fine, l->nr_zones, created,
			       failed ? ", some regions could not be made" : "",
			       (unsigned long long)p->heat_kernel_bytes / 1024);
out:
	free(was);
	return r;
}

/* Zones, their arrays and the first choice of fine zones, all at once. */
static int pool_zones_start(struct pool *p)
{
	const struct zone_layout *l = &p->zones;

	p->zone_kind = calloc(l->nr_zones, 1);
	p->zone_region = malloc((size_t)l->nr_zones * sizeof(*p->zone_region));
	p->zone_fine = malloc((size_t)l->zone_extents * sizeof(*p->zone_fine));
	p->zone_share = malloc((size_t)l->zone_extents * sizeof(*p->zone_share));
	p->zone_heat = malloc((size_t)l->nr_zones * sizeof(*p->zone_heat));
	if (!p->zone_kind || !p->zone_region || !p->zone_fine || !p->zone_share || !p->zone_heat)
		return -ENOMEM;
	for (uint32_t z = 0; z < l->nr_zones; z++)
		p->zone_region[z] = POOL_NO_REGION;
	zone_choice_default(&p->zone_choice, l);
	return pool_zones_choose(p, 0);
}

/*
 * The weights the state kept of the extents with pieces out: without them
 * the first I/O after a restart would make the pieces out it missed look
 * cold. Without them (an error, or none kept) those pieces are taken to
 * hold their extent's heat until it is learned again (pool_piece_input).
 */
static void pool_piece_heat_load(struct pool *p)
{
	struct timespec ts;
	int r;

	clock_gettime(CLOCK_REALTIME, &ts);
	r = state_piece_heat_load(p->ps->state, p->sp.id, &p->pieces, p->sp.map.nr_logical,
				  &p->ps->heat,
				  (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
	if (r < 0)
		log_pool_warn(p->sp.meta.name, "the pieces' stored weights not loaded: %s",
			      state_last_error(p->ps->state));
	else if (p->pieces.nr)
		log_pool_info(p->sp.meta.name, "the pieces' weights of %u extents loaded",
			      p->pieces.nr);
	p->piece_heat_saved = p->pieces.changes;
	p->piece_heat_saved_map = p->sp.pieces.changes;
	p->piece_heat_saved_ns = 0;
}

/* The extents with pieces out, ascending, each once (*n of them); NULL: no memory. */
static uint32_t *pool_split_extents(const struct pool *p, uint32_t *n)
{
	const struct piecemap *pm = &p->sp.pieces;
	uint32_t *les = malloc(((size_t)pm->nr_pieces + 1) * sizeof(*les));

	*n = 0;
	if (!les)
		return NULL;
	/* The pieces are by extent: each split extent once. */
	for (uint32_t i = 0; i < pm->nr_pieces; i++)
		if (!*n || les[*n - 1] != pm->pieces[i].le)
			les[(*n)++] = pm->pieces[i].le;
	return les;
}

/*
 * Store the weights of the extents with pieces out: a record per piece with
 * weight, for the split extents only, so the cost follows the pieces out,
 * not the pool. Weights change with every I/O, and only their shares
 * matter: they are stored when the split extents changed, at most every
 * POOL_PIECE_HEAT_SAVE_S otherwise, and when tierd stops (all).
 */
static int pool_piece_heat_save(struct pool *p, int all)
{
	const struct piecemap *pm = &p->sp.pieces;
	uint64_t now = p->pieces.last_sample_ns;
	uint32_t *les, n;
	int r;

	if (all) {
		char err[POOL_ERR_MAX];

		/* What the last read left in the kernel: not read, it is lost with tierd. */
		if (pool_piece_heat_refresh(p, err, sizeof(err)) < 0)
			log_pool_warn(p->sp.meta.name, "%s", err);
		now = p->pieces.last_sample_ns;
	}
	if (!p->pieces.v || !now || p->pieces.changes == p->piece_heat_saved)
		return 0;
	if (!all && pm->changes == p->piece_heat_saved_map &&
	    now < p->piece_heat_saved_ns + POOL_PIECE_HEAT_SAVE_S * 1000000000ull)
		return 0;
	les = pool_split_extents(p, &n);
	if (!les)
		return -ENOMEM;
	r = state_piece_heat_save(p->ps->state, p->sp.id, &p->pieces, les, n,
				  p->pieces.last_sample_ns);
	free(les);
	if (r == 0) {
		p->piece_heat_saved = p->pieces.changes;
		p->piece_heat_saved_map = pm->changes;
		p->piece_heat_saved_ns = now;
	}
	return r;
}

uint32_t pool_piece_ppe(const struct pool *p)
{
	uint64_t es = p->sp.meta.extent_size, bytes = p->ps->piece_bytes;

	/*
	 * A piece map, and the heat that placed its pieces, fix the size while
	 * tierd runs (the map keeps it when its last container goes).
	 */
	if (p->sp.pieces.pieces_per_extent)
		return p->sp.pieces.pieces_per_extent;
	if (p->pieces.v)
		return p->pieces.pieces_per_extent;
	if (!bytes || es % bytes || es / bytes > UINT32_MAX)
		return 0;
	return metadata_piece_size_valid(es, (uint32_t)(es / bytes)) ? (uint32_t)(es / bytes) : 0;
}

/* The kernel memory of an area per piece over the whole volume. */
static uint64_t pool_piece_region_bytes(const struct pool *p)
{
	return (uint64_t)p->sp.map.nr_logical * pool_piece_ppe(p) *
	       iostats_kernel_bytes_per_area();
}

/*
 * Whether that region fits avail (the budget left) beside an area per
 * extent and the guard's: what pool_pieces_start() finds when the zones'
 * plan had all of avail.
 */
static bool pool_piece_region_fits(const struct pool *p, uint64_t avail)
{
	uint64_t nr = p->sp.map.nr_logical, per_area = iostats_kernel_bytes_per_area();
	uint64_t need = pool_piece_region_bytes(p) +
			(nr + (nr + POOL_GUARD_STEP - 1) / POOL_GUARD_STEP) * per_area;

	return nr * pool_piece_ppe(p) <= UINT32_MAX && need <= avail;
}

/* How many piece windows avail pays for (lib/piecewatch.h), and what they take of it. */
static uint32_t pool_piece_windows_fit(const struct pool *p, uint64_t avail, uint64_t *bytes)
{
	uint64_t one = (uint64_t)pool_piece_ppe(p) * iostats_kernel_bytes_per_area();
	uint64_t n = one ? avail / POOL_PIECE_WINDOW_SHARE / one : 0;

	if (n > POOL_PIECE_WINDOWS)
		n = POOL_PIECE_WINDOWS;
	if (n > p->sp.map.nr_logical)
		n = p->sp.map.nr_logical;
	*bytes = n * one;
	return (uint32_t)n;
}

/*
 * The hottest extents, at most POOL_PIECE_CANDIDATES into cand: in zones,
 * of the fine zones only. A coarse zone's I/O is shared among all its
 * extents (heat_apply_shared), so every extent of a busy coarse zone would
 * look warm and unknown, and the windows would never settle; a fine zone's
 * extents have heat of their own, and the hottest zones are fine.
 */
static int pool_piece_candidates(const struct pool *p, uint32_t *cand, uint32_t *n)
{
	uint32_t first[ZONE_MAX_FINE], count[ZONE_MAX_FINE], nr = 0;

	if (!p->zone_kind)
		return heat_top(&p->heat, POOL_PIECE_CANDIDATES, cand, n);
	for (uint32_t z = 0; z < p->zones.nr_zones && nr < ZONE_MAX_FINE; z++)
		if (p->zone_kind[z] != ZONE_COARSE) {
			count[nr] = zone_extents_of(&p->zones, z, &first[nr]);
			nr++;
		}
	return heat_top_ranges(&p->heat, first, count, nr, POOL_PIECE_CANDIDATES, cand, n);
}

/*
 * Choose the extents the windows watch again, from the hottest, and make
 * their regions follow: those that move are deleted first, so their memory
 * is free for the new ones. A region that cannot be made leaves its window
 * idle until the next choice.
 */
static int pool_piece_windows_choose(struct pool *p)
{
	struct piecewatch *w = &p->piece_watch;
	uint32_t ppe = p->pieces.pieces_per_extent, n = 0, failed = 0;
	uint64_t es = pool_extent_sectors(p);
	uint32_t *cand = malloc(POOL_PIECE_CANDIDATES * sizeof(*cand));
	uint8_t *known = malloc(POOL_PIECE_CANDIDATES), *changed = malloc(w->nr_windows);
	uint64_t t0 = clock_now_ns(), t1;
	int r = cand && known && changed ? 0 : -ENOMEM, moved;

	if (r == 0)
		r = pool_piece_candidates(p, cand, &n);
	if (r < 0)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		if (heat_value(&p->heat, cand[i]) < POOL_PIECE_MIN_HEAT) {
			n = i; /* hottest first: the rest are colder */
			break;
		}
		known[i] = pieceheat_known(&p->pieces, cand[i]) > 0;
	}
	moved = piecewatch_choose(w, cand, known, n, changed);
	t1 = clock_now_ns();
	if (moved <= 0) {
		r = moved;
		goto out;
	}
	for (uint32_t i = 0; i < w->nr_windows; i++) {
		if (!changed[i] || p->piece_window_region[i] == POOL_NO_REGION)
			continue;
		iostats_region_delete(p->sp.meta.name, p->piece_window_region[i]);
		p->piece_window_region[i] = POOL_NO_REGION;
		p->piece_areas -= ppe;
	}
	for (uint32_t i = 0; i < w->nr_windows; i++) {
		if (!changed[i])
			continue;
		if (iostats_region_create(p->sp.meta.name, w->le[i] * es, es,
					  es / ppe, &p->piece_window_region[i]) < 0) {
			p->piece_window_region[i] = POOL_NO_REGION;
			piecewatch_idle(w, i);
			failed++;
			continue;
		}
		p->piece_areas += ppe;
	}
	pool_heat_count_bytes(p);
	log_pool_debug(p->sp.meta.name, "heat of pieces: %d windows moved%s, %u of %u watching;"
		       " chosen from %u candidates in %.1f ms, regions made in %.1f ms", moved,
		       failed ? " (some regions could not be made)" : "", piecewatch_busy(w),
		       w->nr_windows, n, (double)(t1 - t0) / 1e6,
		       (double)(clock_now_ns() - t1) / 1e6);
out:
	free(cand);
	free(known);
	free(changed);
	return r;
}

/*
 * With the piece-heat setting: a region with an area per piece over the
 * whole volume, beside the one with an area per extent, when the pool is at
 * full resolution and avail (the budget left) holds it; else windows over
 * the hottest extents, within what pool_heat_start() kept of avail for
 * them. Without room it is only logged: extent heat is what tiering needs.
 */
static void pool_pieces_start(struct pool *p, uint64_t avail, struct pieceheat *learnt)
{
	uint64_t es = pool_extent_sectors(p), ps, bytes, left, watched;
	uint32_t nr = p->sp.map.nr_logical, ppe = pool_piece_ppe(p), windows = 0, max, nr_split = 0;
	uint32_t *split = NULL;
	bool keep = learnt->v && learnt->pieces_per_extent == ppe;
	char need[SIZE_FORMAT_MAX], have[SIZE_FORMAT_MAX], piece[SIZE_FORMAT_MAX];
	bool kept = false;
	int r;

	if (!p->ps->piece_heat || !nr)
		return;
	if (!ppe) {
		log_pool_info(p->sp.meta.name, "no heat of pieces: its extents of %s cannot be split"
			      " into pieces of %s (piece-size)",
			      size_format(p->sp.meta.extent_size, need, sizeof(need)),
			      size_format(p->ps->piece_bytes, piece, sizeof(piece)));
		return;
	}
	ps = es / ppe;
	size_format(ps * SECTOR, piece, sizeof(piece));
	left = avail > p->heat_reserved_bytes ? avail - p->heat_reserved_bytes : 0;
	bytes = pool_piece_region_bytes(p);
	if (p->zone_kind || (uint64_t)nr * ppe > UINT32_MAX || bytes > left) {
		/* What pool_heat_start() kept out of the zones, or less if that is all left. */
		uint64_t one = (uint64_t)ppe * iostats_kernel_bytes_per_area();

		windows = pool_piece_windows_fit(p, avail, &bytes);
		if (bytes > left) {
			windows = (uint32_t)(left / one);
			bytes = windows * one;
		}
		if (!windows) {
			log_pool_info(p->sp.meta.name, "no heat of pieces: an area per %s of one"
				      " extent needs %s of kernel memory, the heat budget leaves %s",
				      piece,
				      size_format((uint64_t)ppe * iostats_kernel_bytes_per_area(),
						  need, sizeof(need)),
				      size_format(left, have, sizeof(have)));
			return;
		}
	}
	p->piece_sample = malloc((size_t)ppe * sizeof(*p->piece_sample));
	watched = POOL_PIECE_WATCHED_BYTES / ((uint64_t)ppe * sizeof(float));
	if (watched < POOL_PIECE_WINDOWS)
		watched = POOL_PIECE_WINDOWS;
	max = windows && nr > watched ? (uint32_t)watched : nr;
	/*
	 * Kept weights are held to the new cap keeping the split extents':
	 * their stored weights (older) could not take a place back.
	 */
	if (keep)
		split = pool_split_extents(p, &nr_split);
	if (!p->piece_sample || (keep && !split)) {
		r = -ENOMEM;
	} else if (keep && pieceheat_resize(learnt, max, nr, split, nr_split) == 0) {
		p->pieces = *learnt;
		memset(learnt, 0, sizeof(*learnt));
		kept = true;
		r = 0;
	} else {
		r = pieceheat_init(&p->pieces, ppe, max);
	}
	free(split);
	if (r == 0 && windows) {
		r = piecewatch_init(&p->piece_watch, windows, POOL_PIECE_WINDOW_DWELL,
				    POOL_PIECE_RECENT);
		p->piece_window_region = r == 0 ? malloc(windows * sizeof(*p->piece_window_region)) :
						  NULL;
		if (r == 0 && !p->piece_window_region)
			r = -ENOMEM;
		for (uint32_t i = 0; r == 0 && i < windows; i++)
			p->piece_window_region[i] = POOL_NO_REGION;
	} else if (r == 0) {
		p->piece_unread_words = (nr + 63) / 64;
		p->piece_unread = calloc(p->piece_unread_words, sizeof(*p->piece_unread));
		r = p->piece_unread ? iostats_region_create(p->sp.meta.name, 0, (uint64_t)nr * es,
							    ps, &p->piece_region) :
				      -ENOMEM;
	}
	if (r < 0) {
		pool_pieces_forget(p);
		log_pool_warn(p->sp.meta.name, "no heat of pieces: %s", dmctl_error_text(r));
		return;
	}
	/*
	 * Kept over a heat restart (a resize, a failed sample), what the
	 * windows learnt stays: the state has only the split extents', and
	 * the windows take hours to go round a NAS-sized pool again.
	 */
	if (kept)
		log_pool_debug(p->sp.meta.name, "heat of pieces: the weights of %u extents kept",
			       p->pieces.nr);
	else
		pool_piece_heat_load(p);
	p->heat_reserved_bytes += bytes;
	if (!windows) {
		p->piece_areas = nr * ppe;
		pool_heat_count_bytes(p);
		log_pool_info(p->sp.meta.name, "heat of %s pieces too: %u areas, %s of kernel"
			      " memory", piece, p->piece_areas, size_format(bytes, need, sizeof(need)));
		return;
	}
	log_pool_info(p->sp.meta.name, "heat of %s pieces in %u windows of an extent each, going"
		      " round the hottest extents: %s of kernel memory", piece, windows,
		      size_format(bytes, need, sizeof(need)));
	/* At once from the heat there is (a restart's, stored), as zones are. */
	if (pool_piece_windows_choose(p) < 0)
		log_pool_warn(p->sp.meta.name, "heat of pieces: no windows chosen yet");
}

/*
 * Heat is off: the regions a start before left would go on counting every
 * I/O, in kernel memory the budget no longer counts.
 */
static void pool_heat_off(struct pool *p)
{
	int r;

	log_pool_warn(p->sp.meta.name, "%s", p->heat_off);
	r = iostats_regions_delete(p->sp.meta.name);
	if (r < 0)
		log_pool_warn(p->sp.meta.name, "its dm-stats regions are left in the kernel: %s",
			      dmctl_error_text(r));
}

/*
 * (Re)create the volume's regions after activation or a resize; heat follows
 * the volume's extents. An area per extent when the budget left by the
 * other pools allows it, else zones (lib/zone.h); when not even those fit,
 * heat stays off and pool show says why.
 */

void pool_heat_start(struct pool *p)
{
	uint32_t nr = p->sp.map.nr_logical;
	uint64_t per_area = iostats_kernel_bytes_per_area(), used_by_others = 0, avail, plan;
	uint64_t windows = 0;
	char need[SIZE_FORMAT_MAX], limit[SIZE_FORMAT_MAX], others[SIZE_FORMAT_MAX],
	     left[SIZE_FORMAT_MAX];
	struct statsparse_area *grown;
	struct pieceheat learnt = p->pieces; /* for pool_pieces_start() */
	int r;

	memset(&p->pieces, 0, sizeof(p->pieces));
	pool_heat_stop(p);
	p->heat_off[0] = '\0';
	for (struct pool *o = p->ps->list; o; o = o->next)
		if (o != p && o->heat_on)
			used_by_others += o->heat_reserved_bytes;
	p->heat_limit_bytes = pools_heat_budget(p->ps);
	avail = p->heat_limit_bytes > used_by_others ? p->heat_limit_bytes - used_by_others : 0;
	/*
	 * Piece windows, when pieces are watched and their region over the
	 * whole volume does not fit, and the guard's area per POOL_GUARD_STEP
	 * come off first; the zones get the rest.
	 */
	if (p->ps->piece_heat && nr && !pool_piece_region_fits(p, avail))
		pool_piece_windows_fit(p, avail, &windows);
	plan = avail - windows;
	r = zone_layout_plan(&p->zones, nr, per_area, plan - plan / (POOL_GUARD_STEP + 1));
	if (r < 0) {
		errbuf_set(p->heat_off, sizeof(p->heat_off),
			   "heat is off: its %u extents need %s of kernel memory even in zones of %u"
			   " extents, over the %s the heat budget (heat-kernel-memory, %s) leaves"
			   " after the other pools' %s", nr,
			   size_format(zone_coarse_bytes(&p->zones) +
					       zone_fine_bytes(&p->zones, 1), need, sizeof(need)),
			   p->zones.zone_extents, size_format(avail, left, sizeof(left)),
			   size_format(p->heat_limit_bytes, limit, sizeof(limit)),
			   size_format(used_by_others, others, sizeof(others)));
		pool_heat_off(p);
		goto out;
	}
	r = heat_table_resize(&p->heat, nr);
	if (r == 0 && !p->sample) {
		grown = malloc(POOL_SAMPLE_CHUNK * sizeof(*grown));
		if (grown)
			p->sample = grown;
		else
			r = -ENOMEM;
	}
	if (r == 0)
		r = iostats_region_open(p->sp.meta.name, (uint64_t)nr * pool_extent_sectors(p),
					pool_zone_sectors(p), &p->heat_region);
	if (r < 0) {
		errbuf_set(p->heat_off, sizeof(p->heat_off), "heat is off: no dm-stats region: %s",
			   dmctl_error_text(r));
		pool_heat_off(p);
		goto out;
	}
	pool_guard_start(p);
	pool_heat_count_bytes(p);
	p->heat_reserved_bytes = p->heat_kernel_bytes + zone_fine_bytes(&p->zones, p->zones.max_fine);
	if (p->zones.zone_extents > 1) {
		r = pool_zones_start(p);
		if (r < 0) {
			pool_heat_stop(p);
			errbuf_set(p->heat_off, sizeof(p->heat_off), "heat is off: %s", strerror(-r));
			pool_heat_off(p);
			goto out;
		}
		log_pool_info(p->sp.meta.name, "heat in zones of %u extents: %u zones, up to %u"
			      " of them at extent resolution, %s of kernel memory at most",
			      p->zones.zone_extents, p->zones.nr_zones, p->zones.max_fine,
			      size_format(p->heat_reserved_bytes, need, sizeof(need)));
	}
	pool_pieces_start(p, avail, &learnt);
	p->heat_on = 1;
out:
	pieceheat_destroy(&learnt);
}

/* Store this minute's I/O per tier (added to what the minute already has). */
static int pool_io_flush(struct pool *p)
{
	int r = 0;

	for (unsigned t = 0; t < 2; t++) {
		struct state_tier_io *io = &p->io[t];

		if (!io->reads && !io->writes)
			continue;
		r = state_tier_io_add(p->ps->state, p->sp.id, p->io_minute,
				      metadata_tier_name((enum metadata_tier)t), io);
		if (r < 0)
			return r;
		memset(io, 0, sizeof(*io));
	}
	return r;
}

/* The tier extent le is on, or -1 while it is unmapped. */
static int pool_tier_of(const struct pool *p, uint32_t le)
{
	struct extmap_loc loc = extmap_get(&p->sp.map, le);

	return loc.dev == EXTMAP_NO_DEV ? -1 : (int)p->sp.meta.devs[loc.dev].tier;
}

static void pool_io_add(struct pool *p, int tier, const struct statsparse_area *a)
{
	struct state_tier_io *io = &p->io[tier];

	io->reads += a->reads;
	io->writes += a->writes;
	io->read_bytes += a->sectors_read * SECTOR;
	io->write_bytes += a->sectors_written * SECTOR;
}

/*
 * Counters a split between the tiers as on[] weighs them: the SSD's part
 * rounded, the HDD the rest, so the two add up (a weight a subtraction
 * left a rounding below 0 counts as 0).
 */
static void pool_io_split(struct pool *p, const struct statsparse_area *a, const double on[2])
{
	double hdd = on[0] > 0 ? on[0] : 0, ssd = on[1] > 0 ? on[1] : 0;
	struct statsparse_area part[2];

	ssd = hdd + ssd > 0 ? ssd / (hdd + ssd) : 0;

	part[1] = (struct statsparse_area){
		.reads = (uint32_t)(a->reads * ssd + 0.5),
		.writes = (uint32_t)(a->writes * ssd + 0.5),
		.sectors_read = (uint64_t)((double)a->sectors_read * ssd + 0.5),
		.sectors_written = (uint64_t)((double)a->sectors_written * ssd + 0.5),
	};
	part[0] = (struct statsparse_area){
		.reads = a->reads - part[1].reads,
		.writes = a->writes - part[1].writes,
		.sectors_read = a->sectors_read - part[1].sectors_read,
		.sectors_written = a->sectors_written - part[1].sectors_written,
	};
	pool_io_add(p, METADATA_TIER_HDD, &part[0]);
	pool_io_add(p, METADATA_TIER_SSD, &part[1]);
}

/*
 * How extent le's I/O divides between the tiers, into on[]: an extent
 * whose home is on tier home serves all of it there unless it has pieces
 * out, which serve their share of its piece weights on their containers'
 * tier. dm-stats counts the extent's I/O in its own area at each sample,
 * and its piece areas wait (POOL_PIECE_READ_S; a window watches few
 * extents), so the split is an estimate from the weights: right while the
 * I/O falls on the pieces as it has. Without weights (piece heat off, or
 * the extent not watched) each piece takes its share of the bytes.
 * Returns its pieces out.
 */
static uint32_t pool_extent_tiers(const struct pool *p, uint32_t le, int home, double on[2])
{
	const struct piecemap *pm = &p->sp.pieces;
	uint32_t first, n = piecemap_extent(pm, le, &first);
	double total = 0, out = 0;
	const float *w = NULL;

	if (n && p->pieces.v && p->pieces.pieces_per_extent == pm->pieces_per_extent)
		w = pieceheat_weights(&p->pieces, le, &total);
	on[0] = on[1] = 0;
	for (uint32_t i = first; i < first + n; i++) {
		const struct piecemap_piece *pc = &pm->pieces[i];
		int tier = (int)p->sp.meta.devs[pm->containers[pc->container].dev].tier;
		double share = w ? w[pc->idx] / total : 1.0 / pm->pieces_per_extent;

		on[tier] += share;
		out += share;
	}
	/* Float sums round: the pieces out never take more than all. */
	on[home] += out < 1 ? 1 - out : 0;
	return n;
}

/* Add the counters of areas a[0..nr), extents [first, first + nr), to their tiers' I/O. */
static void pool_count_io(struct pool *p, const struct statsparse_area *a, uint32_t first,
			  uint32_t nr)
{
	for (uint32_t i = 0; i < nr; i++) {
		double on[2];
		int tier;

		if (!a[i].reads && !a[i].writes)
			continue;
		tier = pool_tier_of(p, first + i);
		if (tier < 0)
			continue;
		if (pool_extent_tiers(p, first + i, tier, on))
			pool_io_split(p, &a[i], on);
		else
			pool_io_add(p, tier, &a[i]);
	}
}

/*
 * A coarse zone's counters a, split between the tiers as the heat shared
 * them among its extents [first, first + nr) (and a split extent's among
 * its pieces): an estimate, exact when the zone is on one tier.
 */
static void pool_count_io_shared(struct pool *p, const struct statsparse_area *a,
				 uint32_t first, uint32_t nr, const double *share)
{
	double on[2] = { 0, 0 }, ext[2];
	int tier;

	if (!a->reads && !a->writes)
		return;
	for (uint32_t i = 0; i < nr; i++) {
		tier = pool_tier_of(p, first + i);
		if (tier >= 0)
			on[tier] += share[i];
	}
	/* The split extents of the zone, found in the pieces rather than tried one by one. */
	for (uint32_t le = piecemap_next_split(&p->sp.pieces, first); le < first + nr;
	     le = piecemap_next_split(&p->sp.pieces, le + 1)) {
		tier = pool_tier_of(p, le);
		if (tier < 0)
			continue;
		pool_extent_tiers(p, le, tier, ext);
		on[tier] -= share[le - first];
		on[0] += share[le - first] * ext[0];
		on[1] += share[le - first] * ext[1];
	}
	if (on[0] + on[1] <= 0)
		return;
	pool_io_split(p, a, on);
}

/* Read areas [first, first + nr) of a region and parse them into out. */
static int pool_read_areas(struct pool *p, uint64_t region, uint32_t first, uint32_t nr,
			   uint64_t area_sectors, struct statsparse_area *out, char *err,
			   size_t err_len)
{
	size_t len;
	char *text = NULL;
	int r;

	r = iostats_sample(p->sp.meta.name, region, first, nr, &text, &len);
	if (r < 0) {
		errbuf_set(err, err_len, "pool %s: cannot read its dm-stats region: %s",
			   p->sp.meta.name, dmctl_error_text(r));
		return r;
	}
	r = statsparse_areas(text, len, area_sectors, out, nr);
	free(text);
	if (r < 0)
		return pool_fail(p, r, err, err_len, "unexpected dm-stats counters: %s",
				 strerror(-r));
	return 0;
}

/* Each window's areas since the last sample, into its extent's weights. */
static int pool_sample_windows(struct pool *p, char *err, size_t err_len)
{
	const struct piecewatch *w = &p->piece_watch;
	uint32_t ppe = p->pieces.pieces_per_extent;
	int r;

	for (uint32_t i = 0; i < w->nr_windows; i++) {
		if (w->le[i] == PIECEWATCH_IDLE || p->piece_window_region[i] == POOL_NO_REGION)
			continue;
		r = pool_read_areas(p, p->piece_window_region[i], 0, ppe,
				    pool_extent_sectors(p) / ppe, p->piece_sample, err, err_len);
		if (r < 0)
			return r;
		p->sample_areas += ppe;
		r = pieceheat_apply(&p->pieces, &p->ps->heat, w->le[i], p->piece_sample);
		if (r < 0)
			return pool_fail(p, r, err, err_len, "heat of pieces: %s", strerror(-r));
	}
	return 0;
}

/* One part of a sample at full resolution: read, parse, heat, I/O per tier. */
static int pool_sample_part(struct pool *p, uint32_t first, uint32_t nr, char *err,
			    size_t err_len)
{
	int r = pool_read_areas(p, p->heat_region, first, nr, pool_extent_sectors(p), p->sample,
				err, err_len);

	if (r < 0)
		return r;
	p->sample_areas += nr;
	r = heat_apply_range(&p->heat, &p->ps->heat, p->sample, first, nr);
	if (r < 0)
		return pool_fail(p, r, err, err_len, "heat update failed: %s", strerror(-r));
	pool_count_io(p, p->sample, first, nr);
	/*
	 * An extent's pieces only where its own area had I/O: both regions count
	 * the same bios, so the others' pieces have none to read or clear.
	 */
	for (uint32_t i = 0; p->piece_unread && i < nr; i++)
		if ((p->sample[i].reads | p->sample[i].writes) &&
		    (first + i) / 64 < p->piece_unread_words)
			p->piece_unread[(first + i) / 64] |= UINT64_C(1) << ((first + i) % 64);
	return 0;
}

/* The piece areas of the extents that had I/O since they were last read, into their weights. */
static int pool_read_unread_pieces(struct pool *p, uint64_t now_ns, char *err, size_t err_len)
{
	uint32_t nr = p->sp.map.nr_logical, ppe = p->pieces.pieces_per_extent;
	int r;

	/*
	 * The bitmap has the extents heat started with: the volume may have
	 * changed since (an attach whose heat restart failed), and extents past
	 * its end have no areas to read.
	 */
	for (uint32_t w = 0; w < p->piece_unread_words; w++) {
		while (p->piece_unread[w]) {
			uint32_t le = w * 64 + (uint32_t)__builtin_ctzll(p->piece_unread[w]);

			if (le >= nr) {
				p->piece_unread[w] &= p->piece_unread[w] - 1;
				continue;
			}
			r = pool_read_areas(p, p->piece_region, (uint64_t)le * ppe, ppe,
					    pool_extent_sectors(p) / ppe, p->piece_sample, err,
					    err_len);
			if (r < 0)
				return r;
			p->sample_areas += ppe;
			r = pieceheat_apply(&p->pieces, &p->ps->heat, le, p->piece_sample);
			if (r < 0)
				return pool_fail(p, r, err, err_len, "heat of pieces: %s",
						 strerror(-r));
			p->piece_unread[w] &= p->piece_unread[w] - 1;
		}
	}
	p->piece_read_ns = now_ns;
	return 0;
}

int pool_piece_heat_refresh(struct pool *p, char *err, size_t err_len)
{
	int r;

	if (!p->active || !p->heat_on || !p->piece_unread || !p->pieces.last_sample_ns)
		return 0;
	r = pool_read_unread_pieces(p, p->pieces.last_sample_ns, err, err_len);
	if (r < 0)
		pool_heat_start(p); /* regions die with the device: make new ones */
	return r;
}

/* One part of a sample in zones: zones [zfirst, zfirst + nz), each coarse or fine. */
static int pool_sample_zones(struct pool *p, uint32_t zfirst, uint32_t nz, char *err,
			     size_t err_len)
{
	const struct zone_layout *l = &p->zones;
	int r = pool_read_areas(p, p->heat_region, zfirst, nz, pool_zone_sectors(p), p->sample,
				err, err_len);

	if (r == 0)
		p->sample_areas += nz;
	for (uint32_t i = 0; r == 0 && i < nz; i++) {
		uint32_t z = zfirst + i, first, n = zone_extents_of(l, z, &first);
		int fine = p->zone_kind[z] != ZONE_COARSE;

		/*
		 * The coarse area counts every I/O since it was read, which was
		 * before the fine region was: with none, the fine areas hold none
		 * either, and stay unread (and uncleared) until there is some.
		 */
		if (!(p->sample[i].reads | p->sample[i].writes))
			continue;
		if (fine) {
			r = pool_read_areas(p, p->zone_region[z], 0, n, pool_extent_sectors(p),
					    p->zone_fine, err, err_len);
			p->sample_areas += n;
		}
		if (r < 0)
			break;
		r = zone_apply(l, p->zone_kind, z, &p->heat, &p->ps->heat, &p->sample[i],
			       p->zone_fine, p->zone_share);
		if (r < 0)
			return pool_fail(p, r, err, err_len, "heat update failed: %s",
					 strerror(-r));
		if (fine)
			pool_count_io(p, p->zone_fine, first, n);
		else
			pool_count_io_shared(p, &p->sample[i], first, n, p->zone_share);
		r = 0;
	}
	return r;
}

int pool_sample(struct pool *p, uint64_t now_ns, char *err, size_t err_len)
{
	uint32_t nr = p->zone_kind ? p->zones.nr_zones : p->sp.map.nr_logical;
	int64_t minute = (int64_t)(now_ns / 60000000000ull);
	int r;

	if (!p->active || !p->heat_on)
		return 0;
	if (minute != p->io_minute) {
		r = pool_io_flush(p);
		if (r < 0)
			log_pool_warn(p->sp.meta.name, "cannot store its I/O history: %s",
				      state_last_error(p->ps->state));
		p->io_minute = minute;
	}
	if (p->heat.last_sample_ns > now_ns)
		p->heat.last_sample_ns = now_ns; /* the clock went back: no decay this time */
	/* The whole table decays now: parts applied before an error must not decay twice. */
	r = heat_sample_begin(&p->heat, &p->ps->heat, now_ns);
	if (r == 0 && p->pieces.v) {
		if (p->pieces.last_sample_ns > now_ns)
			p->pieces.last_sample_ns = now_ns;
		r = pieceheat_sample_begin(&p->pieces, &p->ps->heat, now_ns);
	}
	if (r < 0)
		return pool_fail(p, r, err, err_len, "heat update failed: %s", strerror(-r));
	p->sample_areas = 0;
	if (p->guard_areas) {
		r = pool_read_areas(p, p->guard_region, 0, p->guard_areas,
				    POOL_GUARD_STEP * pool_zone_sectors(p), p->guard, err, err_len);
		p->sample_areas += p->guard_areas;
	}
	/*
	 * The heat region only where the guard saw I/O: it was read before
	 * them, so an area of it with none means none there since they were
	 * last read either, and they keep counting until they are.
	 */
	for (uint32_t g = 0, from = 0; r == 0 && from < nr; g++) {
		uint32_t to = p->guard_areas ? from + POOL_GUARD_STEP : nr;

		if (to > nr)
			to = nr;
		if (p->guard_areas && !(p->guard[g].reads | p->guard[g].writes)) {
			from = to;
			continue;
		}
		/* Guard areas with I/O side by side are read as one stretch. */
		while (p->guard_areas && to < nr && (p->guard[g + 1].reads | p->guard[g + 1].writes)) {
			g++;
			to = to + POOL_GUARD_STEP < nr ? to + POOL_GUARD_STEP : nr;
		}
		for (uint32_t first = from; r == 0 && first < to; first += POOL_SAMPLE_CHUNK) {
			uint32_t n = to - first < POOL_SAMPLE_CHUNK ? to - first : POOL_SAMPLE_CHUNK;

			r = p->zone_kind ? pool_sample_zones(p, first, n, err, err_len) :
					   pool_sample_part(p, first, n, err, err_len);
		}
		from = to;
	}
	/*
	 * A tenth early, for the timer's jitter: at the default interval of
	 * 10 s every sixth sample reads them, not every seventh.
	 */
	if (r == 0 && p->piece_unread &&
	    now_ns - p->piece_read_ns >= POOL_PIECE_READ_S * UINT64_C(900000000))
		r = pool_read_unread_pieces(p, now_ns, err, err_len);
	if (r == 0 && p->piece_watch.nr_windows)
		r = pool_sample_windows(p, err, err_len);
	if (r < 0) {
		pool_heat_start(p); /* regions die with the device: make new ones */
		return r;
	}
	/* Right after a sample, so a new fine region misses none of the next one's I/O. */
	if (p->zone_kind && ++p->zone_samples >= ZONE_CHOOSE_SAMPLES) {
		p->zone_samples = 0;
		r = pool_zones_choose(p, ZONE_MAX_NEW);
		if (r < 0)
			return pool_fail(p, r, err, err_len, "cannot choose its fine zones: %s",
					 strerror(-r));
	}
	if (p->piece_watch.nr_windows && ++p->piece_window_samples >= POOL_PIECE_WINDOW_SAMPLES) {
		p->piece_window_samples = 0;
		r = pool_piece_windows_choose(p);
		if (r < 0)
			return pool_fail(p, r, err, err_len, "cannot choose the pieces it watches: %s",
					 strerror(-r));
	}
	return 0;
}

int pool_flush_step(struct pool *p, int all, char *err, size_t err_len)
{
	uint32_t nr_chunks = heat_nr_chunks(&p->heat), k;
	int r;

	r = pool_io_flush(p);
	if (r < 0)
		return pool_fail(p, r, err, err_len, "cannot store its I/O history: %s",
				 state_last_error(p->ps->state));
	if (p->heat.nr == 0)
		return 1;
	if (p->heat_flushed >= p->heat.nr)
		p->heat_flushed = 0; /* the volume shrank since the last step */
	/*
	 * Only the chunks whose extents had I/O or moved since they were
	 * stored, one a step: the rest of the table is what the state holds
	 * (decay needs no writing, each row keeps its time), so an idle pool's
	 * flush costs one small transaction whatever its size.
	 */
	for (k = p->heat_flushed / HEAT_CHUNK;; k++) {
		while (k < nr_chunks && !heat_chunk_dirty(&p->heat, k))
			k++;
		if (k >= nr_chunks)
			break;
		r = state_heat_save(p->ps->state, p->sp.id, &p->heat, k * HEAT_CHUNK,
				    k + 1 < nr_chunks ? (k + 1) * HEAT_CHUNK : p->heat.nr);
		if (r < 0)
			goto fail;
		heat_chunk_clean(&p->heat, k);
		if (!all && k + 1 < nr_chunks) {
			p->heat_flushed = (k + 1) * HEAT_CHUNK;
			return 0;
		}
	}
	/* Every row is stored: record the time they all decay to. */
	r = state_heat_save(p->ps->state, p->sp.id, &p->heat, 0, 0);
	if (r == 0)
		r = pool_piece_heat_save(p, all);
	if (r < 0)
		goto fail;
	p->heat_flushed = 0;
	return 1;
fail:
	return pool_fail(p, r, err, err_len, "cannot store its heat: %s",
			 state_last_error(p->ps->state));
}

uint32_t pool_pieces_per_extent(const struct pool *p)
{
	return p->pieces.v ? p->pieces.pieces_per_extent : 0;
}

_Static_assert(PIECEPLAN_SHARES_ALL == 1 && PIECEPLAN_SHARES_PART == 2,
	       "pieceheat_plan_shares() returns the planner's kinds of shares");

/* Whether le's pieces are measured now: every extent's, or those in a window. */
static bool pool_pieces_measured(const struct pool *p, uint32_t le)
{
	const struct piecewatch *w = &p->piece_watch;

	if (!p->heat_on)
		return false;
	if (!w->nr_windows)
		return true;
	for (uint32_t i = 0; i < w->nr_windows; i++)
		if (w->le[i] == le)
			return true;
	return false;
}

int pool_piece_shares(const struct pool *p, uint32_t le, bool wait_young, double *out)
{
	if (!p->pieces.v)
		return 0;
	return pieceheat_plan_shares(&p->pieces, le,
					      wait_young && pool_pieces_measured(p, le), out);
}

bool pool_has_heat(const struct pool *p, double min_heat)
{
	const struct heat_table *t = &p->heat;

	for (uint32_t i = heat_next_used(t, 0, t->nr); i < t->nr; i = heat_next_used(t, i + 1, t->nr))
		if (heat_at(t, i)->heat != 0 && heat_value(t, i) >= min_heat)
			return true;
	return false;
}

int pool_heat_top(const struct pool *p, uint32_t top, struct pool_hot_extent **out,
		  uint32_t *nr)
{
	struct pool_hot_extent *v;
	uint32_t *idx, n = 0, kept = 0;
	int r;

	if (top > p->heat.nr)
		top = p->heat.nr;
	idx = calloc((size_t)top + 1, sizeof(*idx));
	v = calloc((size_t)top + 1, sizeof(*v));
	if (!idx || !v) {
		r = -ENOMEM;
		goto out;
	}
	r = heat_top(&p->heat, top, idx, &n);
	if (r < 0)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t le = idx[i];
		struct extmap_loc loc = extmap_get(&p->sp.map, le);

		const struct heat_extent *e = heat_at(&p->heat, le);

		if (e->heat == 0)
			break; /* hottest first: the rest are cold too */
		v[kept++] = (struct pool_hot_extent){
			.le = le,
			.tier = loc.dev == EXTMAP_NO_DEV ? -1 : (int)p->sp.meta.devs[loc.dev].tier,
			.heat = heat_value(&p->heat, le),
			.reads = e->reads,
			.writes = e->writes,
			.pieces = p->pieces.v ? p->pieces.pieces_per_extent : 0,
			.pieces_for_90 = pieceheat_pieces_for(&p->pieces, le, 0.9),
		};
	}
	*out = v;
	*nr = kept;
	v = NULL;
out:
	free(idx);
	free(v);
	return r;
}

void pool_heat_moved(struct pool *p, uint32_t le, int64_t now)
{
	/* Without it the extent may move again before min_residency: worth a word, not a failure. */
	if (le < p->heat.nr && heat_set_moved(&p->heat, le, (uint32_t)now) < 0)
		log_pool_warn(p->sp.meta.name, "no memory to record the move of extent %u", le);
}

/* The room for moves: SSD extents usable for data and free of them, free HDD extents. */
static void pool_planner_room(const struct pool *p, uint32_t *ssd_capacity, uint32_t *ssd_free,
			      uint32_t *hdd_free)
{
	int ssd = pool_ssd_dev(p);
	uint32_t used;

	*hdd_free = p->sp.map.nr_free[0];
	*ssd_capacity = *ssd_free = 0;
	if (ssd >= 0) {
		const struct metadata_dev *d = &p->sp.meta.devs[ssd];

		/* Promotions leave the SSD's swap reserve free (job_next). */
		used = d->nr_pe - p->sp.map.nr_free[ssd];
		*ssd_capacity = d->nr_pe - d->reserve_pe > used ? d->nr_pe - d->reserve_pe : used;
		*ssd_free = *ssd_capacity - used;
	}
}

double pool_extent_heat(const struct pool *p, uint32_t le)
{
	return le < p->heat.nr ? heat_value(&p->heat, le) : 0;
}

/* Pins [*next...) past those ending at or before le; the one holding le, or NULL. */
static const struct state_pin *pool_pin_at(const struct state_pin *pins, size_t nr, size_t *next,
					   uint32_t le)
{
	while (*next < nr && (uint64_t)pins[*next].first + pins[*next].nr <= le)
		++*next;
	return *next < nr && pins[*next].first <= le ? &pins[*next] : NULL;
}

/* Whether le's heat page is in use: its extents may have heat or have moved. */
static bool pool_heat_page(const struct pool *p, uint32_t le)
{
	return le < p->heat.nr && heat_next_used(&p->heat, le, le + 1) == le;
}

/* What the planner sees of extent le: heat and last move from the table, tier from the map. */
static struct planner_extent pool_planner_extent(const struct pool *p, uint32_t le, int tier)
{
	struct planner_extent e = { 0 };

	e.tier = tier < 0 ? PLANNER_NONE : tier == METADATA_TIER_SSD ? PLANNER_SSD : PLANNER_HDD;
	if (le < p->heat.nr) {
		double h = heat_value(&p->heat, le);

		e.heat = h >= 0 && h < 3e38f ? (float)h : 0;
		e.moved_at = heat_at(&p->heat, le)->moved_at;
	}
	return e;
}

int pool_planner_list(const struct pool *p, const struct state_pin *pins, size_t nr_pins,
		      struct pool_planner_list *out)
{
	uint32_t nr = p->sp.map.nr_logical, cap = 0, span_start = 0;
	struct extmap_loc loc = { .dev = EXTMAP_NO_DEV };
	struct planner_listed *grown;
	bool starts_run = false;
	size_t next_pin = 0;
	uint32_t next_split = piecemap_next_split(&p->sp.pieces, 0);

	*out = (struct pool_planner_list){ .p = p, .pins = pins, .nr_pins = nr_pins };
	/*
	 * A run of the map at a time, and within it a stretch at a time up to
	 * the next heat page or pin edge: the pass costs the runs, pages and
	 * pins of the map and the extents listed, not the extents of the pool.
	 * Every extent that starts a run of the table is listed, flagged so:
	 * the planner takes those left out as continuing the run before them.
	 */
	for (uint32_t le = 0, end = 0; le < nr;) {
		const struct state_pin *pin;
		bool run_start, split;
		uint32_t stop;
		int tier;

		if (le == end) {
			/* A span is one run or part of one: only its first extent may start one. */
			end = le + extmap_span(&p->sp.map, le, UINT32_MAX, &loc);
			span_start = le;
			starts_run = le > 0 && !extmap_loc_follows(extmap_get(&p->sp.map, le - 1), loc);
		}
		run_start = starts_run && le == span_start;
		if (next_split < le)
			next_split = piecemap_next_split(&p->sp.pieces, le);
		split = le == next_split;
		tier = loc.dev == EXTMAP_NO_DEV ? -1 : (int)p->sp.meta.devs[loc.dev].tier;
		pin = pool_pin_at(pins, nr_pins, &next_pin, le);
		if (run_start || split) {
			/* Listed whatever it is. */
		} else if (tier != METADATA_TIER_SSD && !(pin && pin->ssd) && pool_heat_page(p, le)) {
			const struct heat_extent *e = heat_at(&p->heat, le);

			/* A page holds cold extents too: plain ones stay off the list. */
			if (e->heat == 0 && !e->moved_at) {
				out->nr_unlisted_hdd += tier == METADATA_TIER_HDD && !pin;
				le++;
				continue;
			}
		} else if (tier != METADATA_TIER_SSD && !(pin && pin->ssd)) {
			/* Cold on the HDD: plain unless pinned there, where it never moves. */
			stop = heat_next_used(&p->heat, le, end);
			stop = stop > le && stop < end ? stop : end;
			if (pin && pin->first + pin->nr < stop)
				stop = pin->first + pin->nr;
			else if (!pin && next_pin < nr_pins && pins[next_pin].first < stop)
				stop = pins[next_pin].first;
			if (next_split < stop)
				stop = next_split;
			if (tier == METADATA_TIER_HDD && !pin)
				out->nr_unlisted_hdd += stop - le;
			le = stop;
			continue;
		}
		if (tier < 0 && !pin && !run_start) {
			le++;
			continue;
		}
		if (out->nr_list == cap) {
			cap = cap ? 2 * cap : 4096;
			grown = reallocarray(out->list, cap, sizeof(*grown));
			if (!grown) {
				pool_planner_list_destroy(out);
				return -ENOMEM;
			}
			out->list = grown;
		}
		out->list[out->nr_list] = (struct planner_listed){
			.le = le,
			.e = pool_planner_extent(p, le, tier),
		};
		if (run_start)
			out->list[out->nr_list].e.flags = PLANNER_STARTS_RUN;
		if (pin)
			out->list[out->nr_list].e.pin = pin->ssd ? PLANNER_SSD : PLANNER_HDD;
		/* A split extent moves whole only after its pieces came home: runs leave it. */
		if (split)
			out->list[out->nr_list].e.pin = out->list[out->nr_list].e.tier;
		out->nr_list++;
		le++;
	}
	/* The planner tells a list from none by its pointer. */
	if (!out->list) {
		out->list = malloc(sizeof(*out->list));
		if (!out->list)
			return -ENOMEM;
	}
	pool_planner_room(p, &out->ssd_capacity, &out->ssd_free, &out->hdd_free);
	return 0;
}

/* planner_unlisted_fn: the lowest plain HDD extents, those the list skipped. */
static uint32_t pool_planner_unlisted(const void *ctx, uint32_t *out, uint32_t max)
{
	const struct pool_planner_list *l = ctx;
	const struct pool *p = l->p;
	uint32_t n = 0, next_listed = 0;
	size_t next_pin = 0;

	for (uint32_t le = 0; le < p->sp.map.nr_logical && n < max; le++) {
		while (next_listed < l->nr_list && l->list[next_listed].le < le)
			next_listed++;
		if (next_listed < l->nr_list && l->list[next_listed].le == le)
			continue;
		if (pool_pin_at(l->pins, l->nr_pins, &next_pin, le))
			continue;
		if (pool_tier_of(p, le) == METADATA_TIER_HDD)
			out[n++] = le;
	}
	return n;
}

void pool_planner_list_use(const struct pool_planner_list *l, struct planner_input *in)
{
	in->ext = NULL;
	in->list = l->list;
	in->nr_list = l->nr_list;
	in->nr_unlisted_hdd = l->nr_unlisted_hdd;
	in->unlisted_hdd = pool_planner_unlisted;
	in->unlisted_ctx = l;
	in->nr = l->p->sp.map.nr_logical;
	in->ssd_capacity = l->ssd_capacity;
	in->ssd_free = l->ssd_free;
	in->hdd_free = l->hdd_free;
}

void pool_planner_list_destroy(struct pool_planner_list *l)
{
	if (!l)
		return;
	free(l->list);
	l->list = NULL;
	l->nr_list = 0;
}

void pool_io_pending(const struct pool *p, struct state_tier_io io[2])
{
	io[0] = p->io[0];
	io[1] = p->io[1];
}

int pool_piece_input(const struct pool *p, const struct pool_planner_list *l, double min_heat,
		     double headroom, uint32_t now, uint32_t min_residency,
		     struct pool_piece_input *out)
{
	const struct piecemap *pm = &p->sp.pieces;
	uint32_t ppe = pool_pieces_per_extent(p), at = 0;
	uint64_t holes = 0, targets, max_targets = pool_table_targets_max(p), room, floor;
	uint32_t used;
	bool full = false;
	size_t next_pin = 0;

	*out = (struct pool_piece_input){ .p = p, .pieces_per_extent = ppe };
	if (!ppe || (pm->pieces_per_extent && pm->pieces_per_extent != ppe))
		return -ENOENT;
	if (pool_ssd_dev(p) < 0)
		return -ENODEV;
	out->ext = calloc((size_t)l->nr_list + 1, sizeof(*out->ext));
	out->out = malloc(((size_t)pm->nr_pieces + 1) * sizeof(*out->out));
	if (!out->ext || !out->out) {
		pool_piece_input_destroy(out);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < l->nr_list; i++) {
		const struct planner_listed *x = &l->list[i];
		const struct state_pin *pin = pool_pin_at(l->pins, l->nr_pins, &next_pin, x->le);
		struct pieceplan_extent *e = &out->ext[out->nr];
		uint32_t first, n;

		if (x->e.tier == PLANNER_NONE)
			continue;
		/* The list pins a split extent where it is; the plan knows how to move it. */
		*e = (struct pieceplan_extent){
			.le = x->le,
			.heat = x->e.heat,
			.pin_ssd = pin && pin->ssd,
			.pin_hdd = pin && !pin->ssd,
			.whole_ssd = x->e.tier == PLANNER_SSD,
		};
		n = piecemap_extent(pm, x->le, &first);
		/* min_heat is for promotions: what is on the SSD, whole or in pieces, keeps its heat. */
		if (pin && !pin->ssd)
			e->heat = 0;
		else if (!e->whole_ssd && !n && e->heat < min_heat)
			e->heat = 0;
		/* Moved whole too lately to move again (a clock gone back: just now): it stays. */
		if (!pin && !n && x->e.moved_at &&
		    (x->e.moved_at > now || now - x->e.moved_at < min_residency)) {
			if (e->whole_ssd)
				e->pin_ssd = true;
			else
				e->heat = 0;
		}
		if (n) {
			e->out = out->out + at;
			e->nr_out = n;
			for (uint32_t k = 0; k < n; k++)
				out->out[at++] = pm->pieces[first + k].idx;
		}
		out->nr++;
	}
	for (uint32_t c = 0; c < pm->nr_containers; c++)
		holes += ppe - pm->containers[c].nr_used;
	room = (uint64_t)l->ssd_capacity * ppe;
	room -= (uint64_t)((double)room * headroom);
	/* Whole extents alone: the headroom in extents, as the whole planner keeps it. */
	if (!pm->nr_containers)
		out->room_whole = (l->ssd_capacity - (uint64_t)(headroom * l->ssd_capacity)) * ppe;
	/* A container's worth for the one being filled; the holes of the others are not room. */
	room = room > holes + ppe ? room - holes - ppe : 0;
	/*
	 * Never less than what the SSD holds now less the whole extents the
	 * HDD tier can take back: on a pool whose capacity is both tiers,
	 * full, the headroom and the container's worth would be demotions
	 * with nowhere to go (a run that pinned 8 extents to the SSD planned
	 * 14 demotions for 10 free HDD extents, and ended partial). The whole
	 * planner keeps to hdd_free the same way. Pieces out keep their slots
	 * unless the plan prefers others (home, they need no room there); but
	 * such a full SSD has no extent for a new container, so pieces out
	 * may only fill the containers there are.
	 */
	used = l->ssd_capacity - l->ssd_free;
	if (used > l->hdd_free) {
		floor = (uint64_t)(used - l->hdd_free) * ppe;
		floor = floor > holes ? floor - holes : 0;
		if (room < floor) {
			room = floor;
			full = true;
		}
		if (out->room_whole && out->room_whole < floor)
			out->room_whole = floor;
	}
	out->room = room;
	if (out->room_whole < room)
		out->room_whole = room;
	out->max_pieces = UINT64_MAX;
	if (max_targets) {
		targets = pool_table_targets(p);
		out->max_pieces = pm->nr_pieces + (max_targets > targets ? (max_targets - targets) / 2 : 0);
	}
	if (full && out->max_pieces > pm->nr_pieces + holes)
		out->max_pieces = pm->nr_pieces + holes;
	return 0;
}

/*
 * pieceplan_shares_fn over a pool_piece_input. A split extent's weights
 * are stored over a restart (pool_piece_heat_load); where none are known
 * (a state from before, a power cut before the first flush) its pieces out
 * are taken to hold its heat until they come back, so that a run does not
 * bring them home for want of them.
 */
static int pool_piece_input_shares(void *ctx, uint32_t i, double *out)
{
	const struct pool_piece_input *pi = ctx;
	const struct pieceplan_extent *e = &pi->ext[i];

	int r = pool_piece_shares(pi->p, e->le, true, out);

	/*
	 * A young extent's pieces out hold a piece's share each while the
	 * rest of it waits: out for a reason once, they keep the hysteresis'
	 * bonus rather than go home first.
	 */
	if (r == PIECEPLAN_SHARES_PART) {
		for (uint32_t j = 0; j < e->nr_out; j++)
			out[e->out[j]] = 1.0 / pi->pieces_per_extent;
		return r;
	}
	if (r > 0)
		return r;
	if (!e->nr_out)
		return 0;
	memset(out, 0, pi->pieces_per_extent * sizeof(*out));
	for (uint32_t j = 0; j < e->nr_out; j++)
		out[e->out[j]] = 1;
	return 1;
}

void pool_piece_input_use(const struct pool_piece_input *pi, struct pieceplan_input *in)
{
	*in = (struct pieceplan_input){
		.ext = pi->ext,
		.nr = pi->nr,
		.pieces_per_extent = pi->pieces_per_extent,
		.room = pi->room,
		.max_pieces = pi->max_pieces,
		/* Whole extents brought in take the table's targets as pieces do. */
		.max_entries = pi->max_pieces,
		.shares = pool_piece_input_shares,
		.ctx = (void *)pi,
	};
}

void pool_piece_input_destroy(struct pool_piece_input *pi)
{
	if (!pi)
		return;
	free(pi->ext);
	free(pi->out);
	pi->ext = NULL;
	pi->out = NULL;
	pi->nr = 0;
}
