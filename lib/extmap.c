/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "extmap.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define EXTMAP_WORD_BITS 64

static const struct extmap_loc extmap_unmapped = { .dev = EXTMAP_NO_DEV };

static size_t extmap_words(uint32_t nr_pe)
{
	return ((size_t)nr_pe + EXTMAP_WORD_BITS - 1) / EXTMAP_WORD_BITS;
}

static uint64_t extmap_mask(uint32_t i)
{
	return UINT64_C(1) << (i % EXTMAP_WORD_BITS);
}

static bool extmap_pe_valid(const struct extmap *m, unsigned dev, uint32_t pe)
{
	return dev < m->nr_devs && pe < m->nr_pe[dev];
}

/* Only where pe's leaf of the bitmap is made (extmap_hold_pe): it cannot fail then. */
static void extmap_set_used(struct extmap *m, unsigned dev, uint32_t pe)
{
	bitset_set(&m->used[dev], pe);
	m->nr_free[dev]--;
}

static void extmap_clear_used(struct extmap *m, unsigned dev, uint32_t pe)
{
	bitset_clear(&m->used[dev], pe);
	m->nr_free[dev]++;
	if (pe / EXTMAP_WORD_BITS < m->free_hint[dev])
		m->free_hint[dev] = pe / EXTMAP_WORD_BITS;
}

static size_t extmap_dirty_words(uint32_t nr_logical)
{
	return extmap_words((uint32_t)(((uint64_t)nr_logical + EXTMAP_DIRTY_GROUP - 1) /
				       EXTMAP_DIRTY_GROUP));
}

static void extmap_mark_dirty(struct extmap *m, uint32_t le)
{
	uint32_t group = le / EXTMAP_DIRTY_GROUP;

	m->dirty[group / EXTMAP_WORD_BITS] |= extmap_mask(group);
}

/* Groups first..last, a word at a time: a new map's every group is new. */
static void extmap_mark_dirty_groups(struct extmap *m, uint32_t first, uint32_t last)
{
	for (uint32_t g = first; g <= last;) {
		if (g % EXTMAP_WORD_BITS == 0 && last - g + 1 >= EXTMAP_WORD_BITS) {
			m->dirty[g / EXTMAP_WORD_BITS] = ~UINT64_C(0);
			g += EXTMAP_WORD_BITS;
		} else {
			m->dirty[g / EXTMAP_WORD_BITS] |= extmap_mask(g);
			g++;
		}
	}
}

#define EXTMAP_PAGE EXTMAP_DIRTY_GROUP

int extmap_hold_pe(struct extmap *m, unsigned dev, uint32_t pe)
{
	if (!m || !extmap_pe_valid(m, dev, pe))
		return -EINVAL;
	return bitset_hold(&m->used[dev], pe);
}

static uint32_t extmap_nr_groups(uint32_t nr_logical)
{
	return (uint32_t)(((uint64_t)nr_logical + EXTMAP_PAGE - 1) / EXTMAP_PAGE);
}

/* The run holding le, or the index of the first run after le (nr_runs if none) with *in false. */
static uint32_t extmap_run_find(const struct extmap *m, uint32_t le, bool *in)
{
	uint32_t lo = 0, hi = m->nr_runs;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->runs[mid].first + m->runs[mid].count <= le)
			lo = mid + 1;
		else
			hi = mid;
	}
	*in = lo < m->nr_runs && m->runs[lo].first <= le;
	return lo;
}

/* Where the runs put le, pages aside. */
static struct extmap_loc extmap_base(const struct extmap *m, uint32_t le)
{
	bool in;
	uint32_t r = extmap_run_find(m, le, &in);

	if (!in)
		return extmap_unmapped;
	return (struct extmap_loc){ .dev = m->runs[r].dev,
				    .pe = m->runs[r].pe + (le - m->runs[r].first) };
}

static struct extmap_loc *extmap_pg(const struct extmap *m, uint32_t g)
{
	return pagedir_get(&m->pages, g);
}

/* le's group as a page, made from the runs if it was none; NULL without memory. */
static struct extmap_loc *extmap_page(struct extmap *m, uint32_t le)
{
	uint32_t g = le / EXTMAP_PAGE, first = g * EXTMAP_PAGE;
	struct extmap_loc *pg = extmap_pg(m, g);

