/* SPDX-License-Identifier: GPL-2.0-or-later */
/* heat: the volume's dm-stats region, samples into heat and per-tier I/O, and their flush. */
#include "pool-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dmctl.h"
#include "iostats.h"
#include "log.h"
#include "planner.h"
#include "size.h"

/* dm-stats memory for all pools stays under 1/this of RAM (docs/heat.md). */
#define POOL_HEAT_RAM_SHARE 16
/*
 * Areas read per dm message: the reply (~45 bytes an area) and the parsed
 * counters stay a constant 5 MB however large the pool (docs/heat.md).
 */
#define POOL_SAMPLE_CHUNK 65536u
/* Heat stored per step of the flush: one step stays well within 50 ms (bench-flush). */
#define POOL_HEAT_FLUSH_CHUNK STATE_HEAT_CHUNK

static uint64_t ram_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);

	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

/*
 * (Re)create the volume's region after activation or a resize; heat follows
 * the volume's extents. When the kernel memory it needs is over the bound,
 * heat stays off and pool show says why.
 */
void pool_heat_start(struct pool *p)
{
	uint32_t nr = p->sp.map.nr_logical;
	uint64_t per_area = iostats_kernel_bytes_per_area(), used_by_others = 0;
	char need[SIZE_FORMAT_MAX], limit[SIZE_FORMAT_MAX];
	struct statsparse_area *grown;
	int r;

	p->heat_on = 0;
	p->heat_off[0] = '\0';
	for (struct pool *o = p->ps->list; o; o = o->next)
		if (o != p && o->heat_on)
			used_by_others += o->heat_kernel_bytes;
	p->heat_kernel_bytes = per_area * nr;
	p->heat_limit_bytes = ram_bytes() / POOL_HEAT_RAM_SHARE;
	if (p->heat_limit_bytes && used_by_others + p->heat_kernel_bytes > p->heat_limit_bytes) {
		errbuf_set(p->heat_off, sizeof(p->heat_off),
			   "heat is off: dm-stats would need %s of kernel memory for %u extents (with the"
			   " other pools' over the bound of %s, 1/%d of RAM); use a larger extent size",
			   size_format(used_by_others + p->heat_kernel_bytes, need, sizeof(need)),
			   nr, size_format(p->heat_limit_bytes, limit, sizeof(limit)),
			   POOL_HEAT_RAM_SHARE);
		log_pool_warn(p->sp.meta.name, "%s", p->heat_off);
		return;
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
					pool_extent_sectors(p), &p->heat_region);
	if (r < 0) {
		errbuf_set(p->heat_off, sizeof(p->heat_off), "heat is off: no dm-stats region: %s",
			   dmctl_error_text(r));
		log_pool_warn(p->sp.meta.name, "%s", p->heat_off);
		return;
	}
	p->heat_on = 1;
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

/* Add the counters of areas [first, first + nr) to the I/O of the tier each extent is on. */
static void pool_count_io(struct pool *p, uint32_t first, uint32_t nr)
{
	for (uint32_t i = 0; i < nr; i++) {
		const struct statsparse_area *a = &p->sample[i];
		struct extmap_loc loc;
		struct state_tier_io *io;

		if (!a->reads && !a->writes)
			continue;
		loc = extmap_get(&p->sp.map, first + i);
		if (loc.dev == EXTMAP_NO_DEV)
			continue;
		io = &p->io[p->sp.meta.devs[loc.dev].tier];
		io->reads += a->reads;
		io->writes += a->writes;
		io->read_bytes += a->sectors_read * SECTOR;
		io->write_bytes += a->sectors_written * SECTOR;
	}
}

/* One part of a sample: read, parse, heat, I/O per tier. */
static int pool_sample_part(struct pool *p, uint32_t first, uint32_t nr, double decay, char *err,
			    size_t err_len)
{
	size_t len;
	char *text = NULL;
	int r;

	r = iostats_sample(p->sp.meta.name, p->heat_region, first, nr, &text, &len);
	if (r < 0) {
		errbuf_set(err, err_len, "pool %s: cannot read its dm-stats region: %s",
			   p->sp.meta.name, dmctl_error_text(r));
		return r;
	}
	r = statsparse_areas(text, len, pool_extent_sectors(p), p->sample, nr);
	free(text);
	if (r < 0)
		return pool_fail(p, r, err, err_len, "unexpected dm-stats counters: %s",
				 strerror(-r));
	r = heat_apply_range(&p->heat, &p->ps->heat, p->sample, first, nr, decay);
	if (r < 0)
		return pool_fail(p, r, err, err_len, "heat update failed: %s", strerror(-r));
	pool_count_io(p, first, nr);
	return 0;
}

int pool_sample(struct pool *p, uint64_t now_ns, char *err, size_t err_len)
{
	uint32_t nr = p->sp.map.nr_logical;
	int64_t minute = (int64_t)(now_ns / 60000000000ull);
	double decay;
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
	r = heat_sample_begin(&p->heat, &p->ps->heat, now_ns, &decay);
	if (r < 0)
		return pool_fail(p, r, err, err_len, "heat update failed: %s", strerror(-r));
	for (uint32_t first = 0; r == 0 && first < nr; first += POOL_SAMPLE_CHUNK)
		r = pool_sample_part(p, first, nr - first < POOL_SAMPLE_CHUNK ? nr - first :
						   POOL_SAMPLE_CHUNK, decay, err, err_len);
	/* Parts already applied were decayed for this sample: never twice. */
	heat_sample_end(&p->heat, now_ns);
	if (r < 0)
		pool_heat_start(p); /* regions die with the device: make a new one */
	return r;
}

int pool_flush_step(struct pool *p, int all, char *err, size_t err_len)
{
	uint32_t to;
	int r;

	r = pool_io_flush(p);
	if (r < 0)
		return pool_fail(p, r, err, err_len, "cannot store its I/O history: %s",
				 state_last_error(p->ps->state));
	if (p->heat.nr == 0)
		return 1;
	if (p->heat_flushed >= p->heat.nr)
		p->heat_flushed = 0; /* the volume shrank since the last step */
	to = all || p->heat.nr - p->heat_flushed < POOL_HEAT_FLUSH_CHUNK ?
		     p->heat.nr : p->heat_flushed + POOL_HEAT_FLUSH_CHUNK;
	r = state_heat_save(p->ps->state, p->sp.id, &p->heat, p->heat_flushed, to);
	if (r < 0)
		return pool_fail(p, r, err, err_len, "cannot store its heat: %s",
				 state_last_error(p->ps->state));
	p->heat_flushed = to;
	if (to < p->heat.nr)
		return 0;
	p->heat_flushed = 0;
	return 1;
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

		if (p->heat.e[le].heat == 0)
			break; /* hottest first: the rest are cold too */
		v[kept++] = (struct pool_hot_extent){
			.le = le,
			.tier = loc.dev == EXTMAP_NO_DEV ? -1 : (int)p->sp.meta.devs[loc.dev].tier,
			.heat = p->heat.e[le].heat,
			.reads = p->heat.e[le].reads,
			.writes = p->heat.e[le].writes,
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
	if (le < p->heat.nr)
		p->heat.e[le].moved_at = (uint32_t)now;
}

int pool_planner_input(const struct pool *p, struct planner_extent **out, uint32_t *ssd_capacity,
		       uint32_t *ssd_free, uint32_t *hdd_free)
{
	int ssd = pool_ssd_dev(p);
	uint32_t nr = p->sp.map.nr_logical, used;
	struct planner_extent *v = calloc(nr ? nr : 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (uint32_t le = 0; le < nr; le++) {
		struct extmap_loc loc = extmap_get(&p->sp.map, le);

		if (loc.dev < p->sp.meta.nr_devs)
			v[le].tier = p->sp.meta.devs[loc.dev].tier == METADATA_TIER_SSD ? PLANNER_SSD :
											  PLANNER_HDD;
		if (le < p->heat.nr) {
			float h = p->heat.e[le].heat;

			v[le].heat = h >= 0 && h < 3e38f ? h : 0;
			v[le].moved_at = p->heat.e[le].moved_at;
		}
	}
	*hdd_free = p->sp.map.nr_free[0];
	*ssd_capacity = *ssd_free = 0;
	if (ssd >= 0) {
		const struct metadata_dev *d = &p->sp.meta.devs[ssd];

		/* Promotions leave the SSD's swap reserve free (job_next). */
		used = d->nr_pe - p->sp.map.nr_free[ssd];
		*ssd_capacity = d->nr_pe - d->reserve_pe > used ? d->nr_pe - d->reserve_pe : used;
		*ssd_free = *ssd_capacity - used;
	}
	*out = v;
	return 0;
}

void pool_io_pending(const struct pool *p, struct state_tier_io io[2])
{
	io[0] = p->io[0];
	io[1] = p->io[1];
}
