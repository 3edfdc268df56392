/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ondisk: the superblock and metadata slots on every device, and the commit (docs/pools.md). */
#include "pool-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blockdev.h"
#include "clock.h"
#include "fault.h"

static void *block_alloc(size_t len)
{
	void *buf;

	if (posix_memalign(&buf, METADATA_BLOCK, len ? len : METADATA_BLOCK))
		return NULL;
	memset(buf, 0, len);
	return buf;
}

static uint64_t round_block(uint64_t n)
{
	return (n + METADATA_BLOCK - 1) / METADATA_BLOCK * METADATA_BLOCK;
}

int pool_read_sb(int fd, struct metadata_sb *sb)
{
	void *block = block_alloc(METADATA_BLOCK);
	int r;

	if (!block)
		return -ENOMEM;
	r = blockdev_read(fd, 0, block, METADATA_BLOCK);
	if (r == 0)
		r = metadata_sb_decode(sb, block);
	free(block);
	return r;
}

/*
 * Read one slot; *gen is 0 when it holds nothing valid. With p, m and pm,
 * also decode it (m and pm initialised on success; pm zeroed when the slot
 * has no pieces). A record that is intact but that this tierd cannot use
 * (a newer format) still gives its generation, so that an older one is
 * never taken for the newest, and -EPROTONOSUPPORT; so does one that could
 * not be decoded for want of memory, with -ENOMEM.
 */
static int read_slot(int fd, const struct metadata_sb *sb, unsigned slot, uint64_t *gen,
		     struct metadata_pool *p, struct extmap *m, struct piecemap *pm)
{
	struct metadata_pool tmp_p;
	struct extmap tmp_m = { 0 };
	struct piecemap tmp_pm = { 0 };
	uint64_t len = sb->slot_bytes, peek_len, peek_gen;
	void *buf;
	int r;

	*gen = 0;
	buf = block_alloc(METADATA_BLOCK);
	if (!buf)
		return -ENOMEM;
	/* Read only what the slot holds, not its whole capacity. */
	r = blockdev_read(fd, sb->slot_offset[slot], buf, METADATA_BLOCK);
	if (r < 0)
		goto out;
	r = metadata_pool_peek(buf, METADATA_BLOCK, &peek_gen, &peek_len);
	if (r < 0) {
		r = 0; /* empty or torn: not an error, just nothing here */
		goto out;
	}
	len = round_block(peek_len);
	if (len > sb->slot_bytes)
		goto out;
	if (len > METADATA_BLOCK) {
		free(buf);
		buf = block_alloc(len);
		if (!buf)
			return -ENOMEM;
		r = blockdev_read(fd, sb->slot_offset[slot], buf, len);
		if (r < 0)
			goto out;
	}
	r = metadata_pool_decode(&tmp_p, &tmp_m, &tmp_pm, buf, len);
	if ((r == -EPROTONOSUPPORT || r == -ENOMEM) && !memcmp((unsigned char *)buf + METADATA_POOL_UUID_OFFSET,
					     sb->pool_uuid, 16)) {
		*gen = peek_gen;
		goto out;
	}
	if (r < 0) {
		r = 0;
		goto out;
	}
	if (memcmp(tmp_p.uuid, sb->pool_uuid, 16) != 0) {
		extmap_destroy(&tmp_m);
		piecemap_destroy(&tmp_pm);
		goto out; /* left over from an earlier pool on this device */
	}
	*gen = tmp_p.generation;
	if (p && m && pm) {
		*p = tmp_p;
		*m = tmp_m;
		*pm = tmp_pm;
	} else {
		extmap_destroy(&tmp_m);
		piecemap_destroy(&tmp_pm);
	}
out:
	free(buf);
	return r;
}

const char *pool_slot_error(int r)
{
	return r == -EPROTONOSUPPORT ? "is of a format this tierd cannot use" : strerror(-r);
}

int pool_read_slot(int fd, const struct metadata_sb *sb, unsigned slot, uint64_t *gen,
		   struct metadata_pool *p, struct extmap *m, struct piecemap *pm)
{
	return read_slot(fd, sb, slot, gen, p, m, pm);
}

static size_t pool_record_bytes(const struct pool *p)
{
	return metadata_pool_bytes(p->sp.meta.nr_devs, p->sp.map.nr_logical) +
	       metadata_pieces_bytes(&p->sp.pieces);
}

/* Whether the pieces changed since p->known was summed: their blocks are to be written. */
static bool pool_pieces_changed(const struct pool *p)
{
	return p->sp.pieces.changes != p->known.pieces_changes;
}