	if (pg)
		return pg;
	pg = malloc(EXTMAP_PAGE * sizeof(*pg));
	if (!pg || pagedir_set(&m->pages, g, pg) < 0) {
		free(pg);
		return NULL;
	}
	for (uint32_t i = 0; i < EXTMAP_PAGE; i++)
		pg[i] = first + i < m->nr_logical ? extmap_base(m, first + i) : extmap_unmapped;
	m->nr_pages++;
	return pg;
}

/* Whether any group of le [from, to) is a page. */
static bool extmap_any_page(const struct extmap *m, uint32_t from, uint32_t to)
{
	if (from >= to)
		return false;
	return pagedir_next(&m->pages, from / EXTMAP_PAGE, (to - 1) / EXTMAP_PAGE + 1) <=
	       (to - 1) / EXTMAP_PAGE;
}

/* Every group of le [from, to) is a page: nothing there is the runs' to say. */
static bool extmap_all_paged(const struct extmap *m, uint32_t from, uint32_t to)
{
	for (uint32_t g = from / EXTMAP_PAGE; from < to && g <= (to - 1) / EXTMAP_PAGE; g++)
		if (!extmap_pg(m, g))
			return false;
	return true;
}

/*
 * Record le at (dev, pe) without a page when it continues the last run, or
 * starts one past it: the order of a decoder. Returns whether it did.
 */
static bool extmap_append(struct extmap *m, uint32_t le, unsigned dev, uint32_t pe)
{
	struct extmap_run *last = m->nr_runs ? &m->runs[m->nr_runs - 1] : NULL;
	uint32_t end = last ? last->first + last->count : 0;

	if (extmap_pg(m, le / EXTMAP_PAGE) || le < end)
		return false;
	/* A run may pass over paged le (their pages win), never over unmapped ones. */
	if (last && last->dev == dev && (uint64_t)last->pe + (le - last->first) == pe &&
	    extmap_all_paged(m, end, le)) {
		last->count = le - last->first + 1;
		return true;
	}
	if (m->nr_runs == m->runs_cap) {
		uint32_t cap = m->runs_cap ? 2 * m->runs_cap : 4;
		struct extmap_run *grown = reallocarray(m->runs, cap, sizeof(*grown));

		if (!grown)
			return false;
		m->runs = grown;
		m->runs_cap = cap;
	}
	m->runs[m->nr_runs++] = (struct extmap_run){ .first = le, .count = 1, .pe = pe,
						     .dev = (uint16_t)dev };
	return true;
}

/* le (mapped, no page) leaves its run at either end without a page; whether it could. */
static bool extmap_trim(struct extmap *m, uint32_t le)
{
	bool in;
	uint32_t r;
	struct extmap_run *run;

	if (extmap_pg(m, le / EXTMAP_PAGE))
		return false;
	r = extmap_run_find(m, le, &in);
	if (!in)
		return false;
	run = &m->runs[r];
	if (le == run->first) {
		run->first++;
		run->pe++;
		run->count--;
	} else if (le == run->first + run->count - 1) {
		run->count--;
	} else {
		return false;
	}
	if (!run->count) {
		memmove(run, run + 1, (m->nr_runs - r - 1) * sizeof(*run));
		m->nr_runs--;
	}
	return true;
}

/* Set le's location (the counters and bitmaps are the caller's); -ENOMEM leaves it as it was. */
static int extmap_put(struct extmap *m, uint32_t le, struct extmap_loc loc)
{
	struct extmap_loc *pg;

	if (loc.dev != EXTMAP_NO_DEV && extmap_append(m, le, loc.dev, loc.pe))
		return 0;
	if (loc.dev == EXTMAP_NO_DEV && extmap_trim(m, le))
		return 0;
	pg = extmap_page(m, le);
	if (!pg)
		return -ENOMEM;
	pg[le % EXTMAP_PAGE] = loc;
	return 0;
}

static int extmap_set_loc(struct extmap *m, uint32_t le, unsigned dev, uint32_t pe)
{
	int r = extmap_hold_pe(m, dev, pe);

	if (r == 0)
		r = extmap_put(m, le, (struct extmap_loc){ .dev = (uint16_t)dev, .pe = pe });
	if (r < 0)
		return r;
	m->nr_mapped[dev]++;
	extmap_mark_dirty(m, le);
	extmap_set_used(m, dev, pe);
	return 0;
}

