/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "piecemap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static uint32_t piecemap_words(const struct piecemap *pm)
{
	return (pm->pieces_per_extent + 63) / 64;
}

static bool slot_used(const struct piecemap_container *c, uint32_t slot)
{
	return c->used[slot / 64] >> (slot % 64) & 1;
}

static void slot_set(struct piecemap_container *c, uint32_t slot, bool used)
{
	uint64_t bit = UINT64_C(1) << (slot % 64);

	if (used) {
		c->used[slot / 64] |= bit;
		c->nr_used++;
	} else {
		c->used[slot / 64] &= ~bit;
		c->nr_used--;
	}
}

int piecemap_init(struct piecemap *pm, uint32_t pieces_per_extent)
{
	if (!pm)
		return -EINVAL;
	memset(pm, 0, sizeof(*pm));
	if (pieces_per_extent < 2 || pieces_per_extent > PIECEMAP_MAX_PIECES_PER_EXTENT ||
	    (pieces_per_extent & (pieces_per_extent - 1)))
		return -EINVAL;
	pm->pieces_per_extent = pieces_per_extent;
	return 0;
}

void piecemap_destroy(struct piecemap *pm)
{
	if (!pm)
		return;
	for (uint32_t i = 0; i < pm->nr_containers; i++)
		free(pm->containers[i].used);
	free(pm->containers);
	free(pm->pieces);
	memset(pm, 0, sizeof(*pm));
}

uint32_t piecemap_container_at(const struct piecemap *pm, uint16_t dev, uint32_t pe)
{
	for (uint32_t i = 0; pm && i < pm->nr_containers; i++)
		if (pm->containers[i].dev == dev && pm->containers[i].pe == pe)
			return i;
	return PIECEMAP_NO_CONTAINER;
}

int piecemap_add_container(struct piecemap *pm, uint16_t dev, uint32_t pe, uint32_t *index)
{
	if (pm && piecemap_container_at(pm, dev, pe) != PIECEMAP_NO_CONTAINER)
		return -EEXIST;
	return piecemap_append_container(pm, dev, pe, index);
}