/*
 * Whether p->known describes the map as it is now, but for the extents the
 * map marks dirty and the pieces when they changed: the pieces follow the
 * map in the record, so a change of them changes its tail and its length.
 */
static bool pool_known_current(const struct pool *p)
{
	const struct pool_known *k = &p->known;

	return k->gen && k->gen == p->sp.meta.generation && k->nr_devs == p->sp.meta.nr_devs &&
	       k->nr_logical == p->sp.map.nr_logical &&
	       (k->sum.len == pool_record_bytes(p) || pool_pieces_changed(p));
}

/* The first block the pieces touch: from it to the record's end a change of them rewrites. */
static uint32_t pool_pieces_first_block(const struct pool *p)
{
	return (uint32_t)(metadata_pool_bytes(p->sp.meta.nr_devs, p->sp.map.nr_logical) /
			  METADATA_BLOCK);
}

/* Drop the blocks at or past nr_blocks from a set: a record that shrank has none there. */
static void pool_set_truncate(struct slotsum_set *set, size_t nr_blocks)
{
	while (set->nr && set->blk[set->nr - 1] >= nr_blocks)
		set->nr--;
}

/*
 * The map's whole record as p->sp.meta numbers it, into rec (round_block(bytes)),
 * and its block sums into *s: one pass, the record's crc from the sums.
 */
static int pool_encode_whole(const struct pool *p, unsigned char *rec, size_t bytes,
			     struct slotsum *s)
{
	int r = slotsum_init(s, bytes);
	size_t len;

	for (size_t blk = 0; r == 0 && blk < s->nr_blocks; blk++) {
		unsigned char *block = rec + blk * METADATA_BLOCK;

		r = metadata_pool_encode_block(&p->sp.meta, &p->sp.map, &p->sp.pieces, blk, block, &len);
		if (r == 0)
			s->crc[blk] = slotsum_of(s, blk, block);
	}
	if (r < 0) {
		slotsum_destroy(s);
		return r;
	}
	metadata_pool_seal_crc(rec, slotsum_total(s));
	return 0;
}

/* Blocks of the record read and compared at a time: few seeks between two slots of an HDD. */
#define POOL_SCAN_BLOCKS 4096u

/* A slot read block by block against the record the map encodes. */
struct pool_scan_slot {
	unsigned dev, slot;
	uint64_t gen;
	unsigned char *head; /* its block 0 */
	uint32_t *crc;	     /* the sums of the blocks it differs in, in order */
	size_t crc_cap;
	bool failed;
};