/* Lowest free pe >= from on dev, or UINT32_MAX; passes a full leaf of the bitmap at once. */
static uint32_t extmap_find_free(const struct extmap *m, unsigned dev, uint64_t from)
{
	return from >= m->nr_pe[dev] ? UINT32_MAX : bitset_next_clear(&m->used[dev], (uint32_t)from);
}

int extmap_init(struct extmap *m, uint32_t nr_logical)
{
	if (!m)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	return extmap_resize_logical(m, nr_logical);
}

/*
 * A device with no pe used has no le: runs that name it lie wholly under
 * pages, and go with it.
 */
static void extmap_runs_forget_dev(struct extmap *m, unsigned dev)
{
	uint32_t kept = 0;

	for (uint32_t r = 0; r < m->nr_runs; r++)
		if (m->runs[r].dev != dev)
			m->runs[kept++] = m->runs[r];
	m->nr_runs = kept;
}

static void extmap_pages_free(struct extmap *m, uint32_t from, uint32_t to)
{
	for (uint32_t g = pagedir_next(&m->pages, from, to); g < to;
	     g = pagedir_next(&m->pages, g + 1, to)) {
		free(extmap_pg(m, g));
		pagedir_set(&m->pages, g, NULL); /* its leaf is made: cannot fail */
		m->nr_pages--;
	}
}

void extmap_destroy(struct extmap *m)
{
	if (!m)
		return;
	extmap_pages_free(m, 0, m->pages.nr);
	pagedir_destroy(&m->pages);
	free(m->runs);
	free(m->dirty);
	for (unsigned dev = 0; dev < EXTMAP_MAX_DEVS; dev++)
		bitset_destroy(&m->used[dev]);
	memset(m, 0, sizeof(*m));
}

int extmap_add_dev(struct extmap *m, uint32_t nr_pe, unsigned *dev_out)
{
	unsigned dev;

	if (!m || !nr_pe)
		return -EINVAL;
	if (m->nr_devs >= EXTMAP_MAX_DEVS)
		return -ENOSPC;
	if (bitset_init(&m->used[m->nr_devs], nr_pe) < 0)
		return -ENOMEM;
	dev = m->nr_devs++;
	m->nr_pe[dev] = nr_pe;
	m->nr_free[dev] = nr_pe;
	m->nr_mapped[dev] = 0;
	m->free_hint[dev] = 0;
	if (dev_out)
		*dev_out = dev;
	return 0;
}

int extmap_remove_dev(struct extmap *m, unsigned dev)
{
	/* Removing from the middle would renumber every later device. */
	if (!m || !m->nr_devs || dev != m->nr_devs - 1)
		return -EINVAL;
	if (m->nr_free[dev] != m->nr_pe[dev])
		return -EBUSY;
	extmap_runs_forget_dev(m, dev);
	bitset_destroy(&m->used[dev]);
	m->nr_pe[dev] = 0;
	m->nr_free[dev] = 0;
	m->nr_mapped[dev] = 0;
	m->free_hint[dev] = 0;
	m->nr_devs--;
	return 0;
}

int extmap_drop_dev(struct extmap *m, unsigned dev)
{
	if (!m || dev >= m->nr_devs)
		return -EINVAL;
	if (m->nr_free[dev] != m->nr_pe[dev])
		return -EBUSY;
	extmap_runs_forget_dev(m, dev);
	bitset_destroy(&m->used[dev]);
	for (unsigned i = dev; i + 1 < m->nr_devs; i++) {
		m->used[i] = m->used[i + 1];
		m->nr_pe[i] = m->nr_pe[i + 1];
		m->nr_free[i] = m->nr_free[i + 1];
		m->nr_mapped[i] = m->nr_mapped[i + 1];
		m->free_hint[i] = m->free_hint[i + 1];
	}
	m->nr_devs--;
	memset(&m->used[m->nr_devs], 0, sizeof(m->used[m->nr_devs]));
	m->nr_pe[m->nr_devs] = 0;
	m->nr_free[m->nr_devs] = 0;
	m->nr_mapped[m->nr_devs] = 0;
	m->free_hint[m->nr_devs] = 0;
	/* No le is on dev (its pe are all free): only later devices renumber. */
	for (uint32_t r = 0; r < m->nr_runs; r++)
		if (m->runs[r].dev > dev) {
			m->runs[r].dev--;
			extmap_mark_dirty_groups(m, m->runs[r].first / EXTMAP_PAGE,
						 (m->runs[r].first + m->runs[r].count - 1) / EXTMAP_PAGE);
		}
	for (uint32_t g = pagedir_next(&m->pages, 0, m->pages.nr); g < m->pages.nr;
	     g = pagedir_next(&m->pages, g + 1, m->pages.nr)) {
		struct extmap_loc *pg = extmap_pg(m, g);

		for (uint32_t i = 0; i < EXTMAP_PAGE; i++)
			if (pg[i].dev != EXTMAP_NO_DEV && pg[i].dev > dev) {
				pg[i].dev--;
				extmap_mark_dirty(m, g * EXTMAP_PAGE + i);
			}
	}
	return 0;
}

