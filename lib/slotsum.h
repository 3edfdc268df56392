/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TIERD_SLOTSUM_H
#define TIERD_SLOTSUM_H

#include <stddef.h>
#include <stdint.h>

/*
 * What a commit needs to know of a slot's record without holding it: the
 * CRC-32C of each of its METADATA_BLOCK blocks (block 0 summed with its crc
 * field zero, the last one over the record's bytes only), from which the
 * record's crc follows for any change of a few blocks, and sets of block
 * numbers: the blocks a generation changed, the blocks in which a slot
 * differs from the current generation. 4 bytes of sums per 512 extents
 * instead of the record's 8 per extent. Pure.
 *
 * Functions that can fail return 0 or a negative errno.
 */

struct slotsum {
	size_t len;	   /* record bytes */
	size_t nr_blocks;
	uint32_t *crc;	   /* per block */
	uint32_t tail_op;  /* crc32c_zeros(the last block's bytes) */
	/*
	 * Appending a whole block multiplies the sum so far by a constant:
	 * linear in its bytes, so four lookups instead of a product bit by bit.
	 */
	uint32_t block_tab[4][256];
};

/* Sums of zero for a record of len bytes (len >= 1). On error *s is left empty. */
int slotsum_init(struct slotsum *s, size_t len);
/* Accepts NULL and an empty or destroyed one. */
void slotsum_destroy(struct slotsum *s);
/* The record's bytes in block blk (METADATA_BLOCK but for the last). */
size_t slotsum_block_len(const struct slotsum *s, size_t blk);
/* The sum of block blk's content (the record's bytes of block): set, not stored. */
uint32_t slotsum_of(const struct slotsum *s, size_t blk, const void *block);

/* Increasing block numbers. */
struct slotsum_set {
	uint32_t *blk;
	size_t nr, cap;
};

/*
 * The record's crc: one pass over the block sums, none over the data. A
 * change of a few blocks costs their new sums and this pass.
 */
uint32_t slotsum_total(const struct slotsum *s);

/*
 * The crc of a record that differs from s's in the blocks of set only,
 * whose sums are crc[0 .. set->nr): what a slot read block by block
 * against the current generation must carry to be whole.
 */
uint32_t slotsum_total_with(const struct slotsum *s, const struct slotsum_set *set,
			    const uint32_t *crc);

/* Add blk, at least the last one added (-EINVAL below it; equal is a no-op). */
int slotsum_set_add(struct slotsum_set *set, uint32_t blk);
/* dst becomes dst ∪ src; on -ENOMEM dst is unchanged. */
/*
 * Add the blocks holding the entries of le [first, first + count) in a
 * record of nr_devs devices (count >= 1), at least the last one added.
 */
int slotsum_set_add_entries(struct slotsum_set *set, unsigned nr_devs, uint32_t first,
			    uint32_t count);
int slotsum_set_union(struct slotsum_set *dst, const struct slotsum_set *src);
int slotsum_set_has(const struct slotsum_set *set, uint32_t blk);
/* Empty, keeping the memory. */
void slotsum_set_clear(struct slotsum_set *set);
/* Accepts NULL. */
void slotsum_set_free(struct slotsum_set *set);

#endif