/* Block blk of the slot differs from the record's: noted, with its sum (block 0's crc zero). */
static int pool_scan_note(struct pool *p, struct pool_scan_slot *sc, size_t blk,
			  const unsigned char *block)
{
	struct slotsum_set *set = &p->known.differs[sc->dev][sc->slot];
	int r = slotsum_set_add(set, (uint32_t)blk);

	if (r < 0)
		return r;
	if (set->nr > sc->crc_cap) {
		size_t cap = sc->crc_cap ? 2 * sc->crc_cap : 64;
		uint32_t *grown = reallocarray(sc->crc, cap, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		sc->crc = grown;
		sc->crc_cap = cap;
	}
	sc->crc[set->nr - 1] = slotsum_of(&p->known.sum, blk, block);
	return 0;
}

/*
 * Whether a slot's block 0 (a valid header) can be read against rec0, the
 * map's: a record of the same length, format and pool, and no newer (a
 * newer one is decoded whole, as the one activation may adopt).
 */
static bool pool_scan_fits(const struct pool *p, unsigned dev, const unsigned char *head,
			   const unsigned char *rec0, size_t bytes, uint64_t *gen)
{
	uint64_t len;

	return metadata_pool_peek(head, METADATA_BLOCK, gen, &len) == 0 && len == bytes &&
	       *gen <= p->sp.meta.generation && memcmp(head, rec0, 12) == 0 &&
	       memcmp(head + METADATA_POOL_UUID_OFFSET, p->sb[dev].pool_uuid, 16) == 0;
}

/*
 * Read every slot of every open device once, a stretch at a time, beside
 * the record the map encodes, which is never held whole (420 MB at 200
 * TiB): each slot of the same length is known with the blocks it differs
 * in, and whole (its generation counted) when its crc, combined from the
 * map's block sums and those of the blocks that differ, is the one it
 * carries. A slot that holds the map's very record is marked so, and
 * activation compares nothing more. Any other slot is decoded whole and
 * stays unknown: the first commit writes it the whole generation.
 */
void pool_read_slots(struct pool *p)
{
	struct pool_known *k = &p->known;
	struct pool_scan_slot scan[METADATA_MAX_DEVS * 2];
	size_t bytes = pool_record_bytes(p), len, nr_scan = 0;
	size_t stretch = round_block(bytes) / METADATA_BLOCK;
	unsigned char *rec = NULL, *raw = NULL, head0[METADATA_BLOCK];
	bool encoded = false;
	int r;

	pool_known_drop(p);
	memset(scan, 0, sizeof(scan));
	if (stretch > POOL_SCAN_BLOCKS)
		stretch = POOL_SCAN_BLOCKS;
	rec = block_alloc(stretch * METADATA_BLOCK);
	raw = block_alloc(stretch * METADATA_BLOCK);
	if (rec && raw && slotsum_init(&k->sum, bytes) == 0 &&
	    metadata_pool_encode_block(&p->sp.meta, &p->sp.map, &p->sp.pieces, 0, rec, &len) == 0) {
		encoded = true;
		k->sum.crc[0] = slotsum_of(&k->sum, 0, rec);
	}
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		for (unsigned s = 0; s < 2; s++) {
			struct pool_scan_slot *sc = &scan[nr_scan];
			uint64_t gen;

			p->slot_gen[i][s] = 0;
			p->slot_is_map[i][s] = false;
			if (p->fd[i] < 0)
				continue;
			*sc = (struct pool_scan_slot){ .dev = i, .slot = s };
			sc->head = block_alloc(METADATA_BLOCK);
			if (encoded && sc->head &&
			    blockdev_read(p->fd[i], p->sb[i].slot_offset[s], sc->head,
					  METADATA_BLOCK) == 0 &&
			    pool_scan_fits(p, i, sc->head, rec, bytes, &gen)) {
				sc->gen = gen;
				/* Block 0 as summed, its crc field zero: the map's is known only at the end. */
				memcpy(head0, sc->head, METADATA_BLOCK);
				metadata_pool_seal_crc(head0, 0);
				if (memcmp(head0, rec, slotsum_block_len(&k->sum, 0)))
					sc->failed = pool_scan_note(p, sc, 0, head0) < 0;
				if (!sc->failed) {
					nr_scan++;
					continue;
				}
			}
			free(sc->head);
			free(sc->crc);
			slotsum_set_free(&k->differs[i][s]);
			/* Not comparable: decoded whole for its generation, and unknown. */
			read_slot(p->fd[i], &p->sb[i], s, &p->slot_gen[i][s], NULL, NULL, NULL);
		}
	}
	for (size_t first = 1; encoded && first < k->sum.nr_blocks; first += stretch) {
		size_t n = k->sum.nr_blocks - first < stretch ? k->sum.nr_blocks - first : stretch;

		for (size_t b = 0; b < n; b++) {
			r = metadata_pool_encode_block(&p->sp.meta, &p->sp.map, &p->sp.pieces, first + b,
						       rec + b * METADATA_BLOCK, &len);
			if (r < 0) {
				encoded = false;
				break;
			}
			k->sum.crc[first + b] = slotsum_of(&k->sum, first + b,
							   rec + b * METADATA_BLOCK);
		}
		for (size_t i = 0; encoded && i < nr_scan; i++) {
			struct pool_scan_slot *sc = &scan[i];

			if (sc->failed)
				continue;
			if (blockdev_read(p->fd[sc->dev],
					  p->sb[sc->dev].slot_offset[sc->slot] + first * METADATA_BLOCK,
					  raw, n * METADATA_BLOCK) < 0) {
				sc->failed = true;
				continue;
			}
			for (size_t b = 0; b < n && !sc->failed; b++)
				if (memcmp(raw + b * METADATA_BLOCK, rec + b * METADATA_BLOCK,
					   slotsum_block_len(&k->sum, first + b)))
					sc->failed = pool_scan_note(p, sc, first + b,
								    raw + b * METADATA_BLOCK) < 0;
		}
	}
	if (encoded) {
		uint32_t total = slotsum_total(&k->sum);

		k->gen = p->sp.meta.generation;
		k->nr_devs = p->sp.meta.nr_devs;
		k->nr_logical = p->sp.map.nr_logical;
		k->pieces_changes = p->sp.pieces.changes;
		extmap_dirty_clear(&p->sp.map);
		for (size_t i = 0; i < nr_scan; i++) {
			struct pool_scan_slot *sc = &scan[i];
			struct slotsum_set *set = &k->differs[sc->dev][sc->slot];
			uint32_t carried = metadata_pool_crc(sc->head);

			/* A torn slot (its crc not what its blocks make) holds nothing. */
			if (sc->failed || carried != slotsum_total_with(&k->sum, set, sc->crc)) {
				slotsum_set_free(set);
				continue;
			}
			p->slot_gen[sc->dev][sc->slot] = sc->gen;
			k->slot[sc->dev][sc->slot] = true;
			p->slot_is_map[sc->dev][sc->slot] = !set->nr && carried == total &&
							    sc->gen == k->gen;
		}
	} else {
		pool_known_drop(p);
		/* Without the record nothing could be compared: every slot decoded whole. */
		for (size_t i = 0; i < nr_scan; i++)
			read_slot(p->fd[scan[i].dev], &p->sb[scan[i].dev], scan[i].slot,
				  &p->slot_gen[scan[i].dev][scan[i].slot], NULL, NULL, NULL);
	}
	for (size_t i = 0; i < nr_scan; i++) {
		free(scan[i].head);
		free(scan[i].crc);
	}
	free(rec);
	free(raw);
}