int extmap_resize_logical(struct extmap *m, uint32_t nr_logical)
{
	uint32_t groups = extmap_nr_groups(nr_logical);
	size_t old_words, new_words;
	uint64_t *dirty;

	if (!m)
		return -EINVAL;
	for (uint32_t le = nr_logical; le < m->nr_logical;) {
		struct extmap_loc loc;
		uint32_t n = extmap_span(m, le, m->nr_logical - le, &loc);

		if (loc.dev != EXTMAP_NO_DEV)
			return -EBUSY;
		le += n;
	}
	if (!nr_logical) {
		extmap_pages_free(m, 0, m->pages.nr);
		pagedir_destroy(&m->pages);
		free(m->dirty);
		free(m->runs);
		m->dirty = NULL;
		m->runs = NULL;
		m->nr_runs = m->runs_cap = 0;
		m->nr_logical = 0;
		return 0;
	}
	/* The bitmap first: it cannot fail once the map has grown. */
	old_words = m->dirty ? extmap_dirty_words(m->nr_logical) : 0;
	new_words = extmap_dirty_words(nr_logical);
	if (new_words > old_words || !m->dirty) {
		dirty = reallocarray(m->dirty, new_words, sizeof(*dirty));
		if (!dirty)
			return -ENOMEM;
		memset(dirty + old_words, 0, (new_words - old_words) * sizeof(*dirty));
		m->dirty = dirty;
	}
	if (groups > m->pages.nr && pagedir_resize(&m->pages, groups) < 0)
		return -ENOMEM;
	if (nr_logical < m->nr_logical) {
		/* Runs end at the new end; pages past it go, a page cut short keeps unmapped le. */
		while (m->nr_runs && m->runs[m->nr_runs - 1].first >= nr_logical)
			m->nr_runs--;
		if (m->nr_runs && m->runs[m->nr_runs - 1].first +
					  m->runs[m->nr_runs - 1].count > nr_logical)
			m->runs[m->nr_runs - 1].count = nr_logical - m->runs[m->nr_runs - 1].first;
		extmap_pages_free(m, groups, m->pages.nr);
		pagedir_resize(&m->pages, groups); /* a shrink: cannot fail */
	}
	if (nr_logical > m->nr_logical)
		extmap_mark_dirty_groups(m, m->nr_logical / EXTMAP_DIRTY_GROUP,
					 (nr_logical - 1) / EXTMAP_DIRTY_GROUP);
	/* A group cut short by a shrink changed too; bits past the end stay clear. */
	if (nr_logical < m->nr_logical) {
		uint32_t last = (nr_logical - 1) / EXTMAP_DIRTY_GROUP;

		m->dirty[last / EXTMAP_WORD_BITS] |= extmap_mask(last);
		m->dirty[last / EXTMAP_WORD_BITS] &= ~(~UINT64_C(0) << (last % EXTMAP_WORD_BITS) << 1);
		memset(m->dirty + last / EXTMAP_WORD_BITS + 1, 0,
		       (old_words - last / EXTMAP_WORD_BITS - 1) * sizeof(*m->dirty));
	}
	m->nr_logical = nr_logical;
	return 0;
}

uint32_t extmap_next_dirty(const struct extmap *m, uint32_t from)
{
	size_t nr_words = m && m->dirty ? extmap_dirty_words(m->nr_logical) : 0;
	size_t w = from / EXTMAP_WORD_BITS;
	uint64_t bits;

	if (w >= nr_words)
		return UINT32_MAX;
	bits = m->dirty[w] & (~UINT64_C(0) << (from % EXTMAP_WORD_BITS));
	while (!bits) {
		if (++w == nr_words)
			return UINT32_MAX;
		bits = m->dirty[w];
	}
	return (uint32_t)(w * EXTMAP_WORD_BITS + (unsigned)__builtin_ctzll(bits));
}

