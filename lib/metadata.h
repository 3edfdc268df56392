/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TIERD_METADATA_H
#define TIERD_METADATA_H

#include <stddef.h>
#include <stdint.h>

#include "extmap.h"
#include "piecemap.h"

/*
 * The on-device metadata of a pool, so that a pool can be imported from
 * its devices alone when the SQLite state is gone.  Pure: everything here
 * encodes into or decodes from caller buffers; the caller does the I/O.
 *
 * Every pool device starts with
 *
 *   [0, 4096)                  superblock: which pool and device this is, and
 *                              where the rest of the layout sits
 *   slot_offset[0], [1]        two slots of slot_bytes each, every one able to
 *                              hold a whole generation of the pool metadata
 *   data_start (1 MiB aligned) physical extent 0, then nr_pe extents
 *
 * A writer always overwrites the slot that does not hold the newest valid
 * generation (metadata_next_slot()), so a torn write leaves the previous
 * generation readable.  Every device carries a full copy: on import the
 * highest valid generation found on any device is authoritative.
 *
 * All integers are little-endian; reserved bytes are written as zero and
 * ignored on read.  Both records open with the same 16 bytes:
 *
 *   0  magic[8]   "TIERDSB1" (superblock) or "TIERDMD1" (slot)
 *   8  version    u32, METADATA_VERSION
 *   12 crc        u32 CRC-32C of the whole record with this field as 0
 *
 * Superblock (the crc covers all 4096 bytes):
 *   16 pool_uuid[16]  32 dev_uuid[16]  48 pool_name[72] (NUL-padded)
 *   120 logical_block_size u32  124 reserved u32  128 dev_size u64
 *   136 extent_size u64  144 slot_offset[0] u64  152 slot_offset[1] u64
 *   160 slot_bytes u64  168 data_start u64  176 nr_pe u32  180.. zero
 *
 * Slot (the crc covers the header and the payload):
 *   16 generation u64  24 payload length u64 (bytes after offset 32)
 *   32 pool uuid[16]  48 name[72]  120 extent_size u64  128 flags u32
 *   132 reserved u32  136 created u64  144 nr_devs u32  148 reserved u32
 *   152 nr_devs device records of 48 bytes:
 *       0 uuid[16]  16 tier u8  17 reserved[3]  20 nr_pe u32
 *       24 reserve_pe u32  28 logical_block_size u32  32 data_start u64
 *       40 size_bytes u64
 *   then nr_logical u32, reserved u32, and nr_logical map entries of
 *   8 bytes: dev u16 (EXTMAP_NO_DEV: unmapped, pe 0), reserved u16, pe u32.
 *
 * A slot of version 2 (METADATA_VERSION_PIECES) is that of version 1 and,
 * after the map entries, the pieces of split extents (piecemap.h):
 *   pieces_per_extent u32 (a power of two, pieces of 4 KiB at least)
 *   nr_containers u32 (at least 1)  nr_pieces u32  reserved u32
 *   nr_containers records of 8 bytes: dev u16, reserved u16, pe u32
 *   nr_pieces records of 12 bytes, by le then piece: le u32, piece u16,
 *       slot u16, container u32 (an index into the records above)
 * A pool without piece containers is written as version 1, so that a tierd
 * that knows no pieces still reads it; a tierd that knows them reads both.
 * Superblocks are version 1.
 *
 * Functions that can fail return 0 or a negative errno.
 */

#define METADATA_BLOCK 4096
/* Where a slot's record holds the pool's uuid (the layout above). */
#define METADATA_POOL_UUID_OFFSET 32
#define METADATA_VERSION 1
#define METADATA_VERSION_PIECES 2
#define METADATA_NAME_MAX 64
#define METADATA_MAX_DEVS EXTMAP_MAX_DEVS
/* data_start alignment: suits RAID stripes and any SSD erase block. */
#define METADATA_ALIGN (UINT64_C(1) << 20)
/* Fewer extents than this are not worth a pool device. */
#define METADATA_MIN_PE 8

/* metadata_pool.flags: the SSD tier's capacity is part of the volume size. */
#define METADATA_POOL_SSD_GROWS 1u

enum metadata_tier {
	METADATA_TIER_HDD = 0,
	METADATA_TIER_SSD = 1,
};

/* "hdd" or "ssd": the tier's name in the protocol, the state and the metrics. */
const char *metadata_tier_name(enum metadata_tier tier);

