/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ondisk: the superblock and metadata slots on every device, and the commit (docs/pools.md). */
#include "pool-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blockdev.h"
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
 * Read one slot; *gen is 0 when it holds nothing valid. With p and m, also
 * decode it (m initialised on success). With raw, a valid slot's bytes are
 * handed over (*raw_len of them) instead of freed.
 */
static int read_slot(int fd, const struct metadata_sb *sb, unsigned slot, uint64_t *gen,
		     struct metadata_pool *p, struct extmap *m, void **raw, size_t *raw_len)
{
	struct metadata_pool tmp_p;
	struct extmap tmp_m = { 0 };
	uint64_t len = sb->slot_bytes, peek_len;
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
	r = metadata_pool_peek(buf, METADATA_BLOCK, NULL, &peek_len);
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
	if (metadata_pool_decode(&tmp_p, &tmp_m, buf, len) < 0)
		goto out;
	if (memcmp(tmp_p.uuid, sb->pool_uuid, 16) != 0) {
		extmap_destroy(&tmp_m);
		goto out; /* left over from an earlier pool on this device */
	}
	*gen = tmp_p.generation;
	if (p && m) {
		*p = tmp_p;
		*m = tmp_m;
	} else {
		extmap_destroy(&tmp_m);
	}
	if (raw) {
		*raw = buf;
		*raw_len = len;
		buf = NULL;
	}
out:
	free(buf);
	return r;
}

int pool_read_slot(int fd, const struct metadata_sb *sb, unsigned slot, uint64_t *gen,
		   struct metadata_pool *p, struct extmap *m)
{
	return read_slot(fd, sb, slot, gen, p, m, NULL, NULL);
}

/* The newest two generations any slot's first block claims (0: none). */
static void slots_newest(const struct pool *p, uint64_t newest[2])
{
	void *block = block_alloc(METADATA_BLOCK);

	newest[0] = newest[1] = 0;
	for (unsigned i = 0; block && i < p->sp.meta.nr_devs; i++) {
		for (unsigned s = 0; p->fd[i] >= 0 && s < 2; s++) {
			uint64_t gen;

			if (blockdev_read(p->fd[i], p->sb[i].slot_offset[s], block, METADATA_BLOCK) < 0 ||
			    metadata_pool_peek(block, METADATA_BLOCK, &gen, NULL) < 0 ||
			    gen == newest[0] || gen == newest[1])
				continue;
			if (gen > newest[0]) {
				newest[1] = newest[0];
				newest[0] = gen;
			} else if (gen > newest[1]) {
				newest[1] = gen;
			}
		}
	}
	free(block);
}

/*
 * Keep raw as the image of generation gen, or check it against the one
 * kept: a slot of that generation is diffed against the image, so every
 * slot of it must hold the image's bytes. One that differs (it should not:
 * one encoding goes to every device) leaves the generation with no image,
 * and its slots are written whole.
 */
static void pool_image_keep(struct pool *p, unsigned k, uint64_t gen, void *raw, size_t len)
{
	struct pool_image *im = &p->image[k];

	if (im->gen != gen) {
		free(im->buf);
		*im = (struct pool_image){ .buf = raw, .len = len, .gen = gen };
		return;
	}
	if (im->buf && (im->len != len || memcmp(im->buf, raw, len) != 0)) {
		free(im->buf);
		im->buf = NULL;
		im->len = 0;
	}
	free(raw);
}

void pool_read_slots(struct pool *p)
{
	uint64_t newest[2];

	/*
	 * What activation reads anyway, kept: the first commit to each slot
	 * after a start writes only what changed, not the whole generation
	 * (tens of MB at 16 TiB, inside the stall).
	 */
	pool_images_drop(p);
	slots_newest(p, newest);
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		for (unsigned s = 0; s < 2; s++) {
			uint64_t *gen = &p->slot_gen[i][s];
			void *raw = NULL;
			size_t len = 0;

			*gen = 0;
			if (p->fd[i] < 0 ||
			    read_slot(p->fd[i], &p->sb[i], s, gen, NULL, NULL, &raw, &len) < 0 || !raw)
				continue;
			if (*gen && (*gen == newest[0] || *gen == newest[1]))
				pool_image_keep(p, *gen == newest[0] ? 0 : 1, *gen, raw, len);
			else
				free(raw);
		}
	}
	/* An image seen only in an untrusted form must not be found by its generation. */
	for (unsigned k = 0; k < 2; k++)
		if (!p->image[k].buf)
			p->image[k] = (struct pool_image){ 0 };
}