void extmap_dirty_clear(struct extmap *m)
{
	if (m && m->dirty)
		memset(m->dirty, 0, extmap_dirty_words(m->nr_logical) * sizeof(*m->dirty));
}

int extmap_map(struct extmap *m, uint32_t le, unsigned dev, uint32_t pe)
{
	if (!m || le >= m->nr_logical || !extmap_pe_valid(m, dev, pe))
		return -EINVAL;
	if (extmap_get(m, le).dev != EXTMAP_NO_DEV)
		return -EEXIST;
	if (bitset_test(&m->used[dev], pe))
		return -EBUSY;
	return extmap_set_loc(m, le, dev, pe);
}

int extmap_map_run(struct extmap *m, uint32_t le, unsigned dev, uint32_t pe, uint32_t count)
{
	struct extmap_run *last;
	uint32_t end;
	int r = 0;

	if (!m || !count || le >= m->nr_logical || count > m->nr_logical - le ||
	    !extmap_pe_valid(m, dev, pe) || count > m->nr_pe[dev] - pe)
		return -EINVAL;
	last = m->nr_runs ? &m->runs[m->nr_runs - 1] : NULL;
	end = last ? last->first + last->count : 0;
	/* Past the last run and no page: all unmapped; every pe free: a run, at once. */
	if (le >= end && !extmap_any_page(m, le, le + count) &&
	    bitset_all(&m->used[dev], pe, count, false)) {
		struct extmap_run was = last ? *last : (struct extmap_run){ 0 };
		uint32_t nr_runs = m->nr_runs;

		if (!extmap_append(m, le, dev, pe))
			return -ENOMEM;
		/* All or nothing: the run appended goes again if its bits cannot be had. */
		if (bitset_set_range(&m->used[dev], pe, count) < 0) {
			m->nr_runs = nr_runs;
			if (last)
				*last = was;
			return -ENOMEM;
		}
		last = &m->runs[m->nr_runs - 1];
		last->count += count - 1;
		m->nr_free[dev] -= count;
		m->nr_mapped[dev] += count;
		extmap_mark_dirty_groups(m, le / EXTMAP_DIRTY_GROUP,
					 (le + count - 1) / EXTMAP_DIRTY_GROUP);
		return 0;
	}
	for (uint32_t i = 0; r == 0 && i < count; i++)
		r = extmap_map(m, le + i, dev, pe + i);
	return r;
}

int extmap_unmap(struct extmap *m, uint32_t le)
{
	struct extmap_loc old;

	if (!m || le >= m->nr_logical)
		return -EINVAL;
	old = extmap_get(m, le);
	if (old.dev == EXTMAP_NO_DEV)
		return -ENOENT;
	if (extmap_hold_pe(m, old.dev, old.pe) < 0 || extmap_put(m, le, extmap_unmapped) < 0)
		return -ENOMEM;
	m->nr_mapped[old.dev]--;
	extmap_mark_dirty(m, le);
	extmap_clear_used(m, old.dev, old.pe);
	return 0;
}

int extmap_remap(struct extmap *m, uint32_t le, unsigned dev, uint32_t pe)
{
	struct extmap_loc old;

	if (!m || le >= m->nr_logical || !extmap_pe_valid(m, dev, pe))
		return -EINVAL;
	old = extmap_get(m, le);
	if (old.dev == EXTMAP_NO_DEV)
		return -ENOENT;
	if (bitset_test(&m->used[dev], pe))
		return -EBUSY;
	/* A mapped le lies within a run or a page: a page it is, or nothing changes. */
	if (!extmap_page(m, le) || extmap_hold_pe(m, dev, pe) < 0 ||
	    extmap_hold_pe(m, old.dev, old.pe) < 0)
		return -ENOMEM;
	extmap_set_loc(m, le, dev, pe);
	m->nr_mapped[old.dev]--;
	extmap_clear_used(m, old.dev, old.pe);
	return 0;
}

