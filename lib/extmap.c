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

static bool extmap_bit(const uint64_t *bits, uint32_t i)
{
	return bits[i / EXTMAP_WORD_BITS] >> (i % EXTMAP_WORD_BITS) & 1;
}

static uint64_t extmap_mask(uint32_t i)
{
	return UINT64_C(1) << (i % EXTMAP_WORD_BITS);
}

static bool extmap_pe_valid(const struct extmap *m, unsigned dev, uint32_t pe)
{
	return dev < m->nr_devs && pe < m->nr_pe[dev];
}

static void extmap_set_used(struct extmap *m, unsigned dev, uint32_t pe)
{
	m->used[dev][pe / EXTMAP_WORD_BITS] |= extmap_mask(pe);
	m->nr_free[dev]--;
}

static void extmap_clear_used(struct extmap *m, unsigned dev, uint32_t pe)
{
	m->used[dev][pe / EXTMAP_WORD_BITS] &= ~extmap_mask(pe);
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

static void extmap_set_loc(struct extmap *m, uint32_t le, unsigned dev, uint32_t pe)
{
	m->map[le] = (struct extmap_loc){ .dev = (uint16_t)dev, .pe = pe };
	m->nr_mapped[dev]++;
	extmap_mark_dirty(m, le);
	extmap_set_used(m, dev, pe);
}

/* Lowest free pe >= from on dev, or UINT32_MAX; skips whole words so it is O(words). */
static uint32_t extmap_find_free(const struct extmap *m, unsigned dev, uint64_t from)
{
	const uint64_t *used = m->used[dev];
	size_t nr_words = extmap_words(m->nr_pe[dev]);
	size_t w = from / EXTMAP_WORD_BITS;
	uint64_t free_bits;
	uint64_t pe;

	if (from >= m->nr_pe[dev])
		return UINT32_MAX;
	free_bits = ~used[w] & (~UINT64_C(0) << (from % EXTMAP_WORD_BITS));
	while (!free_bits) {
		if (++w == nr_words)
			return UINT32_MAX;
		free_bits = ~used[w];
	}
	/* Padding bits past nr_pe read as free; anything found there means none. */
	pe = (uint64_t)w * EXTMAP_WORD_BITS + (unsigned)__builtin_ctzll(free_bits);
	return pe < m->nr_pe[dev] ? (uint32_t)pe : UINT32_MAX;
}

int extmap_init(struct extmap *m, uint32_t nr_logical)
{
	if (!m)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	return extmap_resize_logical(m, nr_logical);
}

void extmap_destroy(struct extmap *m)
{
	if (!m)
		return;
	free(m->map);
	free(m->dirty);
	for (unsigned dev = 0; dev < EXTMAP_MAX_DEVS; dev++)
		free(m->used[dev]);
	memset(m, 0, sizeof(*m));
}

int extmap_add_dev(struct extmap *m, uint32_t nr_pe, unsigned *dev_out)
{
	uint64_t *used;
	unsigned dev;

	if (!m || !nr_pe)
		return -EINVAL;
	if (m->nr_devs >= EXTMAP_MAX_DEVS)
		return -ENOSPC;
	used = calloc(extmap_words(nr_pe), sizeof(*used));
	if (!used)
		return -ENOMEM;
	dev = m->nr_devs++;
	m->used[dev] = used;
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
	free(m->used[dev]);
	m->used[dev] = NULL;
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
	free(m->used[dev]);
	for (unsigned i = dev; i + 1 < m->nr_devs; i++) {
		m->used[i] = m->used[i + 1];
		m->nr_pe[i] = m->nr_pe[i + 1];
		m->nr_free[i] = m->nr_free[i + 1];
		m->nr_mapped[i] = m->nr_mapped[i + 1];
		m->free_hint[i] = m->free_hint[i + 1];
	}
	m->nr_devs--;
	m->used[m->nr_devs] = NULL;
	m->nr_pe[m->nr_devs] = 0;
	m->nr_free[m->nr_devs] = 0;
	m->nr_mapped[m->nr_devs] = 0;
	m->free_hint[m->nr_devs] = 0;
	/* No le is on dev (its pe are all free): only later devices renumber. */
	for (uint32_t le = 0; le < m->nr_logical; le++)
		if (m->map[le].dev != EXTMAP_NO_DEV && m->map[le].dev > dev) {
			m->map[le].dev--;
			extmap_mark_dirty(m, le);
		}
	return 0;
}

int extmap_resize_logical(struct extmap *m, uint32_t nr_logical)
{
	size_t old_words, new_words;
	struct extmap_loc *map;
	uint64_t *dirty;

	if (!m)
		return -EINVAL;
	for (uint32_t le = nr_logical; le < m->nr_logical; le++)
		if (m->map[le].dev != EXTMAP_NO_DEV)
			return -EBUSY;
	if (!nr_logical) {
		free(m->map);
		free(m->dirty);
		m->map = NULL;
		m->dirty = NULL;
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
	map = reallocarray(m->map, nr_logical, sizeof(*map));
	if (!map) {
		/* A failed shrink leaves the larger block, which still serves. */
		if (nr_logical < m->nr_logical) {
			m->nr_logical = nr_logical;
			return 0;
		}
		return -ENOMEM;
	}
	for (uint32_t le = m->nr_logical; le < nr_logical; le++)
		map[le] = extmap_unmapped;
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
	m->map = map;
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
	if (m->map[le].dev != EXTMAP_NO_DEV)
		return -EEXIST;
	if (extmap_bit(m->used[dev], pe))
		return -EBUSY;
	extmap_set_loc(m, le, dev, pe);
	return 0;
}

int extmap_unmap(struct extmap *m, uint32_t le)
{
	struct extmap_loc old;

	if (!m || le >= m->nr_logical)
		return -EINVAL;
	old = m->map[le];
	if (old.dev == EXTMAP_NO_DEV)
		return -ENOENT;
	m->map[le] = extmap_unmapped;
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
	old = m->map[le];
	if (old.dev == EXTMAP_NO_DEV)
		return -ENOENT;
	if (extmap_bit(m->used[dev], pe))
		return -EBUSY;
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
	m->free_hint[dev] = found / EXTMAP_WORD_BITS;
	extmap_set_used(m, dev, found);
	*pe = found;
	return 0;
}

int extmap_release(struct extmap *m, unsigned dev, uint32_t pe)
{
	if (!m || !extmap_pe_valid(m, dev, pe))
		return -EINVAL;
	if (!extmap_bit(m->used[dev], pe))
		return -ENOENT;
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
	for (uint32_t le = 0; le < m->nr_logical && pe != UINT32_MAX; le++) {
		if (m->map[le].dev != EXTMAP_NO_DEV)
			continue;
		extmap_set_loc(m, le, dev, pe);
		n++;
		pe = extmap_find_free(m, dev, (uint64_t)pe + 1);
	}
	if (pe != UINT32_MAX)
		m->free_hint[dev] = pe / EXTMAP_WORD_BITS;
	return n;
}

struct extmap_loc extmap_get(const struct extmap *m, uint32_t le)
{
	if (!m || le >= m->nr_logical)
		return extmap_unmapped;
	return m->map[le];
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
	for (uint32_t le = 0; le < a->nr_logical; le++)
		if (a->map[le].dev != b->map[le].dev || a->map[le].pe != b->map[le].pe)
			return 0;
	return 1;
}

/* Counter, hint and padding of one device against its bitmap. */
static bool extmap_dev_consistent(const struct extmap *m, unsigned dev)
{
	const uint64_t *used = m->used[dev];
	size_t nr_words = extmap_words(m->nr_pe[dev]);
	uint32_t tail = m->nr_pe[dev] % EXTMAP_WORD_BITS;
	uint64_t nr_used = 0;

	if (!used || !m->nr_pe[dev] || m->free_hint[dev] >= nr_words)
		return false;
	if (tail && used[nr_words - 1] >> tail)
		return false;
	for (size_t w = 0; w < nr_words; w++) {
		if (w < m->free_hint[dev] && used[w] != ~UINT64_C(0))
			return false;
		nr_used += (unsigned)__builtin_popcountll(used[w]);
	}
	return m->nr_free[dev] == m->nr_pe[dev] - nr_used;
}

int extmap_check(const struct extmap *m, uint32_t *bad_le)
{
	uint64_t *seen[EXTMAP_MAX_DEVS] = { NULL };
	uint32_t bad = UINT32_MAX, mapped[EXTMAP_MAX_DEVS] = { 0 };
	int ret = -EUCLEAN;

	if (!m)
		return -EINVAL;
	if (m->nr_devs > EXTMAP_MAX_DEVS || (m->nr_logical && !m->map))
		goto out;
	for (unsigned dev = 0; dev < m->nr_devs; dev++) {
		if (!extmap_dev_consistent(m, dev))
			goto out;
		seen[dev] = calloc(extmap_words(m->nr_pe[dev]), sizeof(*seen[dev]));
		if (!seen[dev]) {
			ret = -ENOMEM;
			goto out;
		}
	}
	for (uint32_t le = 0; le < m->nr_logical; le++) {
		struct extmap_loc loc = m->map[le];

		if (loc.dev == EXTMAP_NO_DEV)
			continue;
		if (!extmap_pe_valid(m, loc.dev, loc.pe) || !extmap_bit(m->used[loc.dev], loc.pe) ||
		    extmap_bit(seen[loc.dev], loc.pe)) {
			bad = le;
			goto out;
		}
		seen[loc.dev][loc.pe / EXTMAP_WORD_BITS] |= extmap_mask(loc.pe);
		mapped[loc.dev]++;
	}
	for (unsigned dev = 0; dev < m->nr_devs; dev++)
		if (mapped[dev] != m->nr_mapped[dev])
			goto out;
	ret = 0;
out:
	for (unsigned dev = 0; dev < EXTMAP_MAX_DEVS; dev++)
		free(seen[dev]);
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

		if (m->map[le].dev != gone)
			continue;
		while (dev == gone || !left[dev])
			dev++;
		/* Cannot fail: left[dev] counts free pe of dev. */
		extmap_alloc(m, dev, &pe);
		left[dev]--;
		v[n++] = (struct extmap_dest){ .le = le, .dev = (uint16_t)dev, .pe = pe };
	}
	*out = v;
	return 0;
}
