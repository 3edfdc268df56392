/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TIERD_BITSET_H
#define TIERD_BITSET_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A set of bits [0, nr) held in leaves of BITSET_LEAF_BITS, where a leaf
 * whose bits are all clear or all set costs a pointer and no leaf.  The
 * physical extents of a pool's devices are such a set: a device is all
 * used or all free until something moves, and then only where it moved.
 * A 200 TiB HDD of 4 MiB extents is 13 KB of pointers, not 6.5 MB of bits.
 *
 * A leaf, once allocated, stays until bitset_destroy(): so a bit whose
 * leaf was made (bitset_hold(), or a set or clear in it) changes from then
 * on without allocating, which a commit of the extent map relies on.
 *
 * Functions that can fail return 0 or a negative errno.
 */

#define BITSET_LEAF_BITS 32768u

struct bitset {
	uint32_t nr;
	uint32_t nr_leaves;
	uint64_t **leaf; /* NULL: all clear; bitset_full: all set; else the bits */
	uint32_t nr_allocated;
};

/* All clear; on error *b is left empty. */
int bitset_init(struct bitset *b, uint32_t nr);
/* Accepts NULL and a zeroed or already destroyed set. */
void bitset_destroy(struct bitset *b);

/* false past nr. */
bool bitset_test(const struct bitset *b, uint32_t i);
/* Make i's leaf, so that later changes in it cannot fail.  -ENOMEM, -EINVAL past nr. */
int bitset_hold(struct bitset *b, uint32_t i);
/* -ENOMEM when i's leaf must be made and cannot; -EINVAL past nr. */
int bitset_set(struct bitset *b, uint32_t i);
int bitset_clear(struct bitset *b, uint32_t i);
/*
 * Bits [i, i + count): leaves it covers whole become all set without
 * memory; at most the two at its ends are made.  -ENOMEM changes nothing.
 */
int bitset_set_range(struct bitset *b, uint32_t i, uint32_t count);
/* Whether [i, i + count) is all set (set) or all clear; false past nr. */
bool bitset_all(const struct bitset *b, uint32_t i, uint32_t count, bool set);
/* The lowest clear bit at or after from, or UINT32_MAX. */
uint32_t bitset_next_clear(const struct bitset *b, uint32_t from);
/* The lowest set bit in [from, end), or end (at most nr). */
uint32_t bitset_next_set(const struct bitset *b, uint32_t from, uint32_t end);
/* Bits set in [0, nr). */
uint64_t bitset_count(const struct bitset *b);
/* Whether the leaves agree with the counters and no bit past nr is set. */
bool bitset_valid(const struct bitset *b);
/* Memory held: the pointers and the leaves made. */
uint64_t bitset_bytes(const struct bitset *b);

#endif