int piecemap_append_container(struct piecemap *pm, uint16_t dev, uint32_t pe, uint32_t *index)
{
	struct piecemap_container c = { .dev = dev, .pe = pe };

	if (!pm || !pm->pieces_per_extent)
		return -EINVAL;
	if (pm->nr_containers == PIECEMAP_NO_CONTAINER - 1)
		return -ENOSPC;
	if (pm->nr_containers == pm->containers_cap) {
		uint32_t cap = pm->containers_cap ? pm->containers_cap * 2 : 8;
		struct piecemap_container *grown = reallocarray(pm->containers, cap, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		pm->containers = grown;
		pm->containers_cap = cap;
	}
	c.used = calloc(piecemap_words(pm), sizeof(*c.used));
	if (!c.used)
		return -ENOMEM;
	if (index)
		*index = pm->nr_containers;
	pm->containers[pm->nr_containers++] = c;
	pm->changes++;
	return 0;
}

int piecemap_remove_container(struct piecemap *pm, uint32_t index)
{
	if (!pm || index >= pm->nr_containers)
		return -EINVAL;
	if (pm->containers[index].nr_used)
		return -EBUSY;
	free(pm->containers[index].used);
	memmove(&pm->containers[index], &pm->containers[index + 1],
		(size_t)(pm->nr_containers - index - 1) * sizeof(*pm->containers));
	pm->nr_containers--;
	/* An empty container has no pieces; those of the later ones follow them down. */
	for (uint32_t i = 0; i < pm->nr_pieces; i++)
		if (pm->pieces[i].container > index)
			pm->pieces[i].container--;
	pm->changes++;
	return 0;
}

int piecemap_drop_dev(struct piecemap *pm, uint16_t dev, uint32_t *scratch)
{
	uint32_t kept = 0, n = 0, nr_before;
	bool renumbered = false;

	if (!pm || (!scratch && pm->nr_containers))
		return -EINVAL;
	nr_before = pm->nr_containers;
	/* scratch[c]: container c's new index, or PIECEMAP_NO_CONTAINER when it goes. */
	for (uint32_t c = 0; c < pm->nr_containers; c++) {
		struct piecemap_container *ct = &pm->containers[c];

		if (ct->dev == dev) {
			scratch[c] = PIECEMAP_NO_CONTAINER;
			free(ct->used);
			continue;
		}
		scratch[c] = kept;
		if (ct->dev > dev) {
			ct->dev--;
			renumbered = true;
		}
		pm->containers[kept++] = *ct;
	}
	pm->nr_containers = kept;
	for (uint32_t i = 0; i < pm->nr_pieces; i++) {
		uint32_t c = scratch[pm->pieces[i].container];

		if (c == PIECEMAP_NO_CONTAINER)
			continue;
		pm->pieces[n] = pm->pieces[i];
		pm->pieces[n++].container = c;
	}
	/* A device before every container's, with none on it, leaves the record as it was. */
	if (n != pm->nr_pieces || kept != nr_before || renumbered)
		pm->changes++;
	pm->nr_pieces = n;
	return 0;
}

int piecemap_alloc_slot(struct piecemap *pm, uint16_t dev, uint32_t *container, uint16_t *slot)
{
	if (!pm || !container || !slot)
		return -EINVAL;
	for (uint32_t i = 0; i < pm->nr_containers; i++) {
		struct piecemap_container *c = &pm->containers[i];

		if (c->dev != dev || c->nr_used == pm->pieces_per_extent)
			continue;
		for (uint32_t w = 0; w < piecemap_words(pm); w++) {
			uint32_t s;

			if (c->used[w] == UINT64_MAX)
				continue;
			s = w * 64 + (uint32_t)__builtin_ctzll(~c->used[w]);
			if (s >= pm->pieces_per_extent)
				break;
			slot_set(c, s, true);
			*container = i;
			*slot = (uint16_t)s;
			return 0;
		}
	}
	return -ENOSPC;
}

/* 0 for a slot that is used (reserved, for the callers), -EINVAL out of range, -ENOENT free. */
static int piecemap_slot_reserved(const struct piecemap *pm, uint32_t container, uint32_t slot)
{
	if (!pm || container >= pm->nr_containers || slot >= pm->pieces_per_extent)
		return -EINVAL;
	return slot_used(&pm->containers[container], slot) ? 0 : -ENOENT;
}

int piecemap_claim_slot(struct piecemap *pm, uint32_t container, uint16_t slot)
{
	int ret = piecemap_slot_reserved(pm, container, slot);

	if (ret != -ENOENT)
		return ret ? ret : -EBUSY;
	slot_set(&pm->containers[container], slot, true);
	return 0;
}

int piecemap_release_slot(struct piecemap *pm, uint32_t container, uint16_t slot)
{
	int ret = piecemap_slot_reserved(pm, container, slot);

	if (ret)
		return ret;
	slot_set(&pm->containers[container], slot, false);
	return 0;
}

/* Where (le, idx) is in pieces[], or where it would go. */
static uint32_t piecemap_search(const struct piecemap *pm, uint32_t le, uint32_t idx)
{
	uint32_t lo = 0, hi = pm->nr_pieces;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct piecemap_piece *p = &pm->pieces[mid];

		if (p->le < le || (p->le == le && p->idx < idx))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool piecemap_is_at(const struct piecemap *pm, uint32_t at, uint32_t le, uint32_t idx)
{
	return at < pm->nr_pieces && pm->pieces[at].le == le && pm->pieces[at].idx == idx;
}

int piecemap_reserve(struct piecemap *pm, uint32_t extra)
{
	struct piecemap_piece *grown;
	uint32_t cap;

	if (!pm)
		return -EINVAL;
	if (extra > UINT32_MAX - pm->nr_pieces)
		return -ENOSPC;
	if (pm->nr_pieces + extra <= pm->pieces_cap)
		return 0;
	cap = pm->pieces_cap ? pm->pieces_cap : 64;
	while (cap < pm->nr_pieces + extra)
		cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
	grown = reallocarray(pm->pieces, cap, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	pm->pieces = grown;
	pm->pieces_cap = cap;
	return 0;
}

int piecemap_place(struct piecemap *pm, uint32_t le, uint32_t idx, uint32_t container,
		   uint16_t slot)
{
	struct piecemap_piece *p;
	uint32_t at;
	int ret;

	if (!pm || idx >= pm->pieces_per_extent)
		return -EINVAL;
	ret = piecemap_slot_reserved(pm, container, slot);
	if (ret)
		return ret;
	at = piecemap_search(pm, le, idx);
	if (piecemap_is_at(pm, at, le, idx)) {
		p = &pm->pieces[at];
		if (p->container == container && p->slot == slot)
			return -EINVAL;
		slot_set(&pm->containers[p->container], p->slot, false);
		p->container = container;
		p->slot = slot;
		pm->changes++;
		return 0;
	}
	ret = piecemap_reserve(pm, 1);
	if (ret)
		return ret;
	memmove(&pm->pieces[at + 1], &pm->pieces[at],
		(size_t)(pm->nr_pieces - at) * sizeof(*pm->pieces));
	pm->pieces[at] = (struct piecemap_piece){
		.le = le, .idx = (uint16_t)idx, .slot = slot, .container = container
	};
	pm->nr_pieces++;
	pm->changes++;
	return 0;
}

/* Where piece idx of le is in pieces[]: 0, -ENOENT when it is home, -EINVAL for NULL. */
static int piecemap_lookup(const struct piecemap *pm, uint32_t le, uint32_t idx, uint32_t *at)
{
	if (!pm)
		return -EINVAL;
	*at = piecemap_search(pm, le, idx);
	return piecemap_is_at(pm, *at, le, idx) ? 0 : -ENOENT;
}

int piecemap_return(struct piecemap *pm, uint32_t le, uint32_t idx)
{
	uint32_t at;
	int ret = piecemap_lookup(pm, le, idx, &at);

	if (ret)
		return ret;
	slot_set(&pm->containers[pm->pieces[at].container], pm->pieces[at].slot, false);
	memmove(&pm->pieces[at], &pm->pieces[at + 1],
		(size_t)(pm->nr_pieces - at - 1) * sizeof(*pm->pieces));
	pm->nr_pieces--;
	pm->changes++;
	return 0;
}

uint32_t piecemap_extent(const struct piecemap *pm, uint32_t le, uint32_t *first)
{
	uint32_t at, end;

	if (!pm) {
		if (first)
			*first = 0;
		return 0;
	}
	at = piecemap_search(pm, le, 0);
	end = at;

	while (end < pm->nr_pieces && pm->pieces[end].le == le)
		end++;
	if (first)
		*first = at;
	return end - at;
}

uint32_t piecemap_next_split(const struct piecemap *pm, uint32_t le)
{
	uint32_t at;

	if (!pm)
		return UINT32_MAX;
	at = piecemap_search(pm, le, 0);

	return at < pm->nr_pieces ? pm->pieces[at].le : UINT32_MAX;
}

int piecemap_find(const struct piecemap *pm, uint32_t le, uint32_t idx, uint32_t *container,
		  uint16_t *slot)
{
	uint32_t at;
	int ret = piecemap_lookup(pm, le, idx, &at);

	if (ret)
		return ret;
	if (container)
		*container = pm->pieces[at].container;
	if (slot)
		*slot = pm->pieces[at].slot;
	return 0;
}

int piecemap_same_placement(const struct piecemap *a, const struct piecemap *b)
{
	uint32_t nr_c = a ? a->nr_containers : 0, nr_p = a ? a->nr_pieces : 0;

	if (nr_c != (b ? b->nr_containers : 0) || nr_p != (b ? b->nr_pieces : 0))
		return 0;
	if (!nr_c)
		return 1;
	if (a->pieces_per_extent != b->pieces_per_extent)
		return 0;
	for (uint32_t i = 0; i < nr_c; i++)
		if (a->containers[i].dev != b->containers[i].dev ||
		    a->containers[i].pe != b->containers[i].pe)
			return 0;
	for (uint32_t i = 0; i < nr_p; i++) {
		const struct piecemap_piece *x = &a->pieces[i], *y = &b->pieces[i];

		if (x->le != y->le || x->idx != y->idx || x->container != y->container ||
		    x->slot != y->slot)
			return 0;
	}
	return 1;
}

uint64_t piecemap_bytes(const struct piecemap *pm)
{
	if (!pm)
		return 0;
	return (uint64_t)pm->pieces_cap * sizeof(*pm->pieces) +
	       (uint64_t)pm->containers_cap * sizeof(*pm->containers) +
	       (uint64_t)pm->nr_containers * piecemap_words(pm) * sizeof(uint64_t);
}

static int piecemap_fail(uint32_t *bad, uint32_t at)
{
	if (bad)
		*bad = at;
	return -EUCLEAN;
}

static int container_cmp(const void *a, const void *b)
{
	const struct piecemap_container *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->pe < y->pe ? -1 : x->pe > y->pe;
}

/* Whether a container appears twice: a sorted copy, so a decoder's thousands cost n log n. */
static int piecemap_containers_unique(const struct piecemap *pm)
{
	struct piecemap_container *sorted;
	int ret = 1;

	if (pm->nr_containers < 2)
		return 1;
	sorted = malloc((size_t)pm->nr_containers * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, pm->containers, (size_t)pm->nr_containers * sizeof(*sorted));
	qsort(sorted, pm->nr_containers, sizeof(*sorted), container_cmp);
	for (uint32_t i = 1; i < pm->nr_containers && ret; i++)
		ret = container_cmp(&sorted[i - 1], &sorted[i]) != 0;
	free(sorted);
	return ret;
}

int piecemap_check(const struct piecemap *pm, uint32_t *bad)
{
	uint64_t *seen;
	uint32_t words;
	int ret = 0;

	if (!pm)
		return -EINVAL;
	if (!pm->pieces_per_extent)
		return pm->nr_pieces || pm->nr_containers ? piecemap_fail(bad, UINT32_MAX) : 0;
	words = piecemap_words(pm);
	for (uint32_t i = 0; i < pm->nr_containers; i++) {
		const struct piecemap_container *c = &pm->containers[i];
		uint32_t n = 0;

		for (uint32_t w = 0; w < words; w++)
			n += (uint32_t)__builtin_popcountll(c->used[w]);
		/* Bits past the last slot are never set, so the allocator cannot hand them out. */
		if (pm->pieces_per_extent % 64 &&
		    c->used[words - 1] >> (pm->pieces_per_extent % 64))
			return piecemap_fail(bad, UINT32_MAX);
		if (n != c->nr_used)
			return piecemap_fail(bad, UINT32_MAX);
	}
	ret = piecemap_containers_unique(pm);
	if (ret <= 0)
		return ret < 0 ? ret : piecemap_fail(bad, UINT32_MAX);
	ret = 0;
	seen = calloc((size_t)pm->nr_containers * words + 1, sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	for (uint32_t i = 0; i < pm->nr_pieces && !ret; i++) {
		const struct piecemap_piece *p = &pm->pieces[i];
		const struct piecemap_piece *prev = i ? &pm->pieces[i - 1] : NULL;
		uint64_t *word, bit;

		if ((prev && (prev->le > p->le || (prev->le == p->le && prev->idx >= p->idx))) ||
		    p->idx >= pm->pieces_per_extent || p->container >= pm->nr_containers ||
		    p->slot >= pm->pieces_per_extent ||
		    !slot_used(&pm->containers[p->container], p->slot)) {
			ret = piecemap_fail(bad, i);
			break;
		}
		word = &seen[(size_t)p->container * words + p->slot / 64];
		bit = UINT64_C(1) << (p->slot % 64);
		if (*word & bit)
			ret = piecemap_fail(bad, i);
		*word |= bit;
	}
	free(seen);
	return ret;
}