struct metadata_sb {
	uint32_t version; /* set by decode and layout; encode writes METADATA_VERSION */
	uint8_t pool_uuid[16], dev_uuid[16];
	char pool_name[METADATA_NAME_MAX + 1];
	uint32_t logical_block_size;
	uint64_t dev_size; /* bytes, when the device was formatted */
	uint64_t extent_size;
	uint64_t slot_offset[2], slot_bytes, data_start; /* bytes */
	uint32_t nr_pe;
};

struct metadata_dev {
	uint8_t uuid[16];
	enum metadata_tier tier;
	uint32_t nr_pe, reserve_pe, logical_block_size;
	uint64_t data_start, size_bytes; /* bytes */
};

struct metadata_pool {
	uint64_t generation; /* >= 1: 0 marks an empty slot */
	uint8_t uuid[16];
	char name[METADATA_NAME_MAX + 1];
	uint64_t extent_size;
	uint32_t flags;
	uint64_t created; /* unix seconds */
	unsigned nr_devs; /* 1..METADATA_MAX_DEVS; extmap device i is devs[i] */
	struct metadata_dev devs[METADATA_MAX_DEVS];
};

/*
 * Plan a device's layout: slot A right after the superblock, slot B right
 * after A, each sized for max_logical extents and METADATA_MAX_DEVS devices
 * so the pool can grow without moving data; data_start on the next 1 MiB
 * boundary; nr_pe the whole extents after it.  With stripe_bytes (a RAID's
 * full stripe, the device's optimal I/O size: a multiple of METADATA_BLOCK
 * up to METADATA_STRIPE_MAX, else ignored), the superblock, slot A and slot
 * B each start a stripe of their own, so that a torn partial-stripe write to
 * one (the RAID5/6 write hole) cannot take another.  Sets every field but the
 * uuids and the name, which are left as they are; *sb is written only on
 * success.  -EINVAL: extent_size not a power of two in 1 MiB..1 GiB or
 * logical_block_size not one in 512..4096; -ENOSPC: fewer than
 * METADATA_MIN_PE extents fit; -EFBIG: more than UINT32_MAX would.
 */
#define METADATA_STRIPE_MAX (UINT64_C(64) << 20)
int metadata_layout(struct metadata_sb *sb, uint64_t dev_size, uint32_t logical_block_size,
		    uint64_t extent_size, uint32_t max_logical, uint64_t stripe_bytes);
/* Slot capacity for max_logical extents, a multiple of METADATA_BLOCK. */
uint64_t metadata_slot_bytes(uint32_t max_logical);
/* The inverse: extents a slot of slot_bytes holds (>= the max_logical it was sized for). */
uint32_t metadata_slot_max_logical(uint64_t slot_bytes);

/*
 * block is METADATA_BLOCK bytes.  Encode refuses (-EINVAL) a superblock
 * that decode would call inconsistent, so what is written can be read.
 */
int metadata_sb_encode(const struct metadata_sb *sb, void *block);
/*
 * *sb is written only on success.  -ENOENT: not a tierd superblock (no
 * magic); -EBADMSG: checksum; -EPROTONOSUPPORT: version; -EUCLEAN: fields
 * inconsistent (bad name or sizes, slots overlapping the superblock, each
 * other or the data, data_start unaligned, nr_pe not what dev_size gives).
 */
int metadata_sb_decode(struct metadata_sb *sb, const void *block);

/*
 * Encoded size of a slot's content without pieces.  Slots are written in
 * whole blocks: round up to METADATA_BLOCK (the bytes past it are ignored
 * on read).
 */
size_t metadata_pool_bytes(unsigned nr_devs, uint32_t nr_logical);
/* What pm's pieces add to it: 0 for NULL or a map without containers. */
size_t metadata_pieces_bytes(const struct piecemap *pm);
/*
 * Whether extents of extent_size bytes can be split into pieces_per_extent
 * pieces in a slot: a power of two from 2, pieces of 4 KiB at least.
 */
int metadata_piece_size_valid(uint64_t extent_size, uint32_t pieces_per_extent);
/*
 * Write exactly metadata_pool_bytes(p->nr_devs, m->nr_logical) +
 * metadata_pieces_bytes(pm) bytes (pm may be NULL: no pieces).
 * -ENOSPC if cap is smaller; -EINVAL if p is inconsistent (what decode
 * would reject: generation 0, bad name, sizes or tier, a device's extents
 * past its end, unknown flags) or if m's devices, their nr_pe or its
 * entries disagree with p->devs, or if pm's piece size is not one decode
 * takes, a container's pe is out of m or not used in it, or a piece is of
 * an unmapped extent or out of range.  A pe mapped twice, or mapped and a
 * container, is not detected here (the map has no reverse index:
 * extmap_check() and piecemap_check() keep what they can); decode rejects
 * it.
 */