static const struct pool_image *pool_image_of(const struct pool *p, uint64_t gen)
{
	for (unsigned k = 0; k < 2; k++)
		if (gen && p->image[k].gen == gen)
			return &p->image[k];
	return NULL;
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

/*
 * Make each device's next slot a copy of the current generation where it
 * holds nothing a diff can use: a slot never written since the device
 * joined, or one of another layout (a device added or removed, the volume
 * grown). The next commit then writes what changed, not the whole
 * generation (420 MB a device at 200 TiB) inside the stall; this whole
 * write happens here, while the volume runs, once per such slot. Both
 * slots holding the current generation is as safe as one: a copy torn by
 * a crash fails its checksum and the other slot has it.
 * Returns the bytes written.
 */
ssize_t pool_commit_fill(struct pool *p, char *err, size_t err_len)
{
	const struct pool_image *cur = pool_image_of(p, p->sp.meta.generation);
	uint64_t cur_bytes, old_bytes;
	ssize_t written = 0;

	if (!cur || metadata_pool_peek(cur->buf, cur->len, NULL, &cur_bytes) < 0)
		return 0;
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		unsigned slot = metadata_next_slot(p->slot_gen[i]);
		const struct pool_image *old = pool_image_of(p, p->slot_gen[i][slot]);
		int r;

		/* A device behind the current generation is not one to copy it onto. */
		if (p->fd[i] < 0 || p->slot_gen[i][1 - slot] != cur->gen ||
		    cur->len > p->sb[i].slot_bytes)
			continue;
		if (old && metadata_pool_peek(old->buf, old->len, NULL, &old_bytes) == 0 &&
		    old_bytes == cur_bytes)
			continue;
		r = blockdev_write(p->fd[i], p->sb[i].slot_offset[slot], cur->buf, cur->len);
		if (r == 0)
			r = blockdev_flush(p->fd[i]);
		if (r < 0) {
			p->slot_gen[i][slot] = 0;
			return errbuf_fail(r, err, err_len, "%s: cannot write metadata: %s",
					   p->sp.paths[i], strerror(-r));
		}
		p->slot_gen[i][slot] = cur->gen;
		written += cur->len;
	}
	return written;
}

/*
 * Work out the next generation's commit while the volume still runs: the
 * encoded image (its checksum with it) and, for each device, the blocks
 * that differ from what its older slot holds. Both cost O(pool) in memory
 * traffic (35 MB at 16 TiB), and memory must not be allocated while I/O is
 * held: pool_commit_write then only writes and flushes.
 */
int pool_commit_prepare(struct pool *p, struct pool_prepared *c, char *err, size_t err_len)
{
	size_t bytes = metadata_pool_bytes(p->sp.meta.nr_devs, p->sp.map.nr_logical);
	size_t cap = 0;
	int r;

	*c = (struct pool_prepared){ .len = round_block(bytes) };
	c->buf = block_alloc(c->len);
	if (!c->buf)
		return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
	/* Encoded as the generation it will be; p says the current one until written. */
	p->sp.meta.generation++;
	r = metadata_pool_encode(&p->sp.meta, &p->sp.map, c->buf, c->len);
	c->gen = p->sp.meta.generation--;
	if (r < 0) {
		errbuf_set(err, err_len, "pool %s: cannot encode its metadata: %s", p->sp.meta.name,
			   strerror(-r));
		goto fail;
	}
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		unsigned slot = metadata_next_slot(p->slot_gen[i]);
		const struct pool_image *old = pool_image_of(p, p->slot_gen[i][slot]);
		size_t off = 0, run;

		if (c->len > p->sb[i].slot_bytes) {
			r = errbuf_fail(-ENOSPC, err, err_len,
					"%s: its metadata area is too small for %u extents",
					p->sp.paths[i], p->sp.map.nr_logical);
			goto fail;
		}
		c->slot[i] = slot;
		while (metadata_next_change(old ? old->buf : NULL, old ? old->len : 0, c->buf, c->len,
					    &off, &run)) {
			if (c->nr_runs == cap) {
				struct pool_write_run *v;

				cap = cap ? 2 * cap : 16;
				v = realloc(c->runs, cap * sizeof(*v));
				if (!v) {
					r = errbuf_fail(-ENOMEM, err, err_len, "out of memory");
					goto fail;
				}
				c->runs = v;
			}
			c->runs[c->nr_runs++] = (struct pool_write_run){ .dev = i, .off = off,
									 .len = run };
			off += run;
		}
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
	free(c->buf);
	free(c->runs);
	*c = (struct pool_prepared){ 0 };
}

/*
 * Write a prepared generation to every device, each into its older slot,
 * flushed; c's image becomes one the next commit diffs against. c is left
 * holding the image it replaced, for the caller to release once the volume
 * runs again: at 200 TiB that is a free of 400 MB, which has no business
 * inside a stall.
 */
int pool_commit_write(struct pool *p, struct pool_prepared *c, char *err, size_t err_len)
{
	size_t next = 0;
	unsigned k;
	void *replaced;
	int r;

	/* Prepared against another generation: its diff is against the wrong slots. */
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
					   (char *)c->buf + w->off, w->len);
			p->commit_bytes += w->len;
		}
		if (r == 0)
			r = blockdev_flush(p->fd[i]);
		if (r < 0) {
			/* Part written: neither generation is what that slot holds. */
			p->slot_gen[i][slot] = 0;
			pool_images_drop(p);
			errbuf_set(err, err_len, "%s: cannot write metadata: %s", p->sp.paths[i],
				   strerror(-r));
			/* Devices before this one hold the new generation: it is taken. */
			p->sp.meta.generation = c->gen;
			goto out;
		}
		p->slot_gen[i][slot] = c->gen;
	}
	p->sp.meta.generation = c->gen;
	/* Every device has it now; the older image is what no slot needs any more. */
	k = p->image[0].gen <= p->image[1].gen ? 0 : 1;
	replaced = p->image[k].buf;
	p->image[k] = (struct pool_image){ .buf = c->buf, .len = c->len, .gen = c->gen };
	c->buf = replaced;
	c->len = 0;
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
	return r;
}

int pool_commit_prepared(struct pool *p, struct pool_prepared *c, const uint32_t *changed,
			 size_t nr_changed, char *err, size_t err_len)
{
	int r = pool_commit_write(p, c, err, err_len);

	if (r < 0)
		return r;
	fault_point("commit-after-devices");
	r = pool_save_state(p, changed, nr_changed);
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