/*
 * What a new generation maps must be durable before any device holds it.
 * Copies (kcopyd's, the offline mover's) carry no flush, and each device's
 * flush covers only its own cache: without this, a power cut after device
 * 0's metadata flush leaves it mapping extents onto SSD blocks whose copy
 * was still in the SSD's cache (docs/migration.md).
 */
int pool_flush_devices(struct pool *p, char *err, size_t err_len)
{
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		int r = p->fd[i] >= 0 ? blockdev_flush(p->fd[i]) : 0;

		if (r < 0)
			return errbuf_fail(r, err, err_len, "%s: cannot flush its cache: %s",
					   p->sp.paths[i], strerror(-r));
	}
	return 0;
}

/* A slot with more blocks than this to catch up on is filled before a commit, not in it. */
#define POOL_FILL_BLOCKS 256

/*
 * Write blocks of the current generation, encoded from the map, to a slot:
 * those of set, or all of them with set NULL. Consecutive blocks go in one
 * write of up to POOL_FILL_BLOCKS; block 0 carries the record's crc from
 * the block sums. The map must be the current generation's (no dirty group).
 */
static int pool_write_current(struct pool *p, unsigned dev, unsigned slot,
			      const struct slotsum_set *set, size_t *written)
{
	const struct slotsum *sum = &p->known.sum;
	size_t nr = set ? set->nr : sum->nr_blocks, i = 0;
	unsigned char *buf = block_alloc((size_t)POOL_FILL_BLOCKS * METADATA_BLOCK);
	int r = buf ? 0 : -ENOMEM;

	while (r == 0 && i < nr) {
		size_t first = set ? set->blk[i] : i, n = 0, len;

		for (; r == 0 && i < nr && n < POOL_FILL_BLOCKS && (set ? set->blk[i] : i) == first + n;
		     i++, n++) {
			unsigned char *block = buf + n * METADATA_BLOCK;

			r = metadata_pool_encode_block(&p->sp.meta, &p->sp.map, &p->sp.pieces, first + n, block, &len);
			if (r == 0 && first + n == 0)
				metadata_pool_seal_crc(block, slotsum_total(sum));
		}
		if (r == 0)
			r = blockdev_write(p->fd[dev], p->sb[dev].slot_offset[slot] +
							   first * METADATA_BLOCK,
					   buf, n * METADATA_BLOCK);
		*written += n * METADATA_BLOCK;
	}
	free(buf);
	return r;
}

/*
 * Bring each device's next slot up to the current generation where the
 * commit could not write only what it changes: a slot never written since
 * the device joined, one of another layout (a device added or removed, the
 * volume grown), one far behind. The next commit then writes what changed,
 * not the whole generation (420 MB a device at 200 TiB) inside the stall;
 * this write happens here, while the volume runs, once per such slot. Only
 * onto a device whose other slot holds the current generation byte for
 * byte as the map encodes it, which is also the proof that what is written
 * here under that number is that generation: both slots holding it is as
 * safe as one, and a copy torn by a crash fails its checksum.
 * Returns the bytes written.
 */
