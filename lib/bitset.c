/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bitset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define WORD_BITS 64u
#define LEAF_WORDS (BITSET_LEAF_BITS / WORD_BITS)

/* Only its address is used: the mark of a leaf whose bits are all set. */
static uint64_t bitset_full_mark;
#define FULL (&bitset_full_mark)

static uint32_t leaf_of(uint32_t i)
{
	return i / BITSET_LEAF_BITS;
}

/* Bits of leaf l that lie below nr. */
static uint32_t leaf_len(const struct bitset *b, uint32_t l)
{
	uint64_t first = (uint64_t)l * BITSET_LEAF_BITS;

	return b->nr - first < BITSET_LEAF_BITS ? (uint32_t)(b->nr - first) : BITSET_LEAF_BITS;
}

int bitset_init(struct bitset *b, uint32_t nr)
{
	if (!b)
		return -EINVAL;
	memset(b, 0, sizeof(*b));
	b->nr_leaves = (uint32_t)(((uint64_t)nr + BITSET_LEAF_BITS - 1) / BITSET_LEAF_BITS);
	if (b->nr_leaves) {
		b->leaf = calloc(b->nr_leaves, sizeof(*b->leaf));
		if (!b->leaf) {
			b->nr_leaves = 0;
			return -ENOMEM;
		}
	}
	b->nr = nr;
	return 0;
}

void bitset_destroy(struct bitset *b)
{
	if (!b)
		return;
	for (uint32_t l = 0; l < b->nr_leaves; l++)
		if (b->leaf[l] != FULL)
			free(b->leaf[l]);
	free(b->leaf);
	memset(b, 0, sizeof(*b));
}

/* Leaf l as bits, made from its mark if it was none; NULL without memory. */
static uint64_t *leaf_make(struct bitset *b, uint32_t l)
{
	uint64_t *bits = b->leaf[l];
	uint32_t len;

	if (bits && bits != FULL)
		return bits;
	bits = calloc(LEAF_WORDS, sizeof(*bits));
	if (!bits)
		return NULL;
	if (b->leaf[l] == FULL) {
		/* Bits past nr stay clear in a made leaf. */
		len = leaf_len(b, l);
		memset(bits, 0xff, len / WORD_BITS * sizeof(*bits));
		if (len % WORD_BITS)
			bits[len / WORD_BITS] = (UINT64_C(1) << (len % WORD_BITS)) - 1;
	}
	b->leaf[l] = bits;
	b->nr_allocated++;
	return bits;
}

bool bitset_test(const struct bitset *b, uint32_t i)
{
	const uint64_t *bits;

	if (!b || i >= b->nr)
		return false;
	bits = b->leaf[leaf_of(i)];
	if (!bits || bits == FULL)
		return bits == FULL;
	i %= BITSET_LEAF_BITS;
	return bits[i / WORD_BITS] >> (i % WORD_BITS) & 1;
}

int bitset_hold(struct bitset *b, uint32_t i)
{
	if (!b || i >= b->nr)
		return -EINVAL;
	return leaf_make(b, leaf_of(i)) ? 0 : -ENOMEM;
}

static int bitset_put(struct bitset *b, uint32_t i, bool set)
{
	uint64_t *bits, mask;

	if (!b || i >= b->nr)
		return -EINVAL;
	bits = b->leaf[leaf_of(i)];
	/* Already so: no leaf needed. */
	if ((!bits && !set) || (bits == FULL && set))
		return 0;
	bits = leaf_make(b, leaf_of(i));
	if (!bits)
		return -ENOMEM;
	i %= BITSET_LEAF_BITS;
	mask = UINT64_C(1) << (i % WORD_BITS);
	if (set)
		bits[i / WORD_BITS] |= mask;
	else
		bits[i / WORD_BITS] &= ~mask;
	return 0;
}

int bitset_set(struct bitset *b, uint32_t i)
{
	return bitset_put(b, i, true);
}

int bitset_clear(struct bitset *b, uint32_t i)
{
	return bitset_put(b, i, false);
}

/* The bits of word i / 64 that [i, i + count) covers, and how many they are. */
static uint64_t word_mask(uint32_t i, uint32_t count, uint32_t *n)
{
	uint32_t bit = i % WORD_BITS;

	*n = WORD_BITS - bit < count ? WORD_BITS - bit : count;
	return (*n == WORD_BITS ? ~UINT64_C(0) : ((UINT64_C(1) << *n) - 1)) << bit;
}

/* Whether [i, end) covers leaf l whole. */
static bool range_covers_leaf(const struct bitset *b, uint32_t l, uint64_t i, uint64_t end)
{
	uint64_t first = (uint64_t)l * BITSET_LEAF_BITS;

	return i <= first && end >= first + leaf_len(b, l);
}