int metadata_pool_encode(const struct metadata_pool *p, const struct extmap *m,
			 const struct piecemap *pm, void *buf, size_t cap);
/*
 * The same record a block at a time, so a commit can encode what changed:
 * block blk (bytes [blk * METADATA_BLOCK, ...) of what metadata_pool_encode
 * writes) into block (METADATA_BLOCK bytes, zero past the record), except
 * that block 0's crc field is left zero: the crc is of the whole record,
 * summed by the caller (crc32c_append over the blocks' sums, block 0's
 * taken with the field zero) and stored with metadata_pool_seal_crc().
 * *len is the record's bytes in the block. -EINVAL as encode for what the
 * block holds (an entry or piece in another block is not looked at), or
 * for a block past the record.
 */
int metadata_pool_encode_block(const struct metadata_pool *p, const struct extmap *m,
			       const struct piecemap *pm, size_t blk, void *block, size_t *len);
void metadata_pool_seal_crc(void *block0, uint32_t crc);
/* The crc a record's block 0 carries (what metadata_pool_seal_crc() stored). */
uint32_t metadata_pool_crc(const void *block0);
/* Where logical extent le's entry, METADATA_ENTRY_SIZE bytes, sits in a record of nr_devs devices. */
#define METADATA_ENTRY_SIZE 8
size_t metadata_pool_entry_offset(unsigned nr_devs, uint32_t le);

/*
 * Decode a slot's content from buf (len bytes, e.g. the whole slot) into *p,
 * into *m and into *pm, which the call initialises (one extmap device per
 * p->devs, in order; piece containers claimed in m); the decoded maps pass
 * extmap_check() and piecemap_check().  *pm is zeroed (no piece size)
 * when the record has no pieces.  On error *p is zeroed and *m and *pm left
 * empty.  -ENOENT: no magic (an empty slot); -EBADMSG: checksum;
 * -EPROTONOSUPPORT: version; -EUCLEAN: inconsistent (the record is longer
 * than len, its length disagrees with its counts, a device or pe is out of
 * range, a pe is mapped twice or is a container too, a piece of an
 * unmapped extent, out of order or in another's slot, anything encode
 * would refuse); -ENOMEM.
 */
int metadata_pool_decode(struct metadata_pool *p, struct extmap *m, struct piecemap *pm,
			 const void *buf, size_t len);
/*
 * From the first bytes of a slot (at least 32; one block will do): its
 * generation and the bytes the record spans, so a reader fetches that much
 * rather than the whole slot.  Nothing is verified but the magic: only
 * metadata_pool_decode() of the whole record can be trusted.  Either out
 * pointer may be NULL.  -ENOENT: no magic (an empty slot); -EUCLEAN: len
 * too short for the header or a length no device could hold.
 */
int metadata_pool_peek(const void *buf, size_t len, uint64_t *generation, uint64_t *bytes);

/*
 * The slot to write next: the one not holding the newer valid generation
 * (slot 0 on a tie, so an empty device is written in order A, B, A...).
 * gens[i] is slot i's generation, 0 if invalid or empty.
 */
unsigned metadata_next_slot(const uint64_t gens[2]);

/*
 * What differs: a slot known to hold old (old_len bytes; NULL and 0 when
 * its content is unknown) is to hold cur (len bytes).  Finds the
 * first run of METADATA_BLOCK blocks at or after *off in which every block
 * differs from old, sets *off to its start and *run_len to its length, and
 * returns 1; returns 0 when no block from *off on differs.  A block at or
 * past old_len differs; a short last block of cur is compared as far as it
 * goes.  Writing each run, then flushing, turns the slot into cur.
 */
int metadata_next_change(const void *old, size_t old_len, const void *cur, size_t len,
			 size_t *off, size_t *run_len);

/* 8-4-4-4-12 lower-case hex and a NUL. */
void metadata_uuid_format(const uint8_t uuid[16], char out[37]);
/* The same form, hex digits of either case; -EINVAL otherwise.  *uuid written only on success. */
int metadata_uuid_parse(uint8_t uuid[16], const char *s);

/*
 * A pool name: 1..METADATA_NAME_MAX characters of [A-Za-z0-9_.+-], not
 * starting with '.' or '-' (so it is a safe file and dm device name and
 * cannot pass for an option).  0 or -EINVAL.
 */
int metadata_name_valid(const char *name);

#endif
