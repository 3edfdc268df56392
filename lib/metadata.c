/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "metadata.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "crc32c.h"

#define METADATA_SB_MAGIC "TIERDSB1"
#define METADATA_POOL_MAGIC "TIERDMD1"
#define METADATA_MAGIC_BYTES 8
/* Magic, version and crc: the opening both records share. */
#define METADATA_SEAL_BYTES 16
#define METADATA_CRC_OFFSET 12
/* The seal, then generation and payload length: what the slot's length counts from. */
#define METADATA_SLOT_HEADER 32
#define METADATA_GENERATION_OFFSET 16
#define METADATA_LENGTH_OFFSET 24
/* 64 characters and a NUL, padded so the fields after it stay 8-byte aligned. */
#define METADATA_NAME_FIELD 72
#define METADATA_DEV_BYTES 48
#define METADATA_ENTRY_BYTES 8
/* Slot bytes besides the device records and map entries (see metadata.h). */
#define METADATA_POOL_FIXED 160
#define METADATA_UUID_TEXT 36
/* The pieces section of a version 2 slot (metadata.h). */
#define METADATA_PIECES_HEADER 16
#define METADATA_CONTAINER_BYTES 8
#define METADATA_PIECE_BYTES 12
/* The smallest piece: a page, so a whole number of any device's logical blocks. */
#define METADATA_PIECE_MIN 4096

#define METADATA_EXTENT_MIN (UINT64_C(1) << 20)
#define METADATA_EXTENT_MAX (UINT64_C(1) << 30)

/*
 * One description of each record serves both directions: with out set the
 * codec stores the fields into out, with in set it loads them from in.  So
 * the field order, the on-device format, is written down exactly once.
 * Running past len sets overrun instead of touching memory, which is how a
 * record whose counts disagree with its length is caught.
 */
struct metadata_codec {
	unsigned char *out;
	const unsigned char *in;
	size_t pos, len;
	bool overrun;
};

static bool metadata_codec_room(struct metadata_codec *c, size_t n)
{
	if (c->pos > c->len || c->len - c->pos < n) {
		c->overrun = true;
		return false;
	}
	return true;
}

static void metadata_codec_bytes(struct metadata_codec *c, void *val, size_t n)
{
	if (!metadata_codec_room(c, n))
		return;
	if (c->out)
		memcpy(c->out + c->pos, val, n);
	else
		memcpy(val, c->in + c->pos, n);
	c->pos += n;
}

/* Reserved bytes: encode zeroes the whole buffer first, decode ignores them. */
static void metadata_codec_skip(struct metadata_codec *c, size_t n)
{
	if (metadata_codec_room(c, n))
		c->pos += n;
}

static void metadata_put_le(unsigned char *p, uint64_t v, unsigned width)
{
	for (unsigned i = 0; i < width; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t metadata_get_le(const unsigned char *p, unsigned width)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < width; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Byte-wise, so the format is the same on any host and needs no alignment. */
static uint64_t metadata_codec_le(struct metadata_codec *c, uint64_t v, unsigned width)
{
	if (!metadata_codec_room(c, width))
		return v;
	if (c->out)
		metadata_put_le(c->out + c->pos, v, width);
	else
		v = metadata_get_le(c->in + c->pos, width);
	c->pos += width;
	return v;
}

static void metadata_codec_u8(struct metadata_codec *c, uint8_t *v)
{
	*v = (uint8_t)metadata_codec_le(c, *v, 1);
}

static void metadata_codec_u16(struct metadata_codec *c, uint16_t *v)
{
	*v = (uint16_t)metadata_codec_le(c, *v, 2);
}

static void metadata_codec_u32(struct metadata_codec *c, uint32_t *v)
{
	*v = (uint32_t)metadata_codec_le(c, *v, 4);
}

static void metadata_codec_u64(struct metadata_codec *c, uint64_t *v)
{
	*v = metadata_codec_le(c, *v, 8);
}

static void metadata_codec_name(struct metadata_codec *c, char name[METADATA_NAME_MAX + 1])
{
	metadata_codec_bytes(c, name, METADATA_NAME_MAX + 1);
	metadata_codec_skip(c, METADATA_NAME_FIELD - (METADATA_NAME_MAX + 1));
}

static bool metadata_pow2_between(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v >= lo && v <= hi && !(v & (v - 1));
}

static bool metadata_extent_size_valid(uint64_t extent_size)
{
	return metadata_pow2_between(extent_size, METADATA_EXTENT_MIN, METADATA_EXTENT_MAX);
}

static bool metadata_lbs_valid(uint32_t lbs)
{
	return metadata_pow2_between(lbs, 512, 4096);
}

static uint64_t metadata_align_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) / align * align;
}