ssize_t pool_commit_fill(struct pool *p, char *err, size_t err_len)
{
	struct pool_known *k = &p->known;
	size_t written = 0;

	/* After a start whose state lagged the devices, or a failed write: read the slots again. */
	if (!pool_known_current(p))
		pool_read_slots(p);
	if (!pool_known_current(p) || extmap_next_dirty(&p->sp.map, 0) != UINT32_MAX ||
	    pool_pieces_changed(p))
		return 0;
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		unsigned slot = metadata_next_slot(p->slot_gen[i]), other = 1 - slot;
		struct slotsum_set *differs = &k->differs[i][slot];
		int r;

		if (p->fd[i] < 0 || round_block(k->sum.len) > p->sb[i].slot_bytes ||
		    !k->slot[i][other] || k->differs[i][other].nr ||
		    p->slot_gen[i][other] != p->sp.meta.generation)
			continue;
		if (k->slot[i][slot] && differs->nr <= POOL_FILL_BLOCKS)
			continue;
		r = pool_write_current(p, i, slot, k->slot[i][slot] ? differs : NULL, &written);
		if (r == 0)
			r = blockdev_flush(p->fd[i]);
		if (r < 0) {
			p->slot_gen[i][slot] = 0;
			k->slot[i][slot] = false;
			slotsum_set_clear(differs);
			return errbuf_fail(r, err, err_len, "%s: cannot write metadata: %s",
					   p->sp.paths[i], strerror(-r));
		}
		p->slot_gen[i][slot] = p->sp.meta.generation;
		k->slot[i][slot] = true;
		slotsum_set_clear(differs);
	}
	return (ssize_t)written;
}

/* Where block blk of the new generation sits in c->buf (it must be there). */
static size_t pool_prepared_src(const struct pool_prepared *c, uint32_t blk, size_t *cursor)
{
	if (c->whole)
		return (size_t)blk * METADATA_BLOCK;
	while (c->blocks.blk[*cursor] != blk)
		(*cursor)++;
	return *cursor * METADATA_BLOCK;
}