int extmap_alloc(struct extmap *m, unsigned dev, uint32_t *pe)
{
	uint32_t found;

	if (!m || !pe || dev >= m->nr_devs)
		return -EINVAL;
	if (!m->nr_free[dev])
		return -ENOSPC;
	found = extmap_find_free(m, dev, (uint64_t)m->free_hint[dev] * EXTMAP_WORD_BITS);
	/* Only reachable when nr_free disagrees with the bitmap. */
	if (found == UINT32_MAX)
		return -ENOSPC;
	if (extmap_hold_pe(m, dev, found) < 0)
		return -ENOMEM;
	m->free_hint[dev] = found / EXTMAP_WORD_BITS;
	extmap_set_used(m, dev, found);
	*pe = found;
	return 0;
}

int extmap_claim(struct extmap *m, unsigned dev, uint32_t pe)
{
	if (!m || !extmap_pe_valid(m, dev, pe))
		return -EINVAL;
	if (bitset_test(&m->used[dev], pe))
		return -EBUSY;
	if (extmap_hold_pe(m, dev, pe) < 0)
		return -ENOMEM;
	extmap_set_used(m, dev, pe);
	return 0;
}

int extmap_release(struct extmap *m, unsigned dev, uint32_t pe)
{
	if (!m || !extmap_pe_valid(m, dev, pe))
		return -EINVAL;
	if (!bitset_test(&m->used[dev], pe))
		return -ENOENT;
	if (extmap_hold_pe(m, dev, pe) < 0)
		return -ENOMEM;
	extmap_clear_used(m, dev, pe);
	return 0;
}

int extmap_fill_linear(struct extmap *m, unsigned dev)
{
	uint32_t pe;
	int n = 0;

	if (!m || dev >= m->nr_devs)
		return -EINVAL;
	/* The count must fit the return value. */
	if (m->nr_free[dev] > INT_MAX && m->nr_logical > INT_MAX)
		return -ERANGE;
	pe = extmap_find_free(m, dev, (uint64_t)m->free_hint[dev] * EXTMAP_WORD_BITS);
	for (uint32_t le = 0; le < m->nr_logical && pe != UINT32_MAX;) {
		struct extmap_loc loc;
		uint32_t span = extmap_span(m, le, UINT32_MAX, &loc);

		if (loc.dev != EXTMAP_NO_DEV) {
			le += span;
			continue;
		}
		/* As far as the free pe run on: one step, and runs grow (le order). */
		while (span && pe != UINT32_MAX) {
			uint64_t end = (uint64_t)pe + span < m->nr_pe[dev] ? (uint64_t)pe + span :
										     m->nr_pe[dev];
			uint32_t free_run = bitset_next_set(&m->used[dev], pe, (uint32_t)end) - pe;
			int r;

			r = extmap_map_run(m, le, dev, pe, free_run);
			if (r < 0)
				return r;
			n += (int)free_run;
			le += free_run;
			span -= free_run;
			pe = extmap_find_free(m, dev, (uint64_t)pe + free_run);
		}
	}
	if (pe != UINT32_MAX)
		m->free_hint[dev] = pe / EXTMAP_WORD_BITS;
	return n;
}

struct extmap_loc extmap_get(const struct extmap *m, uint32_t le)
{
	const struct extmap_loc *pg;

	if (!m || le >= m->nr_logical)
		return extmap_unmapped;
	pg = extmap_pg(m, le / EXTMAP_PAGE);
	return pg ? pg[le % EXTMAP_PAGE] : extmap_base(m, le);
}

uint32_t extmap_span(const struct extmap *m, uint32_t le, uint32_t max, struct extmap_loc *loc)
{
	uint32_t end, r;
	bool in;

	*loc = extmap_get(m, le);
	if (!m || le >= m->nr_logical || !max)
		return 0;
	if (extmap_pg(m, le / EXTMAP_PAGE))
		return 1;
	r = extmap_run_find(m, le, &in);
	end = in ? m->runs[r].first + m->runs[r].count :
		   r < m->nr_runs ? m->runs[r].first : m->nr_logical;
	if (end - le > max)
		end = le + max;
	/* Up to the next page, passing a leaf of the directory without one at once. */
	if (end - 1 >= (le / EXTMAP_PAGE + 1) * EXTMAP_PAGE) {
		uint32_t g = pagedir_next(&m->pages, le / EXTMAP_PAGE + 1, (end - 1) / EXTMAP_PAGE + 1);

		if ((uint64_t)g * EXTMAP_PAGE < end)
			end = g * EXTMAP_PAGE;
	}
	return end - le;
}