/* 64-bit whatever size_t is, so a hostile count cannot wrap a length check. */
static uint64_t metadata_pool_bytes64(uint64_t nr_devs, uint64_t nr_logical)
{
	return METADATA_POOL_FIXED + nr_devs * METADATA_DEV_BYTES + nr_logical * METADATA_ENTRY_BYTES;
}

size_t metadata_pool_bytes(unsigned nr_devs, uint32_t nr_logical)
{
	uint64_t bytes = metadata_pool_bytes64(nr_devs, nr_logical);

#if SIZE_MAX < UINT64_MAX
	if (bytes > SIZE_MAX)
		return SIZE_MAX;
#endif
	return (size_t)bytes;
}

uint64_t metadata_slot_bytes(uint32_t max_logical)
{
	return metadata_align_up(metadata_pool_bytes64(METADATA_MAX_DEVS, max_logical),
				 METADATA_BLOCK);
}

uint32_t metadata_slot_max_logical(uint64_t slot_bytes)
{
	uint64_t fixed = metadata_pool_bytes64(METADATA_MAX_DEVS, 0);
	uint64_t n;

	if (slot_bytes < fixed)
		return 0;
	n = (slot_bytes - fixed) / METADATA_ENTRY_BYTES;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* Whole extents between data_start and the end; UINT64_MAX if data_start is past it. */
static uint64_t metadata_whole_extents(uint64_t dev_size, uint64_t data_start, uint64_t extent_size)
{
	return data_start > dev_size ? UINT64_MAX : (dev_size - data_start) / extent_size;
}

int metadata_layout(struct metadata_sb *sb, uint64_t dev_size, uint32_t logical_block_size,
		    uint64_t extent_size, uint32_t max_logical, uint64_t stripe_bytes)
{
	uint64_t slot = metadata_slot_bytes(max_logical);
	/* Devices report odd optimal sizes (USB bridges: 32 MiB - 512): only a plausible stripe. */
	uint64_t stripe = stripe_bytes && stripe_bytes % METADATA_BLOCK == 0 &&
			  stripe_bytes <= METADATA_STRIPE_MAX ? stripe_bytes : METADATA_BLOCK;
	uint64_t slot_a = metadata_align_up(METADATA_BLOCK, stripe);
	uint64_t slot_b = metadata_align_up(slot_a + slot, stripe);
	uint64_t data_start = metadata_align_up(metadata_align_up(slot_b + slot, stripe),
						METADATA_ALIGN);
	uint64_t nr_pe;

	if (!sb || !metadata_extent_size_valid(extent_size) || !metadata_lbs_valid(logical_block_size))
		return -EINVAL;
	nr_pe = metadata_whole_extents(dev_size, data_start, extent_size);
	if (nr_pe == UINT64_MAX || nr_pe < METADATA_MIN_PE)
		return -ENOSPC;
	if (nr_pe > UINT32_MAX)
		return -EFBIG;
	sb->version = METADATA_VERSION;
	sb->logical_block_size = logical_block_size;
	sb->dev_size = dev_size;
	sb->extent_size = extent_size;
	sb->slot_offset[0] = slot_a;
	sb->slot_offset[1] = slot_b;
	sb->slot_bytes = slot;
	sb->data_start = data_start;
	sb->nr_pe = (uint32_t)nr_pe;
	return 0;
}

/* Block-aligned, past the superblock and wholly before the data. */
static bool metadata_slot_placed(const struct metadata_sb *sb, uint64_t offset)
{
	return offset % METADATA_BLOCK == 0 && offset >= METADATA_BLOCK &&
	       offset <= sb->data_start && sb->data_start - offset >= sb->slot_bytes;
}

static bool metadata_sb_valid(const struct metadata_sb *sb)
{
	uint64_t lo = sb->slot_offset[0], hi = sb->slot_offset[1];

	if (lo > hi) {
		lo = sb->slot_offset[1];
		hi = sb->slot_offset[0];
	}
	return !metadata_name_valid(sb->pool_name) &&
	       metadata_lbs_valid(sb->logical_block_size) &&
	       metadata_extent_size_valid(sb->extent_size) &&
	       sb->slot_bytes >= metadata_slot_bytes(0) && sb->slot_bytes % METADATA_BLOCK == 0 &&
	       metadata_slot_placed(sb, lo) && metadata_slot_placed(sb, hi) &&
	       hi - lo >= sb->slot_bytes && sb->data_start % METADATA_ALIGN == 0 &&
	       sb->nr_pe >= METADATA_MIN_PE &&
	       metadata_whole_extents(sb->dev_size, sb->data_start, sb->extent_size) == sb->nr_pe;
}

static void metadata_sb_fields(struct metadata_codec *c, struct metadata_sb *sb)
{
	metadata_codec_bytes(c, sb->pool_uuid, sizeof(sb->pool_uuid));
	metadata_codec_bytes(c, sb->dev_uuid, sizeof(sb->dev_uuid));
	metadata_codec_name(c, sb->pool_name);
	metadata_codec_u32(c, &sb->logical_block_size);
	metadata_codec_skip(c, 4);
	metadata_codec_u64(c, &sb->dev_size);
	metadata_codec_u64(c, &sb->extent_size);
	metadata_codec_u64(c, &sb->slot_offset[0]);
	metadata_codec_u64(c, &sb->slot_offset[1]);
	metadata_codec_u64(c, &sb->slot_bytes);
	metadata_codec_u64(c, &sb->data_start);
	metadata_codec_u32(c, &sb->nr_pe);
}

/*
 * Finish a record whose fields are written and whose crc field is still
 * zero (the buffer was cleared), so the sum over it is the stored crc.
 */
static void metadata_seal(unsigned char *buf, size_t len, const char *magic, uint32_t version)
{
	memcpy(buf, magic, METADATA_MAGIC_BYTES);
	metadata_put_le(buf + METADATA_MAGIC_BYTES, version, 4);
	metadata_put_le(buf + METADATA_CRC_OFFSET, crc32c(0, buf, len), 4);
}

static bool metadata_has_magic(const unsigned char *buf, size_t len, const char *magic)
{
	return len >= METADATA_MAGIC_BYTES && !memcmp(buf, magic, METADATA_MAGIC_BYTES);
}

/*
 * The crc before the version: a damaged version field is damage, and only
 * an intact record can tell us it is from a newer tierd.
 */
static int metadata_unseal(const unsigned char *buf, size_t len, uint32_t max_version)
{
	static const unsigned char zero[4];
	uint32_t crc = crc32c(0, buf, METADATA_CRC_OFFSET), version;

	crc = crc32c(crc, zero, sizeof(zero));
	crc = crc32c(crc, buf + METADATA_SEAL_BYTES, len - METADATA_SEAL_BYTES);
	if (crc != metadata_get_le(buf + METADATA_CRC_OFFSET, 4))
		return -EBADMSG;
	version = (uint32_t)metadata_get_le(buf + METADATA_MAGIC_BYTES, 4);
	/* No tierd ever wrote a version 0: not a record from the future, a broken one. */
	if (version < METADATA_VERSION)
		return -EUCLEAN;
	if (version > max_version)
		return -EPROTONOSUPPORT;
	return 0;
}

int metadata_sb_encode(const struct metadata_sb *sb, void *block)
{
	struct metadata_codec c = { .out = block, .pos = METADATA_SEAL_BYTES, .len = METADATA_BLOCK };
	struct metadata_sb copy;

	if (!sb || !block || !metadata_sb_valid(sb))
		return -EINVAL;
	/* The codec works on mutable fields in both directions. */
	copy = *sb;
	memset(block, 0, METADATA_BLOCK);
	metadata_sb_fields(&c, &copy);
	metadata_seal(block, METADATA_BLOCK, METADATA_SB_MAGIC, METADATA_VERSION);
	return 0;
}

const char *metadata_tier_name(enum metadata_tier tier)
{
	return tier == METADATA_TIER_SSD ? "ssd" : "hdd";
}

int metadata_sb_decode(struct metadata_sb *sb, const void *block)
{
	struct metadata_codec c = { .in = block, .pos = METADATA_SEAL_BYTES, .len = METADATA_BLOCK };
	struct metadata_sb got = { .version = METADATA_VERSION };
	int r;

	if (!sb || !block)
		return -EINVAL;
	if (!metadata_has_magic(block, METADATA_BLOCK, METADATA_SB_MAGIC))
		return -ENOENT;
	r = metadata_unseal(block, METADATA_BLOCK, METADATA_VERSION);
	if (r)
		return r;
	metadata_sb_fields(&c, &got);
	if (!metadata_sb_valid(&got))
		return -EUCLEAN;
	*sb = got;
	return 0;
}

static bool metadata_dev_valid(const struct metadata_dev *d, uint64_t extent_size)
{
	return (d->tier == METADATA_TIER_HDD || d->tier == METADATA_TIER_SSD) && d->nr_pe &&
	       d->reserve_pe <= d->nr_pe && metadata_lbs_valid(d->logical_block_size) &&
	       d->data_start && d->data_start % METADATA_ALIGN == 0 &&
	       d->data_start <= d->size_bytes &&
	       (d->size_bytes - d->data_start) / extent_size >= d->nr_pe;
}

static bool metadata_pool_valid(const struct metadata_pool *p)
{
	if (!p->generation || metadata_name_valid(p->name) ||
	    !metadata_extent_size_valid(p->extent_size) || (p->flags & ~METADATA_POOL_SSD_GROWS) ||
	    !p->nr_devs || p->nr_devs > METADATA_MAX_DEVS)
		return false;
	for (unsigned i = 0; i < p->nr_devs; i++) {
		if (!metadata_dev_valid(&p->devs[i], p->extent_size))
			return false;
		/* A device listed twice would have its extents handed out twice. */
		for (unsigned j = 0; j < i; j++)
			if (!memcmp(p->devs[i].uuid, p->devs[j].uuid, sizeof(p->devs[i].uuid)))
				return false;
	}
	return true;
}

static void metadata_dev_fields(struct metadata_codec *c, struct metadata_dev *d)
{
	/* The enum's size is the compiler's choice; on the device it is one byte. */
	uint8_t tier = (uint8_t)d->tier;

	metadata_codec_bytes(c, d->uuid, sizeof(d->uuid));
	metadata_codec_u8(c, &tier);
	metadata_codec_skip(c, 3);
	metadata_codec_u32(c, &d->nr_pe);
	metadata_codec_u32(c, &d->reserve_pe);
	metadata_codec_u32(c, &d->logical_block_size);
	metadata_codec_u64(c, &d->data_start);
	metadata_codec_u64(c, &d->size_bytes);
	d->tier = (enum metadata_tier)tier;
}

/*
 * Everything of a slot but the seal and the map entries.  Decoding stops at
 * a device count too large for p->devs; decode then rejects the record.
 */
static void metadata_pool_fields(struct metadata_codec *c, struct metadata_pool *p,
				 uint64_t *payload_len, uint32_t *nr_logical)
{
	uint32_t nr_devs = p->nr_devs;

	metadata_codec_u64(c, &p->generation);
	metadata_codec_u64(c, payload_len);
	metadata_codec_bytes(c, p->uuid, sizeof(p->uuid));
	metadata_codec_name(c, p->name);
	metadata_codec_u64(c, &p->extent_size);
	metadata_codec_u32(c, &p->flags);
	metadata_codec_skip(c, 4);
	metadata_codec_u64(c, &p->created);
	metadata_codec_u32(c, &nr_devs);
	metadata_codec_skip(c, 4);
	if (nr_devs > METADATA_MAX_DEVS) {
		c->overrun = true;
		return;
	}
	p->nr_devs = nr_devs;
	for (unsigned i = 0; i < nr_devs; i++)
		metadata_dev_fields(c, &p->devs[i]);
	metadata_codec_u32(c, nr_logical);
	metadata_codec_skip(c, 4);
}

static void metadata_codec_entry(struct metadata_codec *c, struct extmap_loc *loc)
{
	metadata_codec_u16(c, &loc->dev);
	metadata_codec_skip(c, 2);
	metadata_codec_u32(c, &loc->pe);
}

/* The map's entries from le on, as far as c's buffer goes. */
static int metadata_encode_entries(struct metadata_codec *c, const struct extmap *m, uint32_t le)
{
	while (le < m->nr_logical && c->pos < c->len) {
		struct extmap_loc loc;
		/* A run at a time, as far as the buffer goes: one lookup for all its entries. */
		uint32_t span = extmap_span(m, le, (uint32_t)((c->len - c->pos) / METADATA_ENTRY_BYTES + 1),
					    &loc);

		for (uint32_t i = 0; i < span && c->pos < c->len; i++, le++) {
			struct extmap_loc at = loc;

			/* Unmapped entries carry pe 0 whatever the map holds: decode insists. */
			if (at.dev == EXTMAP_NO_DEV)
				at.pe = 0;
			else if (at.dev >= m->nr_devs || (uint64_t)at.pe + i >= m->nr_pe[at.dev])
				return -EINVAL;
			else
				at.pe += i;
			metadata_codec_entry(c, &at);
		}
	}
	return 0;
}

static bool metadata_map_matches(const struct metadata_pool *p, const struct extmap *m)
{
	if (m->nr_devs != p->nr_devs || (m->nr_logical && !m->pages.leaf))
		return false;
	for (unsigned i = 0; i < p->nr_devs; i++)
		if (m->nr_pe[i] != p->devs[i].nr_pe)
			return false;
	return true;
}

static bool metadata_has_pieces(const struct piecemap *pm)
{
	return pm && pm->nr_containers;
}

size_t metadata_pieces_bytes(const struct piecemap *pm)
{
	uint64_t bytes;

	if (!metadata_has_pieces(pm))
		return 0;
	bytes = METADATA_PIECES_HEADER + (uint64_t)pm->nr_containers * METADATA_CONTAINER_BYTES +
		(uint64_t)pm->nr_pieces * METADATA_PIECE_BYTES;
#if SIZE_MAX < UINT64_MAX
	/* As metadata_pool_bytes(), and so that the two added cannot wrap either. */
	if (bytes > SIZE_MAX / 2)
		return SIZE_MAX / 2;
#endif
	return (size_t)bytes;
}

int metadata_piece_size_valid(uint64_t extent_size, uint32_t pieces_per_extent)
{
	return metadata_pow2_between(pieces_per_extent, 2, PIECEMAP_MAX_PIECES_PER_EXTENT) &&
	       extent_size / pieces_per_extent >= METADATA_PIECE_MIN;
}

static void metadata_pieces_header_fields(struct metadata_codec *c, uint32_t *pieces_per_extent,
					  uint32_t *nr_containers, uint32_t *nr_pieces)
{
	metadata_codec_u32(c, pieces_per_extent);
	metadata_codec_u32(c, nr_containers);
	metadata_codec_u32(c, nr_pieces);
	metadata_codec_skip(c, 4);
}

static void metadata_container_fields(struct metadata_codec *c, uint16_t *dev, uint32_t *pe)
{
	metadata_codec_u16(c, dev);
	metadata_codec_skip(c, 2);
	metadata_codec_u32(c, pe);
}

static void metadata_piece_fields(struct metadata_codec *c, struct piecemap_piece *p)
{
	metadata_codec_u32(c, &p->le);
	metadata_codec_u16(c, &p->idx);
	metadata_codec_u16(c, &p->slot);
	metadata_codec_u32(c, &p->container);
}

/*
 * Record r of the pieces section (0 the header, then the containers, then
 * the pieces) into rec; its offset from the section's start in *off and
 * its size returned.  -EINVAL (as a size of 0) for a container or piece
 * that points out of the map.
 */
static size_t metadata_pieces_record(const struct piecemap *pm, const struct extmap *m,
				     uint64_t r, unsigned char rec[METADATA_PIECES_HEADER],
				     size_t *off)
{
	struct metadata_codec c = { .out = rec, .len = METADATA_PIECES_HEADER };
	uint32_t ppe = pm->pieces_per_extent, nr_c = pm->nr_containers, nr_p = pm->nr_pieces;

	memset(rec, 0, METADATA_PIECES_HEADER);
	if (r == 0) {
		*off = 0;
		metadata_pieces_header_fields(&c, &ppe, &nr_c, &nr_p);
	} else if (r <= nr_c) {
		struct piecemap_container pc = pm->containers[r - 1];

		/* Its pe held used, as decode will claim it; a mapped one is not seen here. */
		if (pc.dev >= m->nr_devs || pc.pe >= m->nr_pe[pc.dev] ||
		    !bitset_test(&m->used[pc.dev], pc.pe))
			return 0;
		*off = METADATA_PIECES_HEADER + (size_t)(r - 1) * METADATA_CONTAINER_BYTES;
		metadata_container_fields(&c, &pc.dev, &pc.pe);
	} else {
		struct piecemap_piece p = pm->pieces[r - 1 - nr_c];

		if (p.le >= m->nr_logical || extmap_get(m, p.le).dev == EXTMAP_NO_DEV ||
		    p.idx >= ppe || p.slot >= ppe || p.container >= nr_c)
			return 0;
		*off = METADATA_PIECES_HEADER + (size_t)nr_c * METADATA_CONTAINER_BYTES +
		       (size_t)(r - 1 - nr_c) * METADATA_PIECE_BYTES;
		metadata_piece_fields(&c, &p);
	}
	return c.pos;
}

/*
 * The pieces section, which starts at byte at of the record, as far as it
 * falls in the record's bytes [start, start + len), which out holds: a
 * block of the record or all of it.  -EINVAL as metadata_pieces_record().
 */
static int metadata_encode_pieces(const struct piecemap *pm, const struct extmap *m, size_t at,
				  unsigned char *out, size_t start, size_t len)
{
	uint64_t nr_records, r = 0;
	size_t pieces_at;

	if (!metadata_has_pieces(pm) || start + len <= at)
		return 0;
	nr_records = 1 + (uint64_t)pm->nr_containers + pm->nr_pieces;
	pieces_at = at + METADATA_PIECES_HEADER + (size_t)pm->nr_containers * METADATA_CONTAINER_BYTES;
	/* The first record that reaches into the window. */
	if (start >= pieces_at)
		r = 1 + pm->nr_containers + (start - pieces_at) / METADATA_PIECE_BYTES;
	else if (start >= at + METADATA_PIECES_HEADER)
		r = 1 + (start - at - METADATA_PIECES_HEADER) / METADATA_CONTAINER_BYTES;
	for (; r < nr_records; r++) {
		unsigned char rec[METADATA_PIECES_HEADER];
		size_t off, size = metadata_pieces_record(pm, m, r, rec, &off), from, to;

		if (!size)
			return -EINVAL;
		off += at;
		if (off >= start + len)
			break;
		from = off > start ? off : start;
		to = off + size < start + len ? off + size : start + len;
		memcpy(out + (from - start), rec + (from - off), to - from);
	}
	return 0;
}

static uint32_t metadata_record_version(const struct piecemap *pm)
{
	return metadata_has_pieces(pm) ? METADATA_VERSION_PIECES : METADATA_VERSION;
}

static bool metadata_pieces_match(const struct metadata_pool *p, const struct piecemap *pm)
{
	return !metadata_has_pieces(pm) ||
	       metadata_piece_size_valid(p->extent_size, pm->pieces_per_extent);
}

int metadata_pool_encode(const struct metadata_pool *p, const struct extmap *m,
			 const struct piecemap *pm, void *buf, size_t cap)
{
	struct metadata_codec c = { .out = buf, .pos = METADATA_SEAL_BYTES };
	struct metadata_pool copy;
	uint32_t nr_logical;
	uint64_t payload_len;
	size_t map_bytes;

	if (!p || !m || !buf || !metadata_pool_valid(p) || !metadata_map_matches(p, m) ||
	    !metadata_pieces_match(p, pm))
		return -EINVAL;
	map_bytes = metadata_pool_bytes(p->nr_devs, m->nr_logical);
	c.len = map_bytes + metadata_pieces_bytes(pm);
	if (cap < c.len)
		return -ENOSPC;
	copy = *p;
	nr_logical = m->nr_logical;
	payload_len = c.len - METADATA_SLOT_HEADER;
	memset(buf, 0, c.len);
	metadata_pool_fields(&c, &copy, &payload_len, &nr_logical);
	if (metadata_encode_entries(&c, m, 0) < 0 ||
	    metadata_encode_pieces(pm, m, map_bytes, buf, 0, c.len) < 0)
		return -EINVAL;
	metadata_seal(buf, c.len, METADATA_POOL_MAGIC, metadata_record_version(pm));
	return 0;
}

size_t metadata_pool_entry_offset(unsigned nr_devs, uint32_t le)
{
	return metadata_pool_bytes(nr_devs, 0) + (size_t)le * METADATA_ENTRY_BYTES;
}

int metadata_pool_encode_block(const struct metadata_pool *p, const struct extmap *m,
			       const struct piecemap *pm, size_t blk, void *block, size_t *len)
{
	struct metadata_codec c = { .out = block };
	size_t total, start, entries, map_bytes;
	uint32_t le;

	if (!p || !m || !block || !len || !metadata_pool_valid(p) || !metadata_map_matches(p, m) ||
	    !metadata_pieces_match(p, pm))
		return -EINVAL;
	map_bytes = metadata_pool_bytes(p->nr_devs, m->nr_logical);
	total = map_bytes + metadata_pieces_bytes(pm);
	entries = metadata_pool_entry_offset(p->nr_devs, 0);
	if (blk >= (total + METADATA_BLOCK - 1) / METADATA_BLOCK)
		return -EINVAL;
	start = blk * METADATA_BLOCK;
	c.len = total - start < METADATA_BLOCK ? total - start : METADATA_BLOCK;
	memset(block, 0, METADATA_BLOCK);
	if (blk == 0) {
		struct metadata_pool copy = *p;
		uint64_t payload_len = total - METADATA_SLOT_HEADER;
		uint32_t nr_logical = m->nr_logical;

		/* Every header fits in block 0: 16 devices' records are 928 bytes. */
		c.pos = METADATA_SEAL_BYTES;
		metadata_pool_fields(&c, &copy, &payload_len, &nr_logical);
		memcpy(block, METADATA_POOL_MAGIC, METADATA_MAGIC_BYTES);
		metadata_put_le((unsigned char *)block + METADATA_MAGIC_BYTES,
				metadata_record_version(pm), 4);
	}
	/* Entries are 8 bytes from an 8-aligned start: none straddles a block. */
	le = start > entries ? (uint32_t)((start - entries) / METADATA_ENTRY_BYTES) : 0;
	c.pos = entries + (size_t)le * METADATA_ENTRY_BYTES - start;
	if (start < map_bytes && (metadata_encode_entries(&c, m, le) < 0 || c.overrun))
		return -EINVAL;
	if (metadata_encode_pieces(pm, m, map_bytes, block, start, c.len) < 0)
		return -EINVAL;
	*len = c.len;
	return 0;
}

void metadata_pool_seal_crc(void *block0, uint32_t crc)
{
	metadata_put_le((unsigned char *)block0 + METADATA_CRC_OFFSET, crc, 4);
}

uint32_t metadata_pool_crc(const void *block0)
{
	return (uint32_t)metadata_get_le((const unsigned char *)block0 + METADATA_CRC_OFFSET, 4);
}

/* Entries le0 on, run_len of them from run: mapped in one step; -EUCLEAN for any refusal. */
static int metadata_map_run(struct extmap *m, uint32_t le0, struct extmap_loc run,
			    uint32_t run_len)
{
	int r;

	if (!run_len || run.dev == EXTMAP_NO_DEV)
		return 0;
	r = extmap_map_run(m, le0, run.dev, run.pe, run_len);
	return r == -ENOMEM ? r : r ? -EUCLEAN : 0;
}

/*
 * Rebuild the map through extmap_map_run(), which refuses out-of-range and
 * doubly used pe: entries that continue each other (one device, the next
 * pe) go in as one run.
 */
static int metadata_map_decode(struct metadata_codec *c, const struct metadata_pool *p,
			       struct extmap *m, uint32_t nr_logical)
{
	struct extmap_loc run = { .dev = EXTMAP_NO_DEV };
	uint32_t le0 = 0, run_len = 0;
	int r = extmap_init(m, nr_logical);

	for (unsigned i = 0; !r && i < p->nr_devs; i++)
		r = extmap_add_dev(m, p->devs[i].nr_pe, NULL);
	for (uint32_t le = 0; !r && le < nr_logical; le++) {
		struct extmap_loc loc = { 0 };

		metadata_codec_entry(c, &loc);
		if (loc.dev == EXTMAP_NO_DEV && loc.pe) {
			r = -EUCLEAN;
			break;
		}
		if (run_len && loc.dev == run.dev && loc.dev != EXTMAP_NO_DEV &&
		    loc.pe == run.pe + run_len) {
			run_len++;
			continue;
		}
		r = metadata_map_run(m, le0, run, run_len);
		run = loc;
		le0 = le;
		run_len = 1;
	}
	if (!r)
		r = metadata_map_run(m, le0, run, run_len);
	/* Redundant by construction; cheap, and it is what the header promises callers. */
	return r ? r : extmap_check(m, NULL);
}

/*
 * The pieces section after the map: containers claimed in m (a pe that is
 * mapped or out of range, or a container twice, is -EUCLEAN), pieces in
 * order of (le, piece), each of a mapped le, in a slot of its own.
 */
static int metadata_pieces_decode(struct metadata_codec *c, const struct metadata_pool *p,
				  struct extmap *m, struct piecemap *pm)
{
	uint32_t ppe = 0, nr_c = 0, nr_p = 0;
	int r;

	metadata_pieces_header_fields(c, &ppe, &nr_c, &nr_p);
	if (c->overrun || !nr_c || !metadata_piece_size_valid(p->extent_size, ppe) ||
	    c->len - c->pos != (uint64_t)nr_c * METADATA_CONTAINER_BYTES +
				       (uint64_t)nr_p * METADATA_PIECE_BYTES)
		return -EUCLEAN;
	r = piecemap_init(pm, ppe);
	if (!r)
		r = piecemap_reserve(pm, nr_p);
	for (uint32_t i = 0; !r && i < nr_c; i++) {
		uint16_t dev = 0;
		uint32_t pe = 0;

		metadata_container_fields(c, &dev, &pe);
		/* The claim refuses a pe mapped, out of range or a container already. */
		r = extmap_claim(m, dev, pe);
		if (!r)
			r = piecemap_append_container(pm, dev, pe, NULL);
		if (r && r != -ENOMEM)
			r = -EUCLEAN;
	}
	for (uint32_t i = 0; !r && i < nr_p; i++) {
		const struct piecemap_piece *prev = i ? &pm->pieces[i - 1] : NULL;
		struct piecemap_piece pc = { 0 };

		metadata_piece_fields(c, &pc);
		if ((prev && (pc.le < prev->le || (pc.le == prev->le && pc.idx <= prev->idx))) ||
		    extmap_get(m, pc.le).dev == EXTMAP_NO_DEV) {
			r = -EUCLEAN;
			break;
		}
		/* A slot out of range or another piece's is refused by the claim. */
		r = piecemap_claim_slot(pm, pc.container, pc.slot);
		if (!r)
			r = piecemap_place(pm, pc.le, pc.idx, pc.container, pc.slot);
		if (r && r != -ENOMEM)
			r = -EUCLEAN;
	}
	return r ? r : piecemap_check(pm, NULL);
}

int metadata_pool_peek(const void *buf, size_t len, uint64_t *generation, uint64_t *bytes)
{
	const unsigned char *b = buf;
	uint64_t payload_len;

	if (!buf)
		return -EINVAL;
	if (!metadata_has_magic(b, len, METADATA_POOL_MAGIC))
		return -ENOENT;
	if (len < METADATA_SLOT_HEADER)
		return -EUCLEAN;
	payload_len = metadata_get_le(b + METADATA_LENGTH_OFFSET, 8);
	/* No valid record is longer; and the sum below cannot wrap. */
	if (payload_len > metadata_pool_bytes64(METADATA_MAX_DEVS, UINT32_MAX) +
				  METADATA_PIECES_HEADER +
				  (uint64_t)UINT32_MAX * (METADATA_CONTAINER_BYTES + METADATA_PIECE_BYTES) -
				  METADATA_SLOT_HEADER)
		return -EUCLEAN;
	if (generation)
		*generation = metadata_get_le(b + METADATA_GENERATION_OFFSET, 8);
	if (bytes)
		*bytes = METADATA_SLOT_HEADER + payload_len;
	return 0;
}

int metadata_pool_decode(struct metadata_pool *p, struct extmap *m, struct piecemap *pm,
			 const void *buf, size_t len)
{
	struct metadata_codec c = { .in = buf, .pos = METADATA_SEAL_BYTES };
	uint64_t payload_len = 0, bytes;
	uint32_t nr_logical = 0;
	bool pieces;
	int r;

	if (!p || !m || !pm || !buf)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	memset(m, 0, sizeof(*m));
	memset(pm, 0, sizeof(*pm));
	r = metadata_pool_peek(buf, len, NULL, &bytes);
	if (r)
		goto out;
	r = -EUCLEAN;
	if (bytes > len)
		goto out;
	c.len = (size_t)bytes;
	r = metadata_unseal(buf, c.len, METADATA_VERSION_PIECES);
	if (r)
		goto out;
	pieces = metadata_get_le((const unsigned char *)buf + METADATA_MAGIC_BYTES, 4) ==
		 METADATA_VERSION_PIECES;
	r = -EUCLEAN;
	metadata_pool_fields(&c, p, &payload_len, &nr_logical);
	if (c.overrun || !metadata_pool_valid(p) ||
	    (pieces ? c.len < metadata_pool_bytes64(p->nr_devs, nr_logical)
		    : c.len != metadata_pool_bytes64(p->nr_devs, nr_logical)))
		goto out;
	/* The map's part of the record: then the pieces, if any, to the end. */
	c.len = (size_t)metadata_pool_bytes64(p->nr_devs, nr_logical);
	r = metadata_map_decode(&c, p, m, nr_logical);
	if (!r && pieces) {
		c.len = (size_t)bytes;
		r = metadata_pieces_decode(&c, p, m, pm);
	}
out:
	if (r) {
		piecemap_destroy(pm);
		extmap_destroy(m);
		memset(p, 0, sizeof(*p));
	}
	return r;
}

unsigned metadata_next_slot(const uint64_t gens[2])
{
	return gens[0] > gens[1] ? 1 : 0;
}

static int metadata_block_differs(const unsigned char *old, size_t old_len,
				  const unsigned char *cur, size_t len, size_t off)
{
	size_t n = len - off < METADATA_BLOCK ? len - off : METADATA_BLOCK;

	return off + n > old_len || memcmp(old + off, cur + off, n) != 0;
}

int metadata_next_change(const void *old, size_t old_len, const void *cur, size_t len,
			 size_t *off, size_t *run_len)
{
	size_t start = *off, end;

	if (!old)
		old_len = 0;
	while (start < len && !metadata_block_differs(old, old_len, cur, len, start))
		start += METADATA_BLOCK;
	if (start >= len)
		return 0;
	end = start;
	while (end < len && metadata_block_differs(old, old_len, cur, len, end))
		end += METADATA_BLOCK;
	*off = start;
	*run_len = (end < len ? end : len) - start;
	return 1;
}

void metadata_uuid_format(const uint8_t uuid[16], char out[37])
{
	static const char hex[] = "0123456789abcdef";
	char *o = out;

	for (unsigned i = 0; i < 16; i++) {
		/* Hyphens before bytes 4, 6, 8 and 10 give the 8-4-4-4-12 groups. */
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*o++ = '-';
		*o++ = hex[uuid[i] >> 4];
		*o++ = hex[uuid[i] & 0xf];
	}
	*o = '\0';
}

static int metadata_hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static bool metadata_uuid_hyphen_at(size_t i)
{
	return i == 8 || i == 13 || i == 18 || i == 23;
}

int metadata_uuid_parse(uint8_t uuid[16], const char *s)
{
	uint8_t got[16] = { 0 };
	unsigned nibble = 0;

	if (!uuid || !s || strnlen(s, METADATA_UUID_TEXT + 1) != METADATA_UUID_TEXT)
		return -EINVAL;
	for (size_t i = 0; i < METADATA_UUID_TEXT; i++) {
		int d = metadata_hex_digit(s[i]);

		if (metadata_uuid_hyphen_at(i)) {
			if (s[i] != '-')
				return -EINVAL;
			continue;
		}
		if (d < 0)
			return -EINVAL;
		got[nibble / 2] |= (uint8_t)(nibble % 2 ? d : d << 4);
		nibble++;
	}
	memcpy(uuid, got, sizeof(got));
	return 0;
}

/* ASCII by hand: isalnum() follows the locale, a name on disk must not. */
static bool metadata_name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || ch == '.' || ch == '+' || ch == '-';
}

int metadata_name_valid(const char *name)
{
	size_t len;

	if (!name || name[0] == '.' || name[0] == '-')
		return -EINVAL;
	/* Bounded: a name field read from a device may lack its NUL. */
	len = strnlen(name, METADATA_NAME_MAX + 1);
	if (!len || len > METADATA_NAME_MAX)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (!metadata_name_char(name[i]))
			return -EINVAL;
	return 0;
}