static int pool_prepared_run(struct pool_prepared *c, size_t *cap, unsigned dev, size_t off,
			     size_t src, size_t len)
{
	struct pool_write_run *last = c->nr_runs ? &c->runs[c->nr_runs - 1] : NULL;

	if (last && last->dev == dev && last->off + last->len == off && last->src + last->len == src) {
		last->len += len;
		return 0;
	}
	if (c->nr_runs == *cap) {
		struct pool_write_run *v;

		*cap = *cap ? 2 * *cap : 16;
		v = reallocarray(c->runs, *cap, sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->runs = v;
	}
	c->runs[c->nr_runs++] = (struct pool_write_run){ .dev = dev, .off = off, .src = src,
							 .len = len };
	return 0;
}

/* Device dev's runs: the blocks of a ∪ b below nr_blocks, in order (b may be NULL). */
static int pool_prepared_runs(struct pool_prepared *c, size_t *cap, unsigned dev,
			      const struct slotsum_set *a, const struct slotsum_set *b,
			      size_t nr_blocks)
{
	size_t i = 0, j = 0, cursor = 0, nr_b = b ? b->nr : 0;
	int r = 0;

	while (r == 0 && (i < a->nr || j < nr_b)) {
		uint32_t x = i < a->nr ? a->blk[i] : UINT32_MAX;
		uint32_t y = j < nr_b ? b->blk[j] : UINT32_MAX;
		uint32_t blk = x < y ? x : y;

		i += x == blk;
		j += y == blk;
		if (blk >= nr_blocks)
			break;
		r = pool_prepared_run(c, cap, dev, (size_t)blk * METADATA_BLOCK,
				      pool_prepared_src(c, blk, &cursor), METADATA_BLOCK);
	}
	return r;
}

/*
 * The blocks the next generation changes: block 0 (its header), the map's
 * dirty groups, and when the pieces changed every block from the one where
 * the map ends to the new record's end (nr_blocks).
 */
static int pool_changed_blocks(const struct pool *p, struct slotsum_set *set, size_t nr_blocks)
{
	const struct extmap *m = &p->sp.map;
	int r = slotsum_set_add(set, 0);

	for (uint32_t g = extmap_next_dirty(m, 0); r == 0 && g != UINT32_MAX;
	     g = extmap_next_dirty(m, g + 1)) {
		uint32_t first = g * EXTMAP_DIRTY_GROUP, count = EXTMAP_DIRTY_GROUP;

		if (count > m->nr_logical - first)
			count = m->nr_logical - first;
		r = slotsum_set_add_entries(set, p->sp.meta.nr_devs, first, count);
	}
	if (pool_pieces_changed(p))
		for (size_t blk = pool_pieces_first_block(p); r == 0 && blk < nr_blocks; blk++)
			r = slotsum_set_add(set, (uint32_t)blk);
	return r;
}

/*
 * The new generation's blocks that go anywhere, encoded into c->buf back to
 * back, and its block sums: those of the current generation with the
 * changed blocks summed again.
 */
static int pool_prepare_blocks(struct pool *p, struct pool_prepared *c, size_t bytes)
{
	const struct pool_known *k = &p->known;
	size_t next_changed = 0, len;
	int r = slotsum_set_union(&c->blocks, &c->changed);

	for (unsigned i = 0; r == 0 && i < p->sp.meta.nr_devs; i++)
		r = slotsum_set_union(&c->blocks, &k->differs[i][c->slot[i]]);
	if (r == 0)
		r = slotsum_init(&c->sum, bytes);
	if (r < 0)
		return r;
	/*
	 * A slot may differ in blocks past a record the pieces shortened: they
	 * are not written. The sums before the pieces' first block stay; from
	 * it on every block is in changed when the length changed.
	 */
	pool_set_truncate(&c->blocks, c->sum.nr_blocks);
	memcpy(c->sum.crc, k->sum.crc,
	       (k->sum.nr_blocks < c->sum.nr_blocks ? k->sum.nr_blocks : c->sum.nr_blocks) *
		       sizeof(*c->sum.crc));
	c->len = c->blocks.nr * METADATA_BLOCK;
	c->buf = block_alloc(c->len);
	if (!c->buf)
		return -ENOMEM;
	for (size_t j = 0; r == 0 && j < c->blocks.nr; j++) {
		uint32_t blk = c->blocks.blk[j];
		unsigned char *block = (unsigned char *)c->buf + j * METADATA_BLOCK;

		r = metadata_pool_encode_block(&p->sp.meta, &p->sp.map, &p->sp.pieces, blk, block, &len);
		if (r == 0 && next_changed < c->changed.nr && c->changed.blk[next_changed] == blk) {
			c->sum.crc[blk] = slotsum_of(&c->sum, blk, block);
			next_changed++;
		}
	}
	if (r == 0)
		metadata_pool_seal_crc(c->buf, slotsum_total(&c->sum));
	return r;
}

/*
 * Work out the next generation's commit while the volume still runs: the
 * blocks that change and, for each device, the blocks its older slot needs
 * (those the generation changes and those in which the slot already
 * differed), encoded with the record's crc from the block sums; or, where
 * a slot's bytes are not known, the whole record. Memory must not be
 * allocated while I/O is held: pool_commit_write then only writes and
 * flushes. The cost follows the blocks that change, plus a pass over the
 * block sums (4 bytes per 512 extents), not the map.
 */
int pool_commit_prepare(struct pool *p, struct pool_prepared *c, char *err, size_t err_len)
{
	const struct pool_known *k = &p->known;
	size_t bytes = pool_record_bytes(p), cap = 0;
	int r = 0;

	*c = (struct pool_prepared){ .gen = p->sp.meta.generation + 1 };
	c->changed_known = pool_known_current(p);
	c->whole = !c->changed_known;
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		c->slot[i] = metadata_next_slot(p->slot_gen[i]);
		if (round_block(bytes) > p->sb[i].slot_bytes)
			return errbuf_fail(-ENOSPC, err, err_len,
					   "%s: its metadata area is too small for %u extents and %u"
					   " pieces of split extents", p->sp.paths[i],
					   p->sp.map.nr_logical, p->sp.pieces.nr_pieces);
		if (!k->slot[i][c->slot[i]])
			c->whole = true;
	}
	if (c->changed_known)
		r = pool_changed_blocks(p, &c->changed, round_block(bytes) / METADATA_BLOCK);
	/* Encoded as the generation it will be; p says the current one until written. */
	p->sp.meta.generation++;
	if (r < 0) {
		/* out of memory: said below */
	} else if (c->whole) {
		c->len = round_block(bytes);
		c->buf = block_alloc(c->len);
		r = c->buf ? pool_encode_whole(p, c->buf, bytes, &c->sum) : -ENOMEM;
	} else {
		r = pool_prepare_blocks(p, c, bytes);
	}
	p->sp.meta.generation--;
	if (r < 0) {
		errbuf_set(err, err_len, "pool %s: cannot encode its metadata: %s", p->sp.meta.name,
			   strerror(-r));
		goto fail;
	}
	for (unsigned i = 0; r == 0 && i < p->sp.meta.nr_devs; i++) {
		unsigned slot = c->slot[i], other = 1 - slot;

		if (c->changed_known && k->slot[i][slot])
			r = pool_prepared_runs(c, &cap, i, &c->changed, &k->differs[i][slot],
					       c->sum.nr_blocks);
		else
			r = pool_prepared_run(c, &cap, i, 0, 0, round_block(bytes));
		/* What the slot left as it is will differ in, once this generation is written. */
		c->other_known[i] = c->changed_known && k->slot[i][other];
		if (r == 0 && c->other_known[i])
			r = slotsum_set_union(&c->other[i], &k->differs[i][other]);
		if (r == 0 && c->other_known[i])
			r = slotsum_set_union(&c->other[i], &c->changed);
	}
	if (r < 0) {
		errbuf_set(err, err_len, "out of memory");
		goto fail;
	}
	return 0;
fail:
	pool_prepared_release(c);
	return r;
}

