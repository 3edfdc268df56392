/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "slotsum.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "metadata.h"

int slotsum_init(struct slotsum *s, size_t len)
{
	uint32_t block_op;
	size_t tail;

	if (!s || !len)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->nr_blocks = (len + METADATA_BLOCK - 1) / METADATA_BLOCK;
	s->crc = calloc(s->nr_blocks, sizeof(*s->crc));
	if (!s->crc) {
		s->nr_blocks = 0;
		return -ENOMEM;
	}
	s->len = len;
	tail = len - (s->nr_blocks - 1) * METADATA_BLOCK;
	s->tail_op = crc32c_zeros(tail);
	block_op = crc32c_zeros(METADATA_BLOCK);
	for (unsigned k = 0; k < 4; k++)
		for (uint32_t v = 0; v < 256; v++)
			s->block_tab[k][v] = crc32c_append(v << (8 * k), 0, block_op);
	return 0;
}

void slotsum_destroy(struct slotsum *s)
{
	if (!s)
		return;
	free(s->crc);
	memset(s, 0, sizeof(*s));
}

size_t slotsum_block_len(const struct slotsum *s, size_t blk)
{
	if (blk + 1 < s->nr_blocks)
		return METADATA_BLOCK;
	return blk + 1 == s->nr_blocks ? s->len - blk * METADATA_BLOCK : 0;
}

uint32_t slotsum_of(const struct slotsum *s, size_t blk, const void *block)
{
	return crc32c(0, block, slotsum_block_len(s, blk));
}

uint32_t slotsum_total(const struct slotsum *s)
{
	return slotsum_total_with(s, NULL, NULL);
}

uint32_t slotsum_total_with(const struct slotsum *s, const struct slotsum_set *set,
			    const uint32_t *crc)
{
	uint32_t total = 0;
	size_t next = 0;

	for (size_t blk = 0; blk < s->nr_blocks; blk++) {
		uint32_t sum = s->crc[blk];

		if (set && next < set->nr && set->blk[next] == blk)
			sum = crc[next++];

		if (blk == 0)
			total = sum;
		else if (blk + 1 == s->nr_blocks)
			total = crc32c_append(total, sum, s->tail_op);
		else
			total = s->block_tab[0][total & 0xff] ^ s->block_tab[1][(total >> 8) & 0xff] ^
				s->block_tab[2][(total >> 16) & 0xff] ^ s->block_tab[3][total >> 24] ^
				sum;
	}
	return total;
}

static int slotsum_set_reserve(struct slotsum_set *set, size_t nr)
{
	uint32_t *v;
	size_t cap;

	if (nr <= set->cap)
		return 0;
	cap = set->cap ? set->cap : 16;
	while (cap < nr)
		cap *= 2;
	v = reallocarray(set->blk, cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	set->blk = v;
	set->cap = cap;
	return 0;
}

int slotsum_set_add(struct slotsum_set *set, uint32_t blk)
{
	int r;

	if (set->nr && set->blk[set->nr - 1] >= blk)
		return set->blk[set->nr - 1] == blk ? 0 : -EINVAL;
	r = slotsum_set_reserve(set, set->nr + 1);
	if (r < 0)
		return r;
	set->blk[set->nr++] = blk;
	return 0;
}

int slotsum_set_add_entries(struct slotsum_set *set, unsigned nr_devs, uint32_t first,
			    uint32_t count)
{
	size_t from = metadata_pool_entry_offset(nr_devs, first) / METADATA_BLOCK;
	size_t to = (metadata_pool_entry_offset(nr_devs, first + (count - 1)) +
		     METADATA_ENTRY_SIZE - 1) / METADATA_BLOCK;
	int r = 0;

	for (size_t blk = from; r == 0 && blk <= to; blk++)
		r = slotsum_set_add(set, (uint32_t)blk);
	return r;
}

int slotsum_set_union(struct slotsum_set *dst, const struct slotsum_set *src)
{
	size_t i = 0, j = 0, n = 0, cap = dst->nr + src->nr;
	uint32_t *v;

	if (!src->nr)
		return 0;
	v = reallocarray(NULL, cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	while (i < dst->nr || j < src->nr) {
		uint32_t a = i < dst->nr ? dst->blk[i] : UINT32_MAX;
		uint32_t b = j < src->nr ? src->blk[j] : UINT32_MAX;
		uint32_t least = a < b ? a : b;

		v[n++] = least;
		i += a == least;
		j += b == least;
	}
	free(dst->blk);
	dst->blk = v;
	dst->nr = n;
	dst->cap = cap;
	return 0;
}

int slotsum_set_has(const struct slotsum_set *set, uint32_t blk)
{
	size_t lo = 0, hi = set->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (set->blk[mid] < blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < set->nr && set->blk[lo] == blk;
}

void slotsum_set_clear(struct slotsum_set *set)
{
	set->nr = 0;
}

void slotsum_set_free(struct slotsum_set *set)
{
	if (!set)
		return;
	free(set->blk);
	memset(set, 0, sizeof(*set));
}