int bitset_set_range(struct bitset *b, uint32_t i, uint32_t count)
{
	uint64_t end = (uint64_t)i + count;
	uint32_t first_leaf, last_leaf;

	if (!b || end > b->nr)
		return -EINVAL;
	if (!count)
		return 0;
	first_leaf = leaf_of(i);
	last_leaf = leaf_of((uint32_t)(end - 1));
	/* The ends first, so that a failure leaves everything as it was. */
	if (!range_covers_leaf(b, first_leaf, i, end) && b->leaf[first_leaf] != FULL &&
	    !leaf_make(b, first_leaf))
		return -ENOMEM;
	if (!range_covers_leaf(b, last_leaf, i, end) && b->leaf[last_leaf] != FULL &&
	    !leaf_make(b, last_leaf))
		return -ENOMEM;
	for (uint32_t l = first_leaf; l <= last_leaf; l++) {
		uint64_t *bits = b->leaf[l];
		uint64_t from, to;

		if (bits == FULL)
			continue;
		if (!bits) {
			/* Not made: only a leaf the range covers whole is left unmade. */
			b->leaf[l] = FULL;
			continue;
		}
		from = l == first_leaf ? i % BITSET_LEAF_BITS : 0;
		to = l == last_leaf ? (end - 1) % BITSET_LEAF_BITS + 1 : BITSET_LEAF_BITS;
		for (uint32_t at = (uint32_t)from, left = (uint32_t)(to - from), n; left;
		     at += n, left -= n)
			bits[at / WORD_BITS] |= word_mask(at, left, &n);
	}
	return 0;
}

bool bitset_all(const struct bitset *b, uint32_t i, uint32_t count, bool set)
{
	uint64_t end = (uint64_t)i + count;

	if (!b || end > b->nr)
		return false;
	while (i < end) {
		uint32_t l = leaf_of(i), at = i % BITSET_LEAF_BITS;
		uint32_t left = end - i < BITSET_LEAF_BITS - at ? (uint32_t)(end - i) :
								  BITSET_LEAF_BITS - at;
		const uint64_t *bits = b->leaf[l];

		if (!bits || bits == FULL) {
			if ((bits == FULL) != set)
				return false;
		} else {
			for (uint32_t n, k = left, a = at; k; a += n, k -= n) {
				uint64_t mask = word_mask(a, k, &n);

				if ((bits[a / WORD_BITS] & mask) != (set ? mask : 0))
					return false;
			}
		}
		i += left;
	}
	return true;
}

uint32_t bitset_next_clear(const struct bitset *b, uint32_t from)
{
	if (!b)
		return UINT32_MAX;
	for (uint32_t l = leaf_of(from); from < b->nr && l < b->nr_leaves; l++) {
		const uint64_t *bits = b->leaf[l];
		uint32_t at, w;
		uint64_t clear;

		if ((uint64_t)l * BITSET_LEAF_BITS > from)
			from = l * BITSET_LEAF_BITS;
		if (!bits)
			return from;
		if (bits == FULL)
			continue;
		at = from % BITSET_LEAF_BITS;
		w = at / WORD_BITS;
		clear = ~bits[w] & (~UINT64_C(0) << (at % WORD_BITS));
		while (!clear && ++w < LEAF_WORDS)
			clear = ~bits[w];
		if (clear) {
			/* Bits past nr read as clear in a made leaf: found there means none. */
			uint64_t i = (uint64_t)l * BITSET_LEAF_BITS + w * WORD_BITS +
				     (unsigned)__builtin_ctzll(clear);

			return i < b->nr ? (uint32_t)i : UINT32_MAX;
		}
	}
	return UINT32_MAX;
}

uint32_t bitset_next_set(const struct bitset *b, uint32_t from, uint32_t end)
{
	if (!b)
		return 0;
	if (end > b->nr)
		end = b->nr;
	while (from < end) {
		uint32_t l = leaf_of(from), at = from % BITSET_LEAF_BITS, w = at / WORD_BITS;
		const uint64_t *bits = b->leaf[l];
		uint64_t set;

		if (bits == FULL)
			return from;
		if (!bits) {
			from = (l + 1) * BITSET_LEAF_BITS;
			continue;
		}
		set = bits[w] & (~UINT64_C(0) << (at % WORD_BITS));
		while (!set && ++w < LEAF_WORDS)
			set = bits[w];
		if (set) {
			uint64_t i = (uint64_t)l * BITSET_LEAF_BITS + w * WORD_BITS +
				     (unsigned)__builtin_ctzll(set);

			return i < end ? (uint32_t)i : end;
		}
		from = (l + 1) * BITSET_LEAF_BITS;
	}
	return end;
}

uint64_t bitset_count(const struct bitset *b)
{
	uint64_t n = 0;

	for (uint32_t l = 0; b && l < b->nr_leaves; l++) {
		const uint64_t *bits = b->leaf[l];

		if (bits == FULL)
			n += leaf_len(b, l);
		else if (bits)
			for (uint32_t w = 0; w < LEAF_WORDS; w++)
				n += (unsigned)__builtin_popcountll(bits[w]);
	}
	return n;
}

bool bitset_valid(const struct bitset *b)
{
	uint32_t made = 0;

	if (!b || b->nr_leaves != (uint32_t)(((uint64_t)b->nr + BITSET_LEAF_BITS - 1) /
					     BITSET_LEAF_BITS) || (b->nr_leaves && !b->leaf))
		return false;
	for (uint32_t l = 0; l < b->nr_leaves; l++) {
		const uint64_t *bits = b->leaf[l];
		uint32_t len = leaf_len(b, l);

		if (!bits || bits == FULL)
			continue;
		made++;
		for (uint32_t w = len / WORD_BITS; w < LEAF_WORDS; w++) {
			uint64_t pad = w == len / WORD_BITS && len % WORD_BITS ?
					       ~UINT64_C(0) << (len % WORD_BITS) : ~UINT64_C(0);

			if (bits[w] & pad)
				return false;
		}
	}
	return made == b->nr_allocated;
}

uint64_t bitset_bytes(const struct bitset *b)
{
	if (!b)
		return 0;
	return (uint64_t)b->nr_leaves * sizeof(*b->leaf) +
	       (uint64_t)b->nr_allocated * LEAF_WORDS * sizeof(uint64_t);
}