size_t pool_prepared_bytes(const struct pool_prepared *c)
{
	size_t bytes = 0;

	for (size_t i = 0; i < c->nr_runs; i++)
		bytes += c->runs[i].len;
	return bytes;
}

void pool_prepared_release(struct pool_prepared *c)
{
	if (!c)
		return;
	state_staged_abort(c->staged);
	free(c->buf);
	free(c->runs);
	slotsum_set_free(&c->blocks);
	slotsum_set_free(&c->changed);
	for (unsigned i = 0; i < METADATA_MAX_DEVS; i++)
		slotsum_set_free(&c->other[i]);
	slotsum_destroy(&c->sum);
	*c = (struct pool_prepared){ 0 };
}

/*
 * What the devices hold after c was written to all of them: generation
 * c->gen, the written slots exactly, the others in the blocks c says. Only
 * swaps and clears (nothing is allocated or freed: the volume is held);
 * c is left holding what it replaced.
 */
static void pool_known_committed(struct pool *p, struct pool_prepared *c)
{
	struct pool_known *k = &p->known;
	struct slotsum sum = k->sum;

	k->sum = c->sum;
	c->sum = sum;
	k->gen = c->gen;
	k->nr_devs = p->sp.meta.nr_devs;
	k->nr_logical = p->sp.map.nr_logical;
	k->pieces_changes = p->sp.pieces.changes;
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		unsigned slot = c->slot[i], other = 1 - slot;
		struct slotsum_set set = k->differs[i][other];

		k->slot[i][slot] = true;
		slotsum_set_clear(&k->differs[i][slot]);
		k->slot[i][other] = c->other_known[i];
		k->differs[i][other] = c->other[i];
		c->other[i] = set;
		if (!c->other_known[i])
			slotsum_set_clear(&k->differs[i][other]);
		pool_set_truncate(&k->differs[i][other], k->sum.nr_blocks);
	}
	extmap_dirty_clear(&p->sp.map);
}

/*
 * Write a prepared generation to every device, each into its older slot,
 * flushed. c is left holding what it replaced, for the caller to release
 * once the volume runs again.
 */
int pool_commit_write(struct pool *p, struct pool_prepared *c, char *err, size_t err_len)
{
	size_t next = 0;
	int r;

	/* Prepared against another generation: its blocks are against the wrong slots. */
	if (!c->buf || c->gen != p->sp.meta.generation + 1) {
		r = errbuf_fail(-ESTALE, err, err_len, "pool %s: internal error: a stale commit",
				p->sp.meta.name);
		goto out;
	}
	r = pool_flush_devices(p, err, err_len);
	if (r < 0)
		goto out;
	p->commit_bytes = 0;
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		unsigned slot = c->slot[i];

		if (i == 1)
			r = fault_fail("metadata-write-dev1");
		for (; r == 0 && next < c->nr_runs && c->runs[next].dev == i; next++) {
			const struct pool_write_run *w = &c->runs[next];

			r = blockdev_write(p->fd[i], p->sb[i].slot_offset[slot] + w->off,
					   (char *)c->buf + w->src, w->len);
			p->commit_bytes += w->len;
		}
		if (r == 0)
			r = blockdev_flush(p->fd[i]);
		if (r < 0) {
			/* Part written: neither generation is what that slot holds. */
			p->slot_gen[i][slot] = 0;
			pool_known_drop(p);
			errbuf_set(err, err_len, "%s: cannot write metadata: %s", p->sp.paths[i],
				   strerror(-r));
			/* Devices before this one hold the new generation: it is taken. */
			p->sp.meta.generation = c->gen;
			goto out;
		}
		p->slot_gen[i][slot] = c->gen;
	}
	p->sp.meta.generation = c->gen;
	pool_known_committed(p, c);
out:
	return r;
}

/*
 * Commit the in-memory pool to every device: generation + 1 into each
 * device's older slot, flushed. The caller then saves the state (same
 * generation); activation prefers whichever is newer.
 */
int pool_write_metadata(struct pool *p, char *err, size_t err_len)
{
	struct pool_prepared c;
	int r = pool_commit_prepare(p, &c, err, err_len);

	if (r == 0)
		r = pool_commit_write(p, &c, err, err_len);
	pool_prepared_release(&c);
	return r;
}