bool extmap_loc_follows(struct extmap_loc a, struct extmap_loc b)
{
	if (a.dev == EXTMAP_NO_DEV || b.dev == EXTMAP_NO_DEV)
		return a.dev == b.dev;
	return a.dev == b.dev && b.pe == a.pe + 1;
}

uint32_t extmap_runs(const struct extmap *m)
{
	struct extmap_loc last = { .dev = EXTMAP_NO_DEV }, loc;
	uint32_t runs = 0, le = 0, n;

	if (!m)
		return 0;
	while (le < m->nr_logical) {
		n = extmap_span(m, le, m->nr_logical - le, &loc);
		if (!n)
			break;
		if (le == 0 || !extmap_loc_follows(last, loc))
			runs++;
		last = loc;
		if (loc.dev != EXTMAP_NO_DEV)
			last.pe += n - 1;
		le += n;
	}
	return runs;
}

int extmap_hold(struct extmap *m, uint32_t le)
{
	struct extmap_loc loc;

	if (!m || le >= m->nr_logical)
		return -EINVAL;
	loc = extmap_get(m, le);
	/* The remap frees le's pe: its bit must change without memory too. */
	if (loc.dev != EXTMAP_NO_DEV && extmap_hold_pe(m, loc.dev, loc.pe) < 0)
		return -ENOMEM;
	return extmap_page(m, le) ? 0 : -ENOMEM;
}

struct extmap_loc *extmap_raw(struct extmap *m, uint32_t le)
{
	struct extmap_loc *pg;

	if (!m || le >= m->nr_logical)
		return NULL;
	pg = extmap_page(m, le);
	return pg ? &pg[le % EXTMAP_PAGE] : NULL;
}

uint64_t extmap_bytes(const struct extmap *m)
{
	uint64_t bytes;

	if (!m)
		return 0;
	bytes = pagedir_bytes(&m->pages) +
		(uint64_t)m->nr_pages * EXTMAP_PAGE * sizeof(struct extmap_loc) +
		(uint64_t)m->runs_cap * sizeof(*m->runs) +
		extmap_dirty_words(m->nr_logical) * sizeof(uint64_t);
	for (unsigned dev = 0; dev < m->nr_devs; dev++)
		bytes += bitset_bytes(&m->used[dev]);
	return bytes;
}

uint32_t extmap_count_on_dev(const struct extmap *m, unsigned dev)
{
	return m && dev < m->nr_devs ? m->nr_mapped[dev] : 0;
}

int extmap_same_mapping(const struct extmap *a, const struct extmap *b)
{
	if (a->nr_logical != b->nr_logical || a->nr_devs != b->nr_devs)
		return 0;
	for (unsigned d = 0; d < a->nr_devs; d++)
		if (a->nr_pe[d] != b->nr_pe[d])
			return 0;
	for (uint32_t le = 0; le < a->nr_logical; le++) {
		struct extmap_loc x = extmap_get(a, le), y = extmap_get(b, le);

		if (x.dev != y.dev || x.pe != y.pe)
			return 0;
	}
	return 1;
}

/* Counter and hint of one device against its bitmap. */
static bool extmap_dev_consistent(const struct extmap *m, unsigned dev)
{
	const struct bitset *used = &m->used[dev];
	uint64_t below_hint = (uint64_t)m->free_hint[dev] * EXTMAP_WORD_BITS;

	if (!m->nr_pe[dev] || used->nr != m->nr_pe[dev] || below_hint >= m->nr_pe[dev] ||
	    !bitset_valid(used))
		return false;
	if (below_hint && !bitset_all(used, 0, (uint32_t)below_hint, true))
		return false;
	return m->nr_free[dev] == m->nr_pe[dev] - bitset_count(used);
}

