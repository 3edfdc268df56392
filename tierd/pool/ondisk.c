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
 * decode it (m initialised on success).
 */
int pool_read_slot(int fd, const struct metadata_sb *sb, unsigned slot, uint64_t *gen,
		   struct metadata_pool *p, struct extmap *m)
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
out:
	free(buf);
	return r;
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
 * Commit the in-memory pool to every device: generation + 1 into each
 * device's older slot, flushed. The caller then saves the state (same
 * generation); activation prefers whichever is newer.
 */
int pool_write_metadata(struct pool *p, char *err, size_t err_len)
{
	size_t bytes = metadata_pool_bytes(p->sp.meta.nr_devs, p->sp.map.nr_logical);
	size_t len = round_block(bytes);
	unsigned k;
	void *buf;
	int r = 0;

	r = pool_flush_devices(p, err, err_len);
	if (r < 0)
		return r;
	buf = block_alloc(len);
	if (!buf)
		return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
	p->sp.meta.generation++;
	r = metadata_pool_encode(&p->sp.meta, &p->sp.map, buf, len);
	if (r < 0) {
		p->sp.meta.generation--;
		errbuf_set(err, err_len, "pool %s: cannot encode its metadata: %s", p->sp.meta.name,
			   strerror(-r));
		goto out;
	}
	p->commit_bytes = 0;
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		unsigned slot = metadata_next_slot(p->slot_gen[i]);
		const struct pool_image *old = pool_image_of(p, p->slot_gen[i][slot]);
		size_t off = 0, run;

		if (len > p->sb[i].slot_bytes) {
			r = errbuf_fail(-ENOSPC, err, err_len,
					"%s: its metadata area is too small for %u extents",
					p->sp.paths[i], p->sp.map.nr_logical);
			goto out;
		}
		if (i == 1)
			r = fault_fail("metadata-write-dev1");
		while (r == 0 && metadata_next_change(old ? old->buf : NULL, old ? old->len : 0, buf,
						      len, &off, &run)) {
			r = blockdev_write(p->fd[i], p->sb[i].slot_offset[slot] + off,
					   (char *)buf + off, run);
			p->commit_bytes += run;
			off += run;
		}
		if (r == 0)
			r = blockdev_flush(p->fd[i]);
		if (r < 0) {
			/* Part written: neither generation is what that slot holds. */
			p->slot_gen[i][slot] = 0;
			pool_images_drop(p);
			errbuf_set(err, err_len, "%s: cannot write metadata: %s", p->sp.paths[i],
				   strerror(-r));
			goto out;
		}
		p->slot_gen[i][slot] = p->sp.meta.generation;
	}
	/* Every device has it now; the older image is what no slot needs any more. */
	k = p->image[0].gen <= p->image[1].gen ? 0 : 1;
	free(p->image[k].buf);
	p->image[k] = (struct pool_image){ .buf = buf, .len = len, .gen = p->sp.meta.generation };
	buf = NULL;
out:
	free(buf);
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

int pool_commit(struct pool *p, const uint32_t *changed, size_t nr_changed, char *err,
		size_t err_len)
{
	int r = pool_write_metadata(p, err, err_len);

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