size_t pool_commit_bytes(const struct pool *p)
{
	return p->commit_bytes;
}

uint64_t pool_commit_state_ns(const struct pool *p)
{
	return p->commit_state_ns;
}

/*
 * Save the pool to the state: only the extents named while the state is
 * known to hold the rest, else (changed NULL, or after a failed save) all.
 */
int pool_save_state(struct pool *p, const uint32_t *changed, size_t nr_changed)
{
	int r = changed && !p->state_stale ?
			state_pool_save_extents(p->ps->state, &p->sp, changed, nr_changed) :
			state_pool_save(p->ps->state, &p->sp);

	p->state_stale = r < 0;
	if (r == 0)
		p->sp.pieces_saved = p->sp.pieces.changes;
	return r;
}

int pool_commit_stage(struct pool *p, struct pool_prepared *c, const uint32_t *changed,
		      size_t nr_changed, char *err, size_t err_len)
{
	int r = fault_fail("state-stage");

	if (r < 0)
		return errbuf_fail(r, err, err_len, "pool %s: cannot save the state: %s",
				   p->sp.meta.name, strerror(-r));
	r = state_pool_stage(p->ps->state, &p->sp, p->state_stale ? NULL : changed, nr_changed);
	if (r < 0)
		return errbuf_fail(r, err, err_len, "pool %s: cannot save the state: %s",
				   p->sp.meta.name, state_last_error(p->ps->state));
	c->staged = p->ps->state;
	return 0;
}

int pool_commit_prepared(struct pool *p, struct pool_prepared *c, const uint32_t *changed,
			 size_t nr_changed, char *err, size_t err_len)
{
	int r = pool_commit_write(p, c, err, err_len);
	uint64_t from;

	p->commit_state_ns = 0;
	if (r < 0)
		return r;
	fault_point("commit-after-devices");
	from = clock_now_ns();
	if (c->staged) {
		c->staged = NULL;
		r = state_staged_commit(p->ps->state, c->gen);
		p->state_stale = r < 0;
		/* Nothing changes the pieces between the stage and here: the volume is held. */
		if (r == 0)
			p->sp.pieces_saved = p->sp.pieces.changes;
	} else {
		r = pool_save_state(p, changed, nr_changed);
	}
	p->commit_state_ns = clock_now_ns() - from;
	/* The devices hold the new generation: activation adopts it even so. */
	if (r < 0)
		return pool_fail(p, r, err, err_len, "cannot save the state: %s",
				 state_last_error(p->ps->state));
	return 0;
}

int pool_commit(struct pool *p, const uint32_t *changed, size_t nr_changed, char *err,
		size_t err_len)
{
	struct pool_prepared c;
	int r = pool_commit_prepare(p, &c, err, err_len);

	if (r == 0)
		r = pool_commit_prepared(p, &c, changed, nr_changed, err, err_len);
	pool_prepared_release(&c);
	return r;
}

/* A new device's metadata area: the other slot emptied, then the superblock. */
int pool_format_device(int fd, const struct metadata_sb *sb, char *err, size_t err_len,
		       const char *path)
{
	void *block = block_alloc(METADATA_BLOCK);
	int r;

	if (!block)
		return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
	/* Empty slots: a stale generation from an earlier pool must never win. */
	r = blockdev_write(fd, sb->slot_offset[0], block, METADATA_BLOCK);
	if (r == 0)
		r = blockdev_write(fd, sb->slot_offset[1], block, METADATA_BLOCK);
	if (r == 0)
		r = metadata_sb_encode(sb, block);
	if (r == 0)
		r = blockdev_write(fd, 0, block, METADATA_BLOCK);
	if (r == 0)
		r = blockdev_flush(fd);
	free(block);
	if (r < 0)
		return errbuf_fail(r, err, err_len, "%s: cannot write the superblock: %s", path,
				   strerror(-r));
	return 0;
}

int pool_wipe_device(int fd, const struct metadata_sb *sb)
{
	void *block = block_alloc(METADATA_BLOCK);
	int r;

	if (!block)
		return -ENOMEM;
	r = blockdev_write(fd, 0, block, METADATA_BLOCK);
	if (r == 0)
		r = blockdev_write(fd, sb->slot_offset[0], block, METADATA_BLOCK);
	if (r == 0)
		r = blockdev_write(fd, sb->slot_offset[1], block, METADATA_BLOCK);
	if (r == 0)
		r = blockdev_flush(fd);
	free(block);
	return r;
}