int extmap_check(const struct extmap *m, uint32_t *bad_le)
{
	struct bitset seen[EXTMAP_MAX_DEVS] = { 0 };
	uint32_t bad = UINT32_MAX, mapped[EXTMAP_MAX_DEVS] = { 0 };
	int ret = -EUCLEAN;

	if (!m)
		return -EINVAL;
	if (m->nr_devs > EXTMAP_MAX_DEVS || m->pages.nr != extmap_nr_groups(m->nr_logical))
		goto out;
	/* Runs in order, apart, inside the volume, each on a device that has their pe. */
	for (uint32_t r = 0; r < m->nr_runs; r++) {
		const struct extmap_run *run = &m->runs[r];

		if (!run->count || (uint64_t)run->first + run->count > m->nr_logical ||
		    (r && run->first < m->runs[r - 1].first + m->runs[r - 1].count) ||
		    run->dev >= m->nr_devs ||
		    (uint64_t)run->pe + run->count > m->nr_pe[run->dev]) {
			bad = run->first;
			goto out;
		}
	}
	for (unsigned dev = 0; dev < m->nr_devs; dev++) {
		if (!extmap_dev_consistent(m, dev))
			goto out;
		if (bitset_init(&seen[dev], m->nr_pe[dev]) < 0) {
			ret = -ENOMEM;
			goto out;
		}
	}
	for (uint32_t le = 0, span; le < m->nr_logical; le += span) {
		struct extmap_loc loc;

		span = extmap_span(m, le, UINT32_MAX, &loc);
		if (loc.dev == EXTMAP_NO_DEV)
			continue;
		/* A run at once when all is well; entry by entry to name the first bad le. */
		if (loc.dev < m->nr_devs && (uint64_t)loc.pe + span <= m->nr_pe[loc.dev] &&
		    bitset_all(&m->used[loc.dev], loc.pe, span, true) &&
		    bitset_all(&seen[loc.dev], loc.pe, span, false)) {
			if (bitset_set_range(&seen[loc.dev], loc.pe, span) < 0) {
				ret = -ENOMEM;
				goto out;
			}
			mapped[loc.dev] += span;
			continue;
		}
		for (uint32_t i = 0; i < span; i++) {
			uint32_t pe = loc.pe + i;

			if (!extmap_pe_valid(m, loc.dev, pe) || !bitset_test(&m->used[loc.dev], pe) ||
			    bitset_test(&seen[loc.dev], pe)) {
				bad = le + i;
				goto out;
			}
			if (bitset_set(&seen[loc.dev], pe) < 0) {
				ret = -ENOMEM;
				goto out;
			}
			mapped[loc.dev]++;
		}
	}
	for (unsigned dev = 0; dev < m->nr_devs; dev++)
		if (mapped[dev] != m->nr_mapped[dev])
			goto out;
	ret = 0;
out:
	for (unsigned dev = 0; dev < EXTMAP_MAX_DEVS; dev++)
		bitset_destroy(&seen[dev]);
	if (ret == -EUCLEAN && bad_le)
		*bad_le = bad;
	return ret;
}

int extmap_plan_evacuate(struct extmap *m, unsigned gone, const uint32_t *reserve,
			 struct extmap_dest **out, uint32_t *needed, uint32_t *room)
{
	struct extmap_dest *v;
	uint32_t n = 0, left[EXTMAP_MAX_DEVS] = { 0 };
	uint64_t free_total = 0;
	unsigned dev = 0;

	if (!m || !out || !needed || !room || gone >= m->nr_devs)
		return -EINVAL;
	*out = NULL;
	*needed = extmap_count_on_dev(m, gone);
	for (unsigned i = 0; i < m->nr_devs; i++) {
		uint32_t keep = reserve ? reserve[i] : 0;

		if (i == gone)
			continue;
		left[i] = m->nr_free[i] > keep ? m->nr_free[i] - keep : 0;
		free_total += left[i];
	}
	*room = free_total > UINT32_MAX ? UINT32_MAX : (uint32_t)free_total;
	if (free_total < *needed)
		return -ENOSPC;
	v = malloc(((size_t)*needed + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t le = 0; le < m->nr_logical && n < *needed; le++) {
		uint32_t pe;

		if (extmap_get(m, le).dev != gone)
			continue;
		while (dev == gone || !left[dev])
			dev++;
		/*
		 * The remap of each destination must not fail: le's page and the
		 * leaves of both pe come now. left[dev] counts free pe of dev, so
		 * only memory can be wanting.
		 */
		if (extmap_hold(m, le) < 0 || extmap_alloc(m, dev, &pe) < 0) {
			for (uint32_t i = 0; i < n; i++)
				extmap_release(m, v[i].dev, v[i].pe);
			free(v);
			return -ENOMEM;
		}
		left[dev]--;
		v[n++] = (struct extmap_dest){ .le = le, .dev = (uint16_t)dev, .pe = pe };
	}
	*out = v;
	return 0;
}
