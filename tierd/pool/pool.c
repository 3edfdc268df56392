#include "pool.h"

#include <dirent.h>
#include <linux/dm-ioctl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#include "blockdev.h"
#include "dmctl.h"
#include "devload.h"
#include "dmtable.h"
#include "fault.h"
#include "iostats.h"
#include "log.h"
#include "metadata.h"
#include "migrate.h"
#include "planner.h"
#include "size.h"
#include "ucopy.h"

#define SECTOR 512u
/* Keep at least this many free extents per device for migration (docs/pools.md). */
#define POOL_RESERVE_MIN 2u
#define POOL_RESERVE_MAX 64u
/* Room in every metadata slot: a pool may grow to twice its size (attach). */
#define POOL_SLOT_MIN_EXTENTS 65536u

struct pool_job;

struct pool {
	struct state_pool sp;
	struct pools *ps;
	struct pool *next;
	int active;
	struct pool_job *job; /* a long operation in progress */
	uint32_t dm_major, dm_minor; /* the volume's, while active */
	char broken[POOL_ERR_MAX]; /* why the pool takes no more moves, "" if it does */
	/* Heat (docs/heat.md): the volume's dm-stats region and what it told. */
	struct heat_table heat;
	struct statsparse_area *sample; /* one per extent, reused by every sample */
	uint64_t stats_region;
	int stats_on;
	char stats_off[POOL_ERR_MAX];
	uint64_t stats_kernel_bytes, stats_limit_bytes;
	struct state_tier_io io[2]; /* not yet stored: [METADATA_TIER_*] */
	int64_t io_minute;
	uint32_t heat_flushed; /* the chunked flush has stored extents below this */
	/* Per device, while the pool is open: O_DIRECT fd, superblock, slot generations. */
	int fd[METADATA_MAX_DEVS];
	struct metadata_sb sb[METADATA_MAX_DEVS];
	uint64_t slot_gen[METADATA_MAX_DEVS][2];
	/*
	 * The last two generations this process wrote to every device: a slot
	 * that slot_gen says holds one of them gets only the blocks that
	 * differ, so a commit's I/O follows the extents it changed, not the
	 * pool's size.  Dropped when a write fails or the devices close.
	 */
	struct pool_image {
		void *buf;
		size_t len;
		uint64_t gen;
	} image[2];
	size_t commit_bytes; /* written to the devices by the last metadata write */
};

struct pools {
	struct state *state;
	struct pool *list;
	struct heat_params heat;
	bool verify; /* compare every copy with its source before committing it */
};

static void pool_stats_start(struct pool *p);
static const char *tier_name_of(enum metadata_tier tier);

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
	return 0;
}

/* Sets err and returns r: `return failf(r, err, len, ...)`. */
#define failf(r, err, len, ...) (fail((err), (len), __VA_ARGS__), (r))

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

static struct pool *pool_new(void)
{
	struct pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	for (unsigned i = 0; i < METADATA_MAX_DEVS; i++)
		p->fd[i] = -1;
	return p;
}

static void pool_images_drop(struct pool *p)
{
	for (unsigned k = 0; k < 2; k++) {
		free(p->image[k].buf);
		p->image[k] = (struct pool_image){ 0 };
	}
}

/* Closed devices may change under us: what their slots hold is known no more. */
static void pool_close_devices(struct pool *p)
{
	for (unsigned i = 0; i < METADATA_MAX_DEVS; i++) {
		if (p->fd[i] >= 0)
			close(p->fd[i]);
		p->fd[i] = -1;
	}
	pool_images_drop(p);
}

static void pool_free(struct pool *p)
{
	if (!p)
		return;
	pool_close_devices(p);
	state_pool_destroy(&p->sp);
	heat_table_destroy(&p->heat);
	free(p->sample);
	free(p);
}

static void pools_link(struct pools *ps, struct pool *p)
{
	p->ps = ps;
	p->next = ps->list;
	ps->list = p;
}

static void pools_unlink(struct pools *ps, struct pool *p)
{
	for (struct pool **i = &ps->list; *i; i = &(*i)->next) {
		if (*i == p) {
			*i = p->next;
			return;
		}
	}
}

struct pool *pools_find(struct pools *ps, const char *name)
{
	for (struct pool *p = ps->list; p; p = p->next)
		if (strcmp(p->sp.meta.name, name) == 0)
			return p;
	return NULL;
}

const char *pool_name(const struct pool *p)
{
	return p->sp.meta.name;
}

static struct pool *pools_find_uuid(struct pools *ps, const uint8_t uuid[16])
{
	for (struct pool *p = ps->list; p; p = p->next)
		if (memcmp(p->sp.meta.uuid, uuid, 16) == 0)
			return p;
	return NULL;
}

int pools_open(struct pools **out, struct state *st, char *err, size_t err_len)
{
	struct state_pool **loaded = NULL;
	struct pools *ps;
	size_t nr = 0;
	int r;

	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	ps->state = st;
	heat_params_default(&ps->heat);
	r = state_pool_load_all(st, &loaded, &nr);
	if (r < 0) {
		free(ps);
		return failf(r, err, err_len, "cannot load pools: %s", state_last_error(st));
	}
	for (size_t i = 0; i < nr; i++) {
		struct pool *p = pool_new();

		if (!p) {
			state_pool_destroy(loaded[i]);
		} else {
			p->sp = *loaded[i];
			pools_link(ps, p);
			/* Heat survives restarts; what cannot be read starts cold. */
			if (heat_table_init(&p->heat, p->sp.map.nr_logical) == 0 &&
			    state_heat_load(st, p->sp.id, &p->heat) < 0)
				log_warn("pool %s: stored heat unreadable, starting cold: %s",
					 p->sp.meta.name, state_last_error(st));
		}
		free(loaded[i]);
	}
	free(loaded);
	*out = ps;
	return 0;
}

void pools_close(struct pools *ps)
{
	if (!ps)
		return;
	while (ps->list) {
		struct pool *p = ps->list;

		ps->list = p->next;
		pool_free(p);
	}
	free(ps);
}

static void dm_uuid(const struct pool *p, char out[64])
{
	char uuid[37];

	metadata_uuid_format(p->sp.meta.uuid, uuid);
	snprintf(out, 64, "TIERD-%s", uuid);
}

/* ---- the volume ---------------------------------------------------------- */

int pool_dm_devs(const struct pool *p, struct dmtable_dev *devs, char *err, size_t err_len)
{
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		struct stat st;

		if (stat(p->sp.paths[i], &st) < 0)
			return failf(-errno, err, err_len, "%s: %s", p->sp.paths[i], strerror(errno));
		devs[i].major = major(st.st_rdev);
		devs[i].minor = minor(st.st_rdev);
		devs[i].data_start = p->sp.meta.devs[i].data_start / SECTOR;
	}
	return 0;
}

struct extmap *pool_extmap(struct pool *p)
{
	return &p->sp.map;
}

uint64_t pool_extent_sectors(const struct pool *p)
{
	return p->sp.meta.extent_size / SECTOR;
}

static int pool_table(const struct pool *p, struct dmtable *t, char *err, size_t err_len)
{
	struct dmtable_dev devs[METADATA_MAX_DEVS];
	int r;

	r = pool_dm_devs(p, devs, err, err_len);
	if (r < 0)
		return r;
	r = dmtable_build(t, &p->sp.map, devs, pool_extent_sectors(p));
	if (r < 0)
		return failf(r, err, err_len, "pool %s: cannot build its table: %s",
			     p->sp.meta.name, strerror(-r));
	return 0;
}

/* The table as dmctl takes it; params point into *text (free both). */
static int pool_targets(const struct dmtable *t, struct dmctl_target **targets, char **text)
{
	const size_t width = 160;
	struct dmctl_target *v;
	char *buf;

	v = calloc(t->nr ? t->nr : 1, sizeof(*v));
	buf = calloc(t->nr ? t->nr : 1, width);
	if (!v || !buf) {
		free(v);
		free(buf);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->nr; i++) {
		int r = dmtable_params(&t->t[i], buf + i * width, width);

		if (r < 0) {
			free(v);
			free(buf);
			return r;
		}
		v[i].start = t->t[i].start;
		v[i].len = t->t[i].len;
		v[i].type = dmtable_type(&t->t[i]);
		v[i].params = buf + i * width;
	}
	*targets = v;
	*text = buf;
	return 0;
}

static const char *dm_reason(int r)
{
	return *dmctl_last_error() ? dmctl_last_error() : strerror(-r);
}

/* Create the volume (create) or load t into its inactive slot. */
static int pool_send_table(struct pool *p, const struct dmtable *t, int create, char *err,
			   size_t err_len)
{
	struct dmctl_target *targets = NULL;
	char *text = NULL, uuid[64];
	int r;

	r = pool_targets(t, &targets, &text);
	if (r < 0)
		return failf(r, err, err_len, "pool %s: %s", p->sp.meta.name, strerror(-r));
	if (create) {
		dm_uuid(p, uuid);
		r = dmctl_create(p->sp.meta.name, uuid, targets, t->nr);
		if (r < 0)
			fail(err, err_len, "cannot create /dev/mapper/%s: %s", p->sp.meta.name,
			     dm_reason(r));
	} else {
		r = dmctl_load(p->sp.meta.name, targets, t->nr);
		if (r < 0)
			fail(err, err_len, "cannot load a table into /dev/mapper/%s: %s",
			     p->sp.meta.name, dm_reason(r));
	}
	free(targets);
	free(text);
	return r;
}

int pool_load_inactive(struct pool *p, const struct dmtable *t, char *err, size_t err_len)
{
	return pool_send_table(p, t, 0, err, err_len);
}

/* Create the volume, or load the map's table into a live one and swap it in. */
static int pool_load_table(struct pool *p, int create, char *err, size_t err_len)
{
	struct dmtable t = { 0 };
	int r;

	r = pool_table(p, &t, err, err_len);
	if (r < 0)
		return r;
	/* Load before suspending: nothing may allocate while the volume is suspended. */
	r = pool_send_table(p, &t, create, err, err_len);
	if (r < 0 || create)
		goto out;
	/*
	 * noflush: a mirror left by a stopped tierd may hold a write one leg
	 * refused; requeued, it reaches the new table instead of failing.
	 */
	r = dmctl_suspend(p->sp.meta.name, 0);
	if (r == 0)
		r = dmctl_resume(p->sp.meta.name);
	if (r < 0) {
		fail(err, err_len, "cannot switch /dev/mapper/%s to its new table: %s",
		     p->sp.meta.name, dm_reason(r));
		dmctl_clear(p->sp.meta.name);
		dmctl_resume(p->sp.meta.name);
	}
out:
	dmtable_destroy(&t);
	return r;
}

/* ---- on-device metadata ---------------------------------------------------- */

static int read_sb(int fd, struct metadata_sb *sb)
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
static int read_slot(int fd, const struct metadata_sb *sb, unsigned slot, uint64_t *gen,
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
 * Commit the in-memory pool to every device: generation + 1 into each
 * device's older slot, flushed. The caller then saves the state (same
 * generation); activation prefers whichever is newer.
 */
static int pool_write_metadata(struct pool *p, char *err, size_t err_len)
{
	size_t bytes = metadata_pool_bytes(p->sp.meta.nr_devs, p->sp.map.nr_logical);
	size_t len = round_block(bytes);
	unsigned k;
	void *buf;
	int r = 0;

	buf = block_alloc(len);
	if (!buf)
		return failf(-ENOMEM, err, err_len, "out of memory");
	p->sp.meta.generation++;
	r = metadata_pool_encode(&p->sp.meta, &p->sp.map, buf, len);
	if (r < 0) {
		p->sp.meta.generation--;
		fail(err, err_len, "pool %s: cannot encode its metadata: %s", p->sp.meta.name,
		     strerror(-r));
		goto out;
	}
	p->commit_bytes = 0;
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		unsigned slot = metadata_next_slot(p->slot_gen[i]);
		const struct pool_image *old = pool_image_of(p, p->slot_gen[i][slot]);
		size_t off = 0, run;

		if (len > p->sb[i].slot_bytes) {
			r = failf(-ENOSPC, err, err_len, "%s: its metadata area is too small for %u extents",
				  p->sp.paths[i], p->sp.map.nr_logical);
			goto out;
		}
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
			fail(err, err_len, "%s: cannot write metadata: %s", p->sp.paths[i], strerror(-r));
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

int pool_commit(struct pool *p, const uint32_t *changed, size_t nr_changed, char *err,
		size_t err_len)
{
	int r = pool_write_metadata(p, err, err_len);

	if (r < 0)
		return r;
	fault_point("commit-after-devices");
	r = changed ? state_pool_save_extents(p->ps->state, &p->sp, changed, nr_changed) :
		      state_pool_save(p->ps->state, &p->sp);
	/* The devices hold the new generation: activation adopts it even so. */
	if (r < 0)
		return failf(r, err, err_len, "pool %s: cannot save the state: %s", p->sp.meta.name,
			     state_last_error(p->ps->state));
	return 0;
}

/* A new device's metadata area: the other slot emptied, then the superblock. */
static int format_device(int fd, const struct metadata_sb *sb, char *err, size_t err_len,
			 const char *path)
{
	void *block = block_alloc(METADATA_BLOCK);
	int r;

	if (!block)
		return failf(-ENOMEM, err, err_len, "out of memory");
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
		return failf(r, err, err_len, "%s: cannot write the superblock: %s", path, strerror(-r));
	return 0;
}

static int wipe_device(int fd, const struct metadata_sb *sb)
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

/* ---- finding and checking devices ------------------------------------------ */

static int open_direct(const char *path, int *fd)
{
	*fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	return *fd < 0 ? -errno : 0;
}

/* Open path if it is this pool's device dev (by superblock). */
static int try_device(struct pool *p, unsigned dev, const char *path)
{
	struct metadata_sb sb;
	int fd, r;

	r = open_direct(path, &fd);
	if (r < 0)
		return r;
	r = read_sb(fd, &sb);
	if (r == 0 && (memcmp(sb.pool_uuid, p->sp.meta.uuid, 16) != 0 ||
		       memcmp(sb.dev_uuid, p->sp.meta.devs[dev].uuid, 16) != 0))
		r = -ENODEV;
	if (r < 0) {
		close(fd);
		return r;
	}
	p->fd[dev] = fd;
	p->sb[dev] = sb;
	if (path != p->sp.paths[dev]) /* snprintf onto its own argument is undefined */
		snprintf(p->sp.paths[dev], sizeof(p->sp.paths[dev]), "%s", path);
	return 0;
}

/* Device names move between boots (loop0, md127...): look at every block device. */
static int scan_for_device(struct pool *p, unsigned dev)
{
	DIR *d = opendir("/sys/class/block");
	struct dirent *e;
	int r = -ENODEV;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char path[PATH_MAX];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/dev/%s", e->d_name);
		if (try_device(p, dev, path) == 0) {
			r = 0;
			break;
		}
	}
	closedir(d);
	return r;
}

static int pool_open_devices(struct pool *p, char *err, size_t err_len)
{
	char uuid[37];

	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		if (p->fd[i] >= 0)
			continue;
		if (try_device(p, i, p->sp.paths[i]) == 0)
			continue;
		if (scan_for_device(p, i) == 0) {
			log_info("pool %s: device %u is now %s", p->sp.meta.name, i, p->sp.paths[i]);
			continue;
		}
		metadata_uuid_format(p->sp.meta.devs[i].uuid, uuid);
		pool_close_devices(p);
		return failf(-ENODEV, err, err_len,
			     "pool %s: its %s device %s (last seen at %s) is missing",
			     p->sp.meta.name,
			     p->sp.meta.devs[i].tier == METADATA_TIER_SSD ? "SSD" : "HDD", uuid,
			     p->sp.paths[i]);
	}
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++)
		for (unsigned s = 0; s < 2; s++)
			read_slot(p->fd[i], &p->sb[i], s, &p->slot_gen[i][s], NULL, NULL);
	return 0;
}

/*
 * Switch p to the device list of newer metadata: an attach or a detach that
 * stopped between the devices' commit and the state's added or dropped one.
 * Devices kept keep their open fd; a new one is found by its uuid.
 */
static int pool_take_devices(struct pool *p, const struct metadata_pool *meta, char *err,
			     size_t err_len)
{
	struct pool *next = pool_new();
	int reused[METADATA_MAX_DEVS] = { 0 }, from_p[METADATA_MAX_DEVS];
	char uuid[37];

	if (!next)
		return failf(-ENOMEM, err, err_len, "out of memory");
	next->sp.meta = *meta;
	for (unsigned i = 0; i < meta->nr_devs; i++) {
		unsigned j;

		for (j = 0; j < p->sp.meta.nr_devs &&
			    memcmp(p->sp.meta.devs[j].uuid, meta->devs[i].uuid, 16); j++)
			;
		from_p[i] = j < p->sp.meta.nr_devs ? (int)j : -1;
		if (from_p[i] >= 0) {
			next->fd[i] = p->fd[j];
			next->sb[i] = p->sb[j];
			memcpy(next->slot_gen[i], p->slot_gen[j], sizeof(next->slot_gen[i]));
			memcpy(next->sp.paths[i], p->sp.paths[j], sizeof(next->sp.paths[i]));
			reused[j] = 1;
		} else if (scan_for_device(next, i) < 0) {
			metadata_uuid_format(meta->devs[i].uuid, uuid);
			for (unsigned k = 0; k < i; k++)
				if (from_p[k] < 0)
					close(next->fd[k]);
			for (unsigned k = 0; k < METADATA_MAX_DEVS; k++)
				next->fd[k] = -1; /* the rest belong to p */
			pool_free(next);
			return failf(-ENODEV, err, err_len,
				     "pool %s: its newest metadata names device %s, which is missing",
				     p->sp.meta.name, uuid);
		} else {
			for (unsigned slot = 0; slot < 2; slot++)
				read_slot(next->fd[i], &next->sb[i], slot, &next->slot_gen[i][slot], NULL,
					  NULL);
			log_info("pool %s: %s joins from the newest metadata", p->sp.meta.name,
				 next->sp.paths[i]);
		}
	}
	for (unsigned j = 0; j < p->sp.meta.nr_devs; j++) {
		if (reused[j] || p->fd[j] < 0)
			continue;
		log_info("pool %s: %s left the pool in the newest metadata", p->sp.meta.name,
			 p->sp.paths[j]);
		close(p->fd[j]);
	}
	p->sp.meta = *meta;
	for (unsigned i = 0; i < METADATA_MAX_DEVS; i++) {
		p->fd[i] = next->fd[i];
		p->sb[i] = next->sb[i];
		memcpy(p->slot_gen[i], next->slot_gen[i], sizeof(p->slot_gen[i]));
		memcpy(p->sp.paths[i], next->sp.paths[i], sizeof(p->sp.paths[i]));
		next->fd[i] = -1;
	}
	pool_free(next);
	return 0;
}

/*
 * The devices are written before the state, so after a crash between the two
 * a device may hold a newer generation: it is complete, adopt it.
 */
static int pool_adopt_newer_metadata(struct pool *p, char *err, size_t err_len)
{
	uint64_t best = p->sp.meta.generation;
	unsigned best_dev = 0, best_slot = 0;
	struct metadata_pool meta;
	struct extmap map;
	uint64_t gen;
	int r;

	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		for (unsigned s = 0; s < 2; s++) {
			if (p->slot_gen[i][s] > best) {
				best = p->slot_gen[i][s];
				best_dev = i;
				best_slot = s;
			}
		}
	}
	if (best == p->sp.meta.generation)
		return 0;
	r = read_slot(p->fd[best_dev], &p->sb[best_dev], best_slot, &gen, &meta, &map);
	if (r < 0 || gen != best)
		return failf(r < 0 ? r : -EIO, err, err_len, "pool %s: cannot re-read metadata on %s",
			     p->sp.meta.name, p->sp.paths[best_dev]);
	log_warn("pool %s: metadata generation %llu on %s is newer than the state's %llu; using it",
		 p->sp.meta.name, (unsigned long long)best, p->sp.paths[best_dev],
		 (unsigned long long)p->sp.meta.generation);
	r = pool_take_devices(p, &meta, err, err_len);
	if (r < 0) {
		extmap_destroy(&map);
		return r;
	}
	extmap_destroy(&p->sp.map);
	p->sp.map = map;
	r = state_pool_save(p->ps->state, &p->sp);
	if (r < 0)
		return failf(r, err, err_len, "pool %s: cannot save the state: %s", p->sp.meta.name,
			     state_last_error(p->ps->state));
	return 0;
}

/* ---- activation -------------------------------------------------------------- */

static int tables_equal(const struct dmtable *a, const struct dmtable *b)
{
	return a->nr == b->nr && memcmp(a->t, b->t, a->nr * sizeof(*a->t)) == 0;
}

/*
 * tierd restarted while the volume stayed live: keep it if its table is what
 * the map says, else load the map's table (the map is what was committed).
 */
static int pool_adopt_live_volume(struct pool *p, int suspended, char *err, size_t err_len)
{
	struct dmtable want = { 0 }, have = { 0 };
	char *text = NULL, uuid[DM_UUID_LEN], ours[64];
	int r;

	/* Anything but our own uuid, read back whole, is someone else's volume. */
	r = dmctl_uuid(p->sp.meta.name, uuid, sizeof(uuid));
	dm_uuid(p, ours);
	if (r < 0 || strcmp(uuid, ours) != 0)
		return failf(-EEXIST, err, err_len,
			     "/dev/mapper/%s exists but is not pool %s's volume (dm uuid '%s')",
			     p->sp.meta.name, p->sp.meta.name, r < 0 ? "unreadable" : uuid);
	r = pool_table(p, &want, err, err_len);
	if (r < 0)
		return r;
	/* An inactive table a stopped tierd loaded (a mirror table, say) must never be resumed into. */
	dmctl_clear(p->sp.meta.name);
	r = dmctl_table(p->sp.meta.name, &text);
	if (r == 0)
		r = dmtable_parse(&have, text);
	if (r == 0 && tables_equal(&want, &have) && suspended) {
		/* tierd stopped between a suspend and its resume: I/O waits on us. */
		log_warn("pool %s: volume found suspended; resuming it", p->sp.meta.name);
		dmctl_clear(p->sp.meta.name);
		r = dmctl_resume(p->sp.meta.name);
		if (r < 0)
			fail(err, err_len, "cannot resume /dev/mapper/%s: %s", p->sp.meta.name,
			     dm_reason(r));
	} else if (r == 0 && tables_equal(&want, &have)) {
		log_info("pool %s: volume already active with the expected table", p->sp.meta.name);
	} else {
		log_warn("pool %s: the live table differs from the extent map; loading the map's",
			 p->sp.meta.name);
		r = pool_load_table(p, 0, err, err_len);
	}
	free(text);
	dmtable_destroy(&want);
	dmtable_destroy(&have);
	return r;
}

/*
 * Intents left by a stop or crash mid-move: the map adopted at activation
 * says where each extent is (moved if the commit reached a device, else still
 * on its source, which stayed authoritative). Either way the intent is done.
 */
static void pool_settle_intents(struct pools *ps, struct pool *p)
{
	struct state_intent *v;
	size_t nr, completed = 0;

	if (state_intents_load(ps->state, p->sp.id, &v, &nr) < 0) {
		log_warn("pool %s: cannot read its migration intents: %s", p->sp.meta.name,
			 state_last_error(ps->state));
		return;
	}
	for (size_t i = 0; i < nr; i++) {
		struct extmap_loc loc = extmap_get(&p->sp.map, v[i].le);

		completed += loc.dev == v[i].dst_dev && loc.pe == v[i].dst_pe;
	}
	if (nr)
		log_info("pool %s: %zu moves were in flight when tierd stopped: %zu had committed,"
			 " %zu rolled back (their source extents stayed authoritative)",
			 p->sp.meta.name, nr, completed, nr - completed);
	free(v);
	if (nr && state_intents_clear(ps->state, p->sp.id, NULL) < 0)
		log_warn("pool %s: cannot clear its migration intents: %s", p->sp.meta.name,
			 state_last_error(ps->state));
}

int pool_activate(struct pools *ps, struct pool *p, char *err, size_t err_len)
{
	struct dmctl_info info;
	uint32_t bad_le;
	int r;

	if (p->active)
		return 0;
	r = pool_open_devices(p, err, err_len);
	if (r < 0)
		return r;
	r = pool_adopt_newer_metadata(p, err, err_len);
	if (r < 0)
		goto fail;
	r = extmap_check(&p->sp.map, &bad_le);
	if (r < 0) {
		fail(err, err_len, "pool %s: its extent map is inconsistent (extent %u); not activating",
		     p->sp.meta.name, bad_le);
		goto fail;
	}
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++)
		state_pool_set_path(ps->state, p->sp.id, i, p->sp.paths[i]);
	r = dmctl_info(p->sp.meta.name, &info);
	if (r < 0) {
		fail(err, err_len, "cannot query /dev/mapper/%s: %s", p->sp.meta.name, strerror(-r));
		goto fail;
	}
	r = info.exists ? pool_adopt_live_volume(p, info.suspended, err, err_len) :
			  pool_load_table(p, 1, err, err_len);
	if (r < 0)
		goto fail;
	if (dmctl_info(p->sp.meta.name, &info) == 0 && info.exists) {
		p->dm_major = info.major;
		p->dm_minor = info.minor;
	}
	pool_settle_intents(ps, p);
	p->active = 1;
	pool_stats_start(p);
	if (!p->sp.want_active) {
		p->sp.want_active = 1;
		state_pool_set_want_active(ps->state, p->sp.id, 1);
	}
	return 0;
fail:
	pool_close_devices(p);
	return r;
}

void pools_activate_all(struct pools *ps)
{
	char err[POOL_ERR_MAX];

	for (struct pool *p = ps->list; p; p = p->next) {
		if (!p->sp.want_active)
			continue;
		if (pool_activate(ps, p, err, sizeof(err)) < 0)
			log_err("%s", err);
		else
			log_info("pool %s active: /dev/mapper/%s", p->sp.meta.name, p->sp.meta.name);
	}
}

int pool_deactivate(struct pools *ps, struct pool *p, char *err, size_t err_len)
{
	struct dmctl_info info;
	int r;

	r = dmctl_info(p->sp.meta.name, &info);
	if (r == 0 && info.exists) {
		if (info.open_count > 0)
			return failf(-EBUSY, err, err_len,
				     "/dev/mapper/%s is in use (%u open handles); unmount it first",
				     p->sp.meta.name, info.open_count);
		r = dmctl_remove(p->sp.meta.name, 0);
		if (r < 0)
			return failf(r, err, err_len, "cannot remove /dev/mapper/%s: %s", p->sp.meta.name,
				     *dmctl_last_error() ? dmctl_last_error() : strerror(-r));
	}
	pool_close_devices(p);
	p->active = 0;
	p->stats_on = 0; /* the region went with the device */
	p->sp.want_active = 0;
	r = state_pool_set_want_active(ps->state, p->sp.id, 0);
	if (r < 0)
		log_warn("pool %s: cannot record it as inactive: %s", p->sp.meta.name,
			 state_last_error(ps->state));
	return 0;
}

/* ---- new devices --------------------------------------------------------------- */

struct new_dev {
	const char *path;
	struct blockdev_info info;
	int fd; /* exclusive while formatting */
	struct metadata_sb sb;
};

static void new_dev_close(struct new_dev *nd)
{
	if (nd->fd >= 0)
		close(nd->fd);
	nd->fd = -1;
}

static int pool_has_dev_uuid(const struct pool *p, const uint8_t uuid[16])
{
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++)
		if (memcmp(p->sp.meta.devs[i].uuid, uuid, 16) == 0)
			return 1;
	return 0;
}

/*
 * Everything that makes a device unfit is found here, before anything is
 * written anywhere. attach_to: the pool an SSD is being attached to (its own
 * superblock left by an interrupted attach is no obstacle).
 */
static int check_new_device(struct pools *ps, const char *path, bool force,
			    const struct pool *attach_to, struct new_dev *nd, char *err,
			    size_t err_len)
{
	char holders[256];
	int r;

	nd->path = path;
	nd->fd = -1;
	if (path[0] != '/')
		return failf(-EINVAL, err, err_len, "%s: give the device as an absolute path", path);
	r = blockdev_probe(path, &nd->info);
	if (r == -ENOENT)
		return failf(r, err, err_len, "%s: no such device", path);
	if (r == -ENOTBLK)
		return failf(r, err, err_len, "%s: not a block device", path);
	if (r < 0)
		return failf(r, err, err_len, "%s: cannot examine it: %s", path, strerror(-r));
	if (strcmp(nd->info.signature, "tierd") == 0) {
		struct metadata_sb sb = { .pool_name = "?" };
		struct pool *owner = NULL;
		int fd;

		if (open_direct(path, &fd) == 0) {
			if (read_sb(fd, &sb) == 0)
				owner = pools_find_uuid(ps, sb.pool_uuid);
			close(fd);
		}
		if (owner && pool_has_dev_uuid(owner, sb.dev_uuid))
			return failf(-EBUSY, err, err_len, "%s already belongs to pool %s", path,
				     owner->sp.meta.name);
		/* Left by an attach or detach of that pool that did not finish. */
		if (owner && owner != attach_to && !force)
			return failf(-EEXIST, err, err_len,
				     "%s carries a leftover superblock of pool %s, which does not use"
				     " it; use --force to overwrite it", path, owner->sp.meta.name);
		if (!owner && !force)
			return failf(-EEXIST, err, err_len,
				     "%s belongs to tierd pool '%s', unknown here: import it with"
				     " 'tierctl pool import', or use --force to overwrite it",
				     path, sb.pool_name);
	} else if (nd->info.signature[0] && !force) {
		if (strncmp(nd->info.signature, "pt:", 3) == 0)
			return failf(-EEXIST, err, err_len,
				     "%s has a %s partition table; use --force to overwrite it", path,
				     nd->info.signature + 3);
		return failf(-EEXIST, err, err_len, "%s has a %s signature; use --force to overwrite it",
			     path, nd->info.signature);
	}
	r = blockdev_open_exclusive(path, O_RDWR | O_DIRECT | O_CLOEXEC, &nd->fd);
	if (r == -EBUSY) {
		if (blockdev_holders(path, holders, sizeof(holders)) == 0 && holders[0])
			return failf(r, err, err_len, "%s is in use (held by %s)", path, holders);
		return failf(r, err, err_len, "%s is in use (mounted or open by another program)",
			     path);
	}
	if (r < 0)
		return failf(r, err, err_len, "%s: cannot open it: %s", path, strerror(-r));
	return 0;
}

/* Checked before the exclusive opens, which would otherwise report "in use". */
static int same_device(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && S_ISBLK(sa.st_mode) &&
	       sa.st_rdev == sb.st_rdev;
}

/* Lay out nd for a pool whose metadata holds max_logical extents. */
static int layout_new_device(struct new_dev *nd, uint64_t extent_size, uint32_t max_logical,
			     char *err, size_t err_len)
{
	char have[SIZE_FORMAT_MAX], need[SIZE_FORMAT_MAX], ext[SIZE_FORMAT_MAX];
	struct metadata_sb probe;
	int r;

	r = metadata_layout(&nd->sb, nd->info.size, nd->info.logical_block_size, extent_size,
			    max_logical);
	if (r == -ENOSPC) {
		/* The metadata area does not depend on the device's size: ask for a big one. */
		uint64_t min = 0;

		if (metadata_layout(&probe, UINT64_C(1) << 50, nd->info.logical_block_size,
				    extent_size, max_logical) == 0)
			min = probe.data_start + METADATA_MIN_PE * extent_size;
		return failf(r, err, err_len,
			     "%s is too small (%s): with %s extents a pool device needs at least %s",
			     nd->path, size_format(nd->info.size, have, sizeof(have)),
			     size_format(extent_size, ext, sizeof(ext)),
			     size_format(min, need, sizeof(need)));
	}
	if (r < 0)
		return failf(r, err, err_len, "%s: cannot lay out the metadata: %s", nd->path,
			     strerror(-r));
	return 0;
}

static uint32_t reserve_for(uint32_t nr_pe)
{
	uint32_t r = nr_pe / 200;

	if (r < POOL_RESERVE_MIN)
		r = POOL_RESERVE_MIN;
	if (r > POOL_RESERVE_MAX)
		r = POOL_RESERVE_MAX;
	return r;
}

static void fill_dev(struct metadata_dev *d, const struct new_dev *nd, enum metadata_tier tier)
{
	memcpy(d->uuid, nd->sb.dev_uuid, 16);
	d->tier = tier;
	d->nr_pe = nd->sb.nr_pe;
	d->reserve_pe = reserve_for(nd->sb.nr_pe);
	d->logical_block_size = nd->info.logical_block_size;
	d->data_start = nd->sb.data_start;
	d->size_bytes = nd->info.size;
}

static int random_uuid(uint8_t uuid[16])
{
	if (getrandom(uuid, 16, 0) != 16)
		return -errno;
	uuid[6] = (uuid[6] & 0x0f) | 0x40; /* RFC 4122 version 4 */
	uuid[8] = (uuid[8] & 0x3f) | 0x80;
	return 0;
}

/* Map logical extents from le onwards to dev's pe 0.. (count of them). */
static int map_run(struct extmap *m, uint32_t le, unsigned dev, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++) {
		int r = extmap_map(m, le + i, dev, i);

		if (r < 0)
			return r;
	}
	return 0;
}

/* After formatting with exclusive fds, the pool keeps plain ones: the kernel's
 * table claims the devices exclusively itself. */
static int pool_reopen_device(struct pool *p, unsigned dev, struct new_dev *nd, char *err,
			      size_t err_len)
{
	int r;

	new_dev_close(nd);
	if (p->fd[dev] >= 0)
		close(p->fd[dev]);
	p->fd[dev] = -1;
	r = open_direct(nd->path, &p->fd[dev]);
	if (r < 0)
		return failf(r, err, err_len, "%s: cannot reopen it: %s", nd->path, strerror(-r));
	return 0;
}

/* A new pool whose devices are written: into the state, its volume created, heat on. */
static int pool_register(struct pools *ps, struct pool *p, char *err, size_t err_len)
{
	int r = state_pool_insert(ps->state, &p->sp);

	if (r < 0)
		return failf(r, err, err_len, "pool %s: cannot save the state: %s", p->sp.meta.name,
			     state_last_error(ps->state));
	r = pool_load_table(p, 1, err, err_len);
	if (r < 0) {
		state_pool_delete(ps->state, p->sp.id);
		return r;
	}
	p->active = 1;
	pools_link(ps, p);
	if (heat_table_init(&p->heat, p->sp.map.nr_logical) == 0)
		pool_stats_start(p);
	return 0;
}

int pool_create(struct pools *ps, const struct pool_create_args *a, struct pool **out, char *err,
		size_t err_len)
{
	struct new_dev nd[2] = { { .fd = -1 }, { .fd = -1 } };
	unsigned nr = a->ssd ? 2 : 1;
	uint64_t extent = a->extent_size ? a->extent_size : POOL_DEFAULT_EXTENT_SIZE;
	uint64_t total_pe = 0;
	uint32_t max_logical, usable[2] = { 0, 0 }, nr_logical;
	struct dmctl_info info;
	struct pool *p = NULL;
	int r;

	if (metadata_name_valid(a->name) < 0)
		return failf(-EINVAL, err, err_len,
			     "invalid pool name '%s': use 1 to %d of A-Z a-z 0-9 _ . + -, not"
			     " starting with '.' or '-'", a->name, METADATA_NAME_MAX);
	if (pools_find(ps, a->name))
		return failf(-EEXIST, err, err_len, "a pool named %s already exists", a->name);
	if (dmctl_info(a->name, &info) == 0 && info.exists)
		return failf(-EEXIST, err, err_len, "a device-mapper device named %s already exists",
			     a->name);
	if (extent < METADATA_ALIGN || extent > (UINT64_C(1) << 30) || (extent & (extent - 1)))
		return failf(-EINVAL, err, err_len,
			     "invalid extent size %llu: a power of two from 1 MiB to 1 GiB",
			     (unsigned long long)extent);
	if (a->ssd && same_device(a->hdd, a->ssd))
		return failf(-EINVAL, err, err_len, "%s and %s are the same device", a->hdd, a->ssd);
	r = check_new_device(ps, a->hdd, a->force, NULL, &nd[0], err, err_len);
	if (r < 0)
		goto out;
	if (a->ssd) {
		r = check_new_device(ps, a->ssd, a->force, NULL, &nd[1], err, err_len);
		if (r < 0)
			goto out;
		if (nd[0].info.logical_block_size != nd[1].info.logical_block_size) {
			r = failf(-EINVAL, err, err_len,
				  "logical block sizes differ: %s has %u bytes, %s %u; tierd needs"
				  " equal ones (see docs/pools.md)", a->hdd,
				  nd[0].info.logical_block_size, a->ssd, nd[1].info.logical_block_size);
			goto out;
		}
	}
	for (unsigned i = 0; i < nr; i++)
		total_pe += nd[i].info.size / extent;
	max_logical = total_pe * 2 > POOL_SLOT_MIN_EXTENTS ?
			      (total_pe * 2 > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)(total_pe * 2)) :
			      POOL_SLOT_MIN_EXTENTS;
	for (unsigned i = 0; i < nr; i++) {
		r = layout_new_device(&nd[i], extent, max_logical, err, err_len);
		if (r < 0)
			goto out;
	}

	r = -ENOMEM;
	p = pool_new();
	if (!p)
		goto out;
	r = random_uuid(p->sp.meta.uuid);
	if (r < 0)
		goto out;
	snprintf(p->sp.meta.name, sizeof(p->sp.meta.name), "%s", a->name);
	p->sp.meta.extent_size = extent;
	p->sp.meta.flags = a->ssd ? METADATA_POOL_SSD_GROWS : 0;
	p->sp.meta.created = (uint64_t)time(NULL);
	p->sp.meta.nr_devs = nr;
	p->sp.want_active = 1;
	for (unsigned i = 0; i < nr; i++) {
		r = random_uuid(nd[i].sb.dev_uuid);
		if (r < 0)
			goto out;
		memcpy(nd[i].sb.pool_uuid, p->sp.meta.uuid, 16);
		snprintf(nd[i].sb.pool_name, sizeof(nd[i].sb.pool_name), "%s", a->name);
		fill_dev(&p->sp.meta.devs[i], &nd[i], i ? METADATA_TIER_SSD : METADATA_TIER_HDD);
		usable[i] = p->sp.meta.devs[i].nr_pe - p->sp.meta.devs[i].reserve_pe;
		snprintf(p->sp.paths[i], sizeof(p->sp.paths[i]), "%s", nd[i].path);
		p->sb[i] = nd[i].sb;
	}
	/* The HDD holds the start of the volume, the SSD its end; tiering sorts them out. */
	nr_logical = usable[0] + usable[1];
	r = extmap_init(&p->sp.map, nr_logical);
	for (unsigned i = 0; r == 0 && i < nr; i++) {
		unsigned dev;

		r = extmap_add_dev(&p->sp.map, p->sp.meta.devs[i].nr_pe, &dev);
	}
	if (r == 0)
		r = map_run(&p->sp.map, 0, 0, usable[0]);
	if (r == 0 && nr == 2)
		r = map_run(&p->sp.map, usable[0], 1, usable[1]);
	if (r < 0) {
		fail(err, err_len, "pool %s: cannot build its extent map: %s", a->name, strerror(-r));
		goto out;
	}

	/* From here on devices are written. */
	for (unsigned i = 0; i < nr; i++) {
		r = format_device(nd[i].fd, &nd[i].sb, err, err_len, nd[i].path);
		if (r < 0)
			goto unformat;
		p->fd[i] = nd[i].fd;
	}
	r = pool_write_metadata(p, err, err_len);
	for (unsigned i = 0; i < nr; i++)
		p->fd[i] = -1; /* still owned by nd[i] */
	if (r < 0)
		goto unformat;
	for (unsigned i = 0; i < nr; i++) {
		r = pool_reopen_device(p, i, &nd[i], err, err_len);
		if (r < 0)
			goto unformat;
	}
	r = pool_register(ps, p, err, err_len);
	if (r < 0)
		goto unformat;
	*out = p;
	return 0;
unformat:
	for (unsigned i = 0; i < nr; i++) {
		int fd = p->fd[i] >= 0 ? p->fd[i] : nd[i].fd;

		if (fd >= 0 && wipe_device(fd, &nd[i].sb) < 0)
			log_err("%s: cannot wipe the superblock written a moment ago", nd[i].path);
	}
out:
	for (unsigned i = 0; i < 2; i++)
		new_dev_close(&nd[i]);
	pool_free(p);
	return r;
}

/* ---- import ---------------------------------------------------------------------- */

int pool_import(struct pools *ps, const char *const *paths, size_t nr, struct pool **out,
		char *err, size_t err_len)
{
	struct metadata_sb sb[METADATA_MAX_DEVS];
	int fd[METADATA_MAX_DEVS];
	uint64_t gen[METADATA_MAX_DEVS][2], best = 0;
	unsigned best_dev = 0, best_slot = 0;
	struct pool *p = NULL;
	struct dmctl_info info;
	char uuid[37];
	int r = 0;

	if (nr == 0 || nr > METADATA_MAX_DEVS)
		return failf(-EINVAL, err, err_len, "give every device of the pool (1 to %d)",
			     METADATA_MAX_DEVS);
	for (size_t i = 0; i < nr; i++)
		fd[i] = -1;
	for (size_t i = 0; i < nr; i++) {
		r = open_direct(paths[i], &fd[i]);
		if (r < 0) {
			fail(err, err_len, "%s: %s", paths[i],
			     r == -ENOENT ? "no such device" : strerror(-r));
			goto out;
		}
		r = read_sb(fd[i], &sb[i]);
		if (r < 0) {
			fail(err, err_len, "%s: %s", paths[i],
			     r == -ENOENT ? "no tierd superblock" : "damaged tierd superblock");
			goto out;
		}
		if (memcmp(sb[i].pool_uuid, sb[0].pool_uuid, 16) != 0) {
			r = failf(-EINVAL, err, err_len, "%s belongs to pool %s, %s to pool %s", paths[0],
				  sb[0].pool_name, paths[i], sb[i].pool_name);
			goto out;
		}
		for (size_t j = 0; j < i; j++) {
			if (memcmp(sb[i].dev_uuid, sb[j].dev_uuid, 16) == 0) {
				r = failf(-EINVAL, err, err_len, "%s and %s are the same device",
					  paths[j], paths[i]);
				goto out;
			}
		}
		for (unsigned s = 0; s < 2; s++) {
			read_slot(fd[i], &sb[i], s, &gen[i][s], NULL, NULL);
			if (gen[i][s] > best) {
				best = gen[i][s];
				best_dev = (unsigned)i;
				best_slot = s;
			}
		}
	}
	if (pools_find_uuid(ps, sb[0].pool_uuid)) {
		r = failf(-EEXIST, err, err_len, "pool %s is already known to this tierd",
			  sb[0].pool_name);
		goto out;
	}
	if (best == 0) {
		r = failf(-EUCLEAN, err, err_len, "pool %s: no valid metadata on any device given",
			  sb[0].pool_name);
		goto out;
	}
	r = -ENOMEM;
	p = pool_new();
	if (!p)
		goto out;
	r = read_slot(fd[best_dev], &sb[best_dev], best_slot, &best, &p->sp.meta, &p->sp.map);
	if (r < 0 || best == 0) {
		r = failf(r < 0 ? r : -EIO, err, err_len, "%s: cannot re-read its metadata",
			  paths[best_dev]);
		goto out;
	}
	/* Every device the newest metadata names must be here; nothing else may be. */
	for (unsigned d = 0; d < p->sp.meta.nr_devs; d++) {
		size_t i;

		for (i = 0; i < nr && memcmp(sb[i].dev_uuid, p->sp.meta.devs[d].uuid, 16); i++)
			;
		if (i == nr) {
			metadata_uuid_format(p->sp.meta.devs[d].uuid, uuid);
			r = failf(-ENODEV, err, err_len,
				  "pool %s needs its %s device %s, which is not among those given",
				  p->sp.meta.name,
				  p->sp.meta.devs[d].tier == METADATA_TIER_SSD ? "SSD" : "HDD", uuid);
			goto out;
		}
		snprintf(p->sp.paths[d], sizeof(p->sp.paths[d]), "%s", paths[i]);
		p->fd[d] = fd[i];
		fd[i] = -1;
		p->sb[d] = sb[i];
		p->slot_gen[d][0] = gen[i][0];
		p->slot_gen[d][1] = gen[i][1];
	}
	for (size_t i = 0; i < nr; i++) {
		if (fd[i] >= 0) {
			r = failf(-EINVAL, err, err_len,
				  "%s is not a device of pool %s in its newest metadata (generation %llu)",
				  paths[i], p->sp.meta.name, (unsigned long long)best);
			goto out;
		}
	}
	if (pools_find(ps, p->sp.meta.name)) {
		r = failf(-EEXIST, err, err_len, "another pool is already named %s", p->sp.meta.name);
		goto out;
	}
	if (dmctl_info(p->sp.meta.name, &info) == 0 && info.exists) {
		r = failf(-EEXIST, err, err_len, "a device-mapper device named %s already exists",
			  p->sp.meta.name);
		goto out;
	}
	p->sp.want_active = 1;
	r = pool_register(ps, p, err, err_len);
	if (r < 0)
		goto out;
	*out = p;
	p = NULL;
out:
	for (size_t i = 0; i < nr; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	pool_free(p);
	return r;
}

/* ---- attach ------------------------------------------------------------------------ */

static int pool_ssd_dev(const struct pool *p)
{
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++)
		if (p->sp.meta.devs[i].tier == METADATA_TIER_SSD)
			return (int)i;
	return -1;
}

/* Extents the smallest metadata slot of the pool can describe. */
static uint32_t pool_max_logical(const struct pool *p, const struct metadata_sb *extra)
{
	uint32_t max = extra ? metadata_slot_max_logical(extra->slot_bytes) : UINT32_MAX;

	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		uint32_t m = metadata_slot_max_logical(p->sb[i].slot_bytes);

		if (m < max)
			max = m;
	}
	return max;
}

int pool_attach(struct pools *ps, struct pool *p, const char *ssd, bool grow, bool force,
		char *err, size_t err_len)
{
	struct new_dev nd = { .fd = -1 };
	struct metadata_dev *d;
	uint32_t old_logical = p->sp.map.nr_logical, usable, max_logical;
	unsigned dev, hdd_lbs = p->sp.meta.devs[0].logical_block_size;
	char size[SIZE_FORMAT_MAX];
	int r, ssd_dev = pool_ssd_dev(p);

	if (!p->active)
		return failf(-EINVAL, err, err_len, "pool %s is inactive; activate it first",
			     p->sp.meta.name);
	if (ssd_dev >= 0)
		return failf(-EEXIST, err, err_len, "pool %s already has an SSD tier (%s)",
			     p->sp.meta.name, p->sp.paths[ssd_dev]);
	r = check_new_device(ps, ssd, force, p, &nd, err, err_len);
	if (r < 0)
		goto out;
	if (nd.info.logical_block_size != hdd_lbs) {
		r = failf(-EINVAL, err, err_len,
			  "logical block sizes differ: %s has %u bytes, pool %s %u; tierd needs"
			  " equal ones (see docs/pools.md)", ssd, nd.info.logical_block_size,
			  p->sp.meta.name, hdd_lbs);
		goto out;
	}
	max_logical = pool_max_logical(p, NULL);
	r = layout_new_device(&nd, p->sp.meta.extent_size, max_logical, err, err_len);
	if (r < 0)
		goto out;
	usable = nd.sb.nr_pe - reserve_for(nd.sb.nr_pe);
	if (grow && (uint64_t)old_logical + usable > max_logical) {
		r = failf(-ENOSPC, err, err_len,
			  "pool %s's metadata area holds at most %u extents; %s would make %llu;"
			  " attach it with --no-grow", p->sp.meta.name, max_logical, ssd,
			  (unsigned long long)old_logical + usable);
		goto out;
	}
	r = random_uuid(nd.sb.dev_uuid);
	if (r < 0)
		goto out;
	memcpy(nd.sb.pool_uuid, p->sp.meta.uuid, 16);
	snprintf(nd.sb.pool_name, sizeof(nd.sb.pool_name), "%s", p->sp.meta.name);

	r = extmap_add_dev(&p->sp.map, nd.sb.nr_pe, &dev);
	if (r == 0 && grow) {
		r = extmap_resize_logical(&p->sp.map, old_logical + usable);
		if (r == 0)
			r = map_run(&p->sp.map, old_logical, dev, usable);
	}
	if (r < 0) {
		fail(err, err_len, "pool %s: cannot extend its extent map: %s", p->sp.meta.name,
		     strerror(-r));
		goto undo_map;
	}
	d = &p->sp.meta.devs[dev];
	fill_dev(d, &nd, METADATA_TIER_SSD);
	p->sp.meta.nr_devs++;
	if (grow)
		p->sp.meta.flags |= METADATA_POOL_SSD_GROWS;
	snprintf(p->sp.paths[dev], sizeof(p->sp.paths[dev]), "%s", ssd);
	p->sb[dev] = nd.sb;
	p->slot_gen[dev][0] = p->slot_gen[dev][1] = 0;

	/* The SSD first: until the HDD's metadata names it, it is not in the pool. */
	r = format_device(nd.fd, &nd.sb, err, err_len, ssd);
	if (r < 0)
		goto undo_meta;
	p->fd[dev] = nd.fd;
	r = pool_write_metadata(p, err, err_len);
	p->fd[dev] = -1;
	if (r < 0)
		goto undo_meta;
	fault_point("attach-after-devices");
	r = pool_reopen_device(p, dev, &nd, err, err_len);
	if (r == 0)
		r = state_pool_save(ps->state, &p->sp);
	if (r < 0) {
		log_err("pool %s: SSD %s attached on the devices but not in the state: %s",
			p->sp.meta.name, ssd, state_last_error(ps->state));
		if (!*err)
			fail(err, err_len, "pool %s: cannot save the state: %s", p->sp.meta.name,
			     state_last_error(ps->state));
		goto out;
	}
	if (grow) {
		r = pool_load_table(p, 0, err, err_len);
		if (r < 0)
			goto out;
		pool_stats_start(p);
		log_info("pool %s: SSD %s attached, volume grown to %s", p->sp.meta.name, ssd,
			 size_format((uint64_t)p->sp.map.nr_logical * p->sp.meta.extent_size, size,
				     sizeof(size)));
	} else {
		log_info("pool %s: SSD %s attached without growing the volume", p->sp.meta.name, ssd);
	}
	goto out;
undo_meta:
	p->sp.meta.nr_devs--;
	if (grow && !(ssd_dev >= 0))
		p->sp.meta.flags &= ~METADATA_POOL_SSD_GROWS;
	memset(&p->sp.meta.devs[dev], 0, sizeof(p->sp.meta.devs[dev]));
undo_map:
	for (uint32_t le = old_logical; le < p->sp.map.nr_logical; le++)
		extmap_unmap(&p->sp.map, le);
	extmap_resize_logical(&p->sp.map, old_logical);
	if (p->sp.map.nr_devs > p->sp.meta.nr_devs)
		extmap_remove_dev(&p->sp.map, p->sp.map.nr_devs - 1);
out:
	new_dev_close(&nd);
	return r;
}

/* ---- destroy ---------------------------------------------------------------------- */

int pool_destroy(struct pools *ps, struct pool *p, bool force, char *err, size_t err_len)
{
	struct dmctl_info info;
	int r;

	r = dmctl_info(p->sp.meta.name, &info);
	if (r == 0 && info.exists) {
		if (info.open_count > 0 && !force)
			return failf(-EBUSY, err, err_len,
				     "/dev/mapper/%s is in use (%u open handles); unmount it first or"
				     " use --force", p->sp.meta.name, info.open_count);
		r = dmctl_remove(p->sp.meta.name, force);
		if (r < 0)
			return failf(r, err, err_len, "cannot remove /dev/mapper/%s: %s",
				     p->sp.meta.name,
				     *dmctl_last_error() ? dmctl_last_error() : strerror(-r));
	}
	p->active = 0;
	/* Forget the pool first: a crash before the wipe leaves only orphaned
	 * superblocks, never a pool in the state whose devices were wiped. */
	r = state_pool_delete(ps->state, p->sp.id);
	if (r < 0)
		return failf(r, err, err_len, "pool %s: cannot delete it from the state: %s",
			     p->sp.meta.name, state_last_error(ps->state));
	if (pool_open_devices(p, err, err_len) == 0) {
		for (unsigned i = 0; i < p->sp.meta.nr_devs; i++)
			if (wipe_device(p->fd[i], &p->sb[i]) < 0)
				log_warn("pool %s: cannot wipe the superblock of %s", p->sp.meta.name,
					 p->sp.paths[i]);
	} else {
		log_warn("%s; its superblocks stay", err);
	}
	err[0] = '\0';
	pools_unlink(ps, p);
	pool_free(p);
	return 0;
}

/* ---- views ------------------------------------------------------------------------ */

static void add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static json_object *pool_heat_status_json(const struct pool *p);

static json_object *device_json(const struct pool *p, unsigned i, uint32_t *used_out)
{
	const struct metadata_dev *d = &p->sp.meta.devs[i];
	json_object *o = json_object_new_object();
	uint32_t used = extmap_count_on_dev(&p->sp.map, i);
	char uuid[37];

	metadata_uuid_format(d->uuid, uuid);
	json_object_object_add(o, "path", json_object_new_string(p->sp.paths[i]));
	json_object_object_add(o, "uuid", json_object_new_string(uuid));
	add_u64(o, "size_bytes", d->size_bytes);
	add_u64(o, "logical_block_size", d->logical_block_size);
	add_u64(o, "data_offset", d->data_start);
	add_u64(o, "total_extents", d->nr_pe);
	add_u64(o, "used_extents", used);
	add_u64(o, "free_extents", d->nr_pe - used);
	add_u64(o, "reserved_extents", d->reserve_pe);
	*used_out = used;
	return o;
}

static json_object *tier_json(const struct pool *p, enum metadata_tier tier)
{
	json_object *o = NULL, *devs = NULL;
	uint64_t total = 0, used = 0;

	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		uint32_t u;

		if (p->sp.meta.devs[i].tier != tier)
			continue;
		if (!o) {
			o = json_object_new_object();
			devs = json_object_new_array();
		}
		json_object_array_add(devs, device_json(p, i, &u));
		total += p->sp.meta.devs[i].nr_pe;
		used += u;
	}
	if (!o)
		return NULL;
	json_object_object_add(o, "name", json_object_new_string(tier == METADATA_TIER_SSD ? "ssd" : "hdd"));
	json_object_object_add(o, "class", json_object_new_string(tier == METADATA_TIER_SSD ? "ssd" : "hdd"));
	add_u64(o, "size_bytes", total * p->sp.meta.extent_size);
	add_u64(o, "total_extents", total);
	add_u64(o, "used_extents", used);
	add_u64(o, "free_extents", total - used);
	json_object_object_add(o, "devices", devs);
	return o;
}

json_object *pool_to_json(const struct pool *p)
{
	json_object *o = json_object_new_object(), *tiers = json_object_new_array(), *t;
	char uuid[37], dm[PATH_MAX];

	metadata_uuid_format(p->sp.meta.uuid, uuid);
	snprintf(dm, sizeof(dm), "/dev/mapper/%s", p->sp.meta.name);
	json_object_object_add(o, "name", json_object_new_string(p->sp.meta.name));
	json_object_object_add(o, "uuid", json_object_new_string(uuid));
	json_object_object_add(o, "state", json_object_new_string(p->active ? "active" : "inactive"));
	json_object_object_add(o, "dm_device", json_object_new_string(dm));
	add_u64(o, "extent_size", p->sp.meta.extent_size);
	add_u64(o, "size_bytes", (uint64_t)p->sp.map.nr_logical * p->sp.meta.extent_size);
	add_u64(o, "extents", p->sp.map.nr_logical);
	json_object_object_add(o, "ssd_grows_volume",
			       json_object_new_boolean(!!(p->sp.meta.flags & METADATA_POOL_SSD_GROWS)));
	add_u64(o, "metadata_generation", p->sp.meta.generation);
	if ((t = tier_json(p, METADATA_TIER_SSD)))
		json_object_array_add(tiers, t);
	if ((t = tier_json(p, METADATA_TIER_HDD)))
		json_object_array_add(tiers, t);
	json_object_object_add(o, "tiers", tiers);
	json_object_object_add(o, "heat", pool_heat_status_json(p));
	json_object_object_add(o, "job", pool_job_json(p));
	return o;
}

static int by_name(const void *a, const void *b)
{
	json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b, *nx, *ny;

	json_object_object_get_ex(x, "name", &nx);
	json_object_object_get_ex(y, "name", &ny);
	return strcmp(json_object_get_string(nx), json_object_get_string(ny));
}

json_object *pools_to_json(struct pools *ps)
{
	json_object *a = json_object_new_array();

	for (struct pool *p = ps->list; p; p = p->next)
		json_object_array_add(a, pool_to_json(p));
	json_object_array_sort(a, by_name);
	return a;
}

/* ---- long operations ---------------------------------------------------------- */

/*
 * Extents per table swap: more copy at once, but a longer commit while
 * suspended. A batch also ends early when a destination has no free extent
 * left: the next one can use what this one's commit frees (a swap).
 */
#define POOL_JOB_BATCH 16
/* How far past the first waiting move a batch looks for moves that can start. */
#define POOL_JOB_LOOKAHEAD 4096
/* I/O awareness (docs/migration.md): the share of time the volume had I/O in flight. */
#define POOL_BUSY_THROTTLED 0.30
#define POOL_BUSY_IDLE 0.05
/* The window over which the volume's load is measured before a batch, seconds. */
#define POOL_LOAD_WINDOW 1.0
/* Throttled: after this many busy windows in a row, one extent moves anyway. */
#define POOL_THROTTLED_MAX_WAITS 5

struct pool_job_move {
	uint32_t le;
	uint16_t dev;  /* destination device */
	uint8_t state; /* 0 waiting, 1 started (moved, failed or skipped) */
};

struct pool_job {
	struct pool *p;
	struct ev_loop *loop;
	ev_timer kick; /* starts batches from the loop, so done never runs inside start */
	struct pool_job_move *moves;
	size_t nr, first_waiting, started;
	struct pool_move_limits limits;
	int detach; /* release detach_dev at the end */
	unsigned detach_dev;
	int paused, cancelled;
	const char *waiting; /* why no batch runs now: "", "paused", "rate", "busy", "idle" */
	unsigned busy_waits;
	struct devload_sample load;
	int load_ok;
	uint64_t next_batch_ns; /* rate cap: no batch starts before */
	struct migrate_item items[POOL_JOB_BATCH];
	size_t nr_items;
	struct migrate_batch *batch;
	/* Without a volume (pool inactive) tierd copies itself, with io_uring. */
	int offline;
	struct ucopy *ucopy;
	struct ucopy_job copies[POOL_JOB_BATCH];
	ev_io copy_watch;
	int copying, verifying;
	uint8_t copy_failed[POOL_JOB_BATCH]; /* set before a verification pass */
	uint64_t moved, failed;
	struct state_moves *moved_out;
	char what[192];
	pool_progress_fn progress;
	pool_done_fn done;
	void *ctx;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *pool_busy(const struct pool *p)
{
	return p->job ? p->job->what : "";
}

/* After the last extent left the SSD: forget it and wipe its superblock. */
static int pool_release_device(struct pool *p, unsigned dev, char *err, size_t err_len)
{
	struct metadata_dev saved_dev = p->sp.meta.devs[dev];
	struct metadata_sb saved_sb = p->sb[dev];
	char path[PATH_MAX];
	int fd = p->fd[dev], r;

	if (extmap_count_on_dev(&p->sp.map, dev) != 0)
		return failf(-EBUSY, err, err_len, "%s still holds extents", p->sp.paths[dev]);
	if (dev != p->sp.meta.nr_devs - 1)
		return failf(-EINVAL, err, err_len, "%s is not the pool's last device", p->sp.paths[dev]);
	r = extmap_remove_dev(&p->sp.map, dev);
	if (r < 0)
		return failf(r, err, err_len, "pool %s: cannot drop %s from its map: %s",
			     p->sp.meta.name, p->sp.paths[dev], strerror(-r));
	snprintf(path, sizeof(path), "%s", p->sp.paths[dev]);
	p->sp.meta.nr_devs--;
	p->sp.meta.flags &= ~METADATA_POOL_SSD_GROWS;
	memset(&p->sp.meta.devs[dev], 0, sizeof(p->sp.meta.devs[dev]));
	p->sp.paths[dev][0] = '\0';
	p->fd[dev] = -1;
	/* The remaining devices stop naming it first; then it is free. */
	r = pool_commit(p, NULL, 0, err, err_len);
	if (r < 0) {
		unsigned again;

		p->sp.meta.nr_devs++;
		p->sp.meta.devs[dev] = saved_dev;
		snprintf(p->sp.paths[dev], sizeof(p->sp.paths[dev]), "%s", path);
		p->fd[dev] = fd;
		extmap_add_dev(&p->sp.map, saved_dev.nr_pe, &again);
		return r;
	}
	if (fd >= 0) {
		if (wipe_device(fd, &saved_sb) < 0)
			log_warn("%s: detached, but its superblock could not be wiped", path);
		close(fd);
	}
	log_info("pool %s: %s detached", p->sp.meta.name, path);
	return 0;
}

static void job_finish(struct pool_job *job, int r, const char *err)
{
	struct pool *p = job->p;
	char msg[POOL_ERR_MAX];

	snprintf(msg, sizeof(msg), "%s", err ? err : "");
	if (r == 0 && job->detach) {
		if (job->failed)
			r = failf(-EIO, msg, sizeof(msg),
				  "%llu extents could not be moved off %s (I/O errors, see the log);"
				  " it stays attached", (unsigned long long)job->failed,
				  p->sp.paths[job->detach_dev]);
		else
			r = pool_release_device(p, job->detach_dev, msg, sizeof(msg));
	}
	ev_timer_stop(job->loop, &job->kick);
	ev_io_stop(job->loop, &job->copy_watch);
	ucopy_close(job->ucopy);
	if (job->offline && !p->active)
		pool_close_devices(p);
	p->job = NULL;
	job->done(p, r, msg, job->moved, job->failed, job->ctx);
	free(job->moves);
	free(job);
}

static void job_next(struct pool_job *job);
static int job_offline_start(struct pool_job *job, char *err, size_t err_len);

static void job_wait(struct pool_job *job, const char *why, double seconds)
{
	job->waiting = why;
	ev_timer_stop(job->loop, &job->kick);
	ev_timer_set(&job->kick, seconds, 0.);
	ev_timer_start(job->loop, &job->kick);
}

/* What the batch moved, into the pool's history, the caller's counters and the residency clock. */
static void job_account(struct pool_job *job)
{
	struct pool *p = job->p;
	struct state_moves delta = { 0 };
	uint64_t bytes = p->sp.meta.extent_size;
	time_t now = time(NULL);

	for (size_t i = 0; i < job->nr_items; i++) {
		const struct migrate_item *it = &job->items[i];
		int up = p->sp.meta.devs[it->dev].tier == METADATA_TIER_SSD;

		if (it->result != 0) {
			job->failed++;
			delta.failed++;
			log_err("pool %s: extent %u could not move to %s (a device failed); it stays where"
				" it was", p->sp.meta.name, it->le, p->sp.paths[it->dev]);
			continue;
		}
		job->moved++;
		if (up) {
			delta.promoted_extents++;
			delta.promoted_bytes += bytes;
		} else {
			delta.demoted_extents++;
			delta.demoted_bytes += bytes;
		}
		if (it->le < p->heat.nr)
			p->heat.e[it->le].moved_at = (uint32_t)now;
	}
	if (job->moved_out) {
		job->moved_out->promoted_extents += delta.promoted_extents;
		job->moved_out->demoted_extents += delta.demoted_extents;
		job->moved_out->promoted_bytes += delta.promoted_bytes;
		job->moved_out->demoted_bytes += delta.demoted_bytes;
		job->moved_out->failed += delta.failed;
	}
	if (state_moves_add(p->ps->state, p->sp.id, now / 60, &delta) < 0)
		log_warn("pool %s: cannot record the moves in the history: %s", p->sp.meta.name,
			 state_last_error(p->ps->state));
	/* Moved extents lost their intent in the commit; failed ones end here. */
	if (state_intents_clear(p->ps->state, p->sp.id, NULL) < 0)
		log_warn("pool %s: cannot clear migration intents: %s", p->sp.meta.name,
			 state_last_error(p->ps->state));
}

static void job_batch_done(struct migrate_batch *b, int r, const char *err, void *ctx)
{
	struct pool_job *job = ctx;
	uint64_t bytes = (uint64_t)job->nr_items * job->p->sp.meta.extent_size;

	(void)b;
	job->batch = NULL;
	job_account(job);
	job->nr_items = 0;
	if (r < 0) {
		job_finish(job, r, err);
		return;
	}
	if (job->limits.rate)
		job->next_batch_ns = now_ns() + (uint64_t)((double)bytes / (double)job->limits.rate * 1e9);
	job->load_ok = devload_read(job->p->dm_major, job->p->dm_minor, &job->load) == 0;
	job->progress(job->p, job->what, job->started, job->nr, job->ctx);
	job_next(job);
}

/*
 * Whether a batch may start now and how many extents it may hold; otherwise
 * the job waits (a timer calls job_next again). Off: always, full batches.
 * Throttled: waits while the volume is busy, up to POOL_THROTTLED_MAX_WAITS
 * windows, then moves one extent. Idle: waits until the volume is quiet.
 */
static size_t job_admit(struct pool_job *job)
{
	struct devload_sample cur;
	uint64_t now = now_ns();
	double busy, elapsed;

	if (job->paused) {
		job->waiting = "paused";
		return 0;
	}
	if (job->next_batch_ns > now) {
		job_wait(job, "rate", (double)(job->next_batch_ns - now) / 1e9);
		return 0;
	}
	if (job->limits.io == POOL_IO_OFF)
		return POOL_JOB_BATCH;
	if (!job->load_ok || devload_read(job->p->dm_major, job->p->dm_minor, &cur) < 0) {
		job->load_ok = devload_read(job->p->dm_major, job->p->dm_minor, &job->load) == 0;
		if (!job->load_ok)
			return POOL_JOB_BATCH; /* no counters: cannot tell, do not stall forever */
		job_wait(job, job->limits.io == POOL_IO_IDLE ? "idle" : "busy", POOL_LOAD_WINDOW);
		return 0;
	}
	elapsed = (double)(cur.at_ns - job->load.at_ns) / 1e9;
	if (elapsed < POOL_LOAD_WINDOW * 0.9) {
		job_wait(job, job->limits.io == POOL_IO_IDLE ? "idle" : "busy",
			 POOL_LOAD_WINDOW - elapsed);
		return 0;
	}
	busy = devload_busy(&job->load, &cur);
	job->load = cur;
	if (job->limits.io == POOL_IO_IDLE) {
		if (busy >= POOL_BUSY_IDLE) {
			job_wait(job, "idle", POOL_LOAD_WINDOW);
			return 0;
		}
		return POOL_JOB_BATCH;
	}
	if (busy < POOL_BUSY_THROTTLED) {
		job->busy_waits = 0;
		return POOL_JOB_BATCH;
	}
	if (++job->busy_waits <= POOL_THROTTLED_MAX_WAITS) {
		job_wait(job, "busy", POOL_LOAD_WINDOW);
		return 0;
	}
	job->busy_waits = 0;
	return 1;
}

static void job_record_intents(struct pool_job *job)
{
	struct pool *p = job->p;
	struct state_intent v[POOL_JOB_BATCH];

	for (size_t i = 0; i < job->nr_items; i++) {
		struct extmap_loc src = extmap_get(&p->sp.map, job->items[i].le);

		v[i] = (struct state_intent){ .le = job->items[i].le, .src_dev = src.dev,
					      .src_pe = src.pe, .dst_dev = (uint16_t)job->items[i].dev,
					      .dst_pe = job->items[i].pe };
	}
	if (state_intents_add(p->ps->state, p->sp.id, v, job->nr_items, time(NULL)) < 0)
		log_warn("pool %s: cannot record the migration intents: %s", p->sp.meta.name,
			 state_last_error(p->ps->state));
}

static void job_next(struct pool_job *job)
{
	struct pool *p = job->p;
	char err[POOL_ERR_MAX];
	size_t n = 0, max, looked = 0;
	int r;

	if (job->cancelled) {
		job_finish(job, -ECANCELED, "cancelled");
		return;
	}
	if (job->limits.deadline && time(NULL) >= job->limits.deadline) {
		job_finish(job, -ETIME, "the tiering window closed");
		return;
	}
	while (job->first_waiting < job->nr && job->moves[job->first_waiting].state)
		job->first_waiting++;
	if (job->first_waiting == job->nr) {
		job_finish(job, 0, NULL);
		return;
	}
	max = job_admit(job);
	if (max == 0)
		return;
	job->waiting = "";
	for (size_t i = job->first_waiting; i < job->nr && n < max && looked < POOL_JOB_LOOKAHEAD;
	     i++) {
		struct pool_job_move *m = &job->moves[i];
		uint32_t reserve, pe;

		if (m->state)
			continue;
		looked++;
		if (extmap_get(&p->sp.map, m->le).dev == m->dev) {
			m->state = 1;
			job->started++;
			continue;
		}
		/* A move may use a device's swap reserve only to make room on the other tier. */
		reserve = job->detach || p->sp.meta.devs[m->dev].tier == METADATA_TIER_HDD ?
				  0 : p->sp.meta.devs[m->dev].reserve_pe;
		if (p->sp.map.nr_free[m->dev] <= reserve || extmap_alloc(&p->sp.map, m->dev, &pe) < 0)
			continue;
		job->items[n++] = (struct migrate_item){ .le = m->le, .dev = m->dev, .pe = pe };
		m->state = 1;
		job->started++;
	}
	if (n == 0) {
		size_t left = 0;

		for (size_t i = job->first_waiting; i < job->nr; i++)
			left += !job->moves[i].state;
		if (left) {
			snprintf(err, sizeof(err), "%zu extents could not move: no free extents left on"
				 " their destination", left);
			job_finish(job, -ENOSPC, err);
			return;
		}
		job_finish(job, 0, NULL);
		return;
	}
	job->nr_items = n;
	job_record_intents(job);
	r = job->offline ? job_offline_start(job, err, sizeof(err)) :
			   migrate_batch_start(job->loop, p, job->items, n, job_batch_done, job,
					       &job->batch, err, sizeof(err));
	if (r < 0) {
		job->nr_items = 0;
		job_finish(job, r, err);
	}
}


/* ---- moves without a volume: tierd copies with io_uring (ucopy.c) ---- */

uint64_t pool_pe_offset(const struct pool *p, unsigned dev, uint32_t pe)
{
	return p->sp.meta.devs[dev].data_start + (uint64_t)pe * p->sp.meta.extent_size;
}

int pool_dev_fd(const struct pool *p, unsigned dev)
{
	return dev < p->sp.meta.nr_devs ? p->fd[dev] : -1;
}

uint32_t pool_block_size(const struct pool *p)
{
	uint32_t align = 512;

	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++)
		if (p->sp.meta.devs[i].logical_block_size > align)
			align = p->sp.meta.devs[i].logical_block_size;
	return align;
}

bool pool_verify_moves(const struct pool *p)
{
	return p->ps->verify;
}

static int job_offline_start(struct pool_job *job, char *err, size_t err_len)
{
	struct pool *p = job->p;
	int r;

	for (size_t i = 0; i < job->nr_items; i++) {
		const struct migrate_item *it = &job->items[i];
		struct extmap_loc src = extmap_get(&p->sp.map, it->le);

		job->copies[i] = (struct ucopy_job){
			.src_fd = p->fd[src.dev], .dst_fd = p->fd[it->dev],
			.src_off = pool_pe_offset(p, src.dev, src.pe),
			.dst_off = pool_pe_offset(p, it->dev, it->pe),
			.len = p->sp.meta.extent_size,
		};
	}
	job->verifying = 0;
	memset(job->copy_failed, 0, sizeof(job->copy_failed));
	r = ucopy_start(job->ucopy, UCOPY_COPY, job->copies, job->nr_items);
	if (r < 0) {
		for (size_t i = 0; i < job->nr_items; i++)
			extmap_release(&p->sp.map, job->items[i].dev, job->items[i].pe);
		return failf(r, err, err_len, "pool %s: cannot start copying: %s", p->sp.meta.name,
			     strerror(-r));
	}
	job->copying = 1;
	ev_io_start(job->loop, &job->copy_watch);
	return 0;
}

/*
 * Every copy (and, with verification, every comparison) has ended: remap the
 * extents that copied, commit, and go on. The sources were not written
 * meanwhile (the pool has no volume), so the commit is all it takes.
 */
static void job_offline_commit(struct pool_job *job)
{
	struct pool *p = job->p;
	struct extmap_loc old[POOL_JOB_BATCH];
	uint32_t changed[POOL_JOB_BATCH];
	char err[POOL_ERR_MAX];
	size_t n = 0;
	int r;

	for (size_t i = 0; i < job->nr_items; i++) {
		struct migrate_item *it = &job->items[i];
		int cr = job->copies[i].result;

		if (cr == 0 && !job->copy_failed[i]) {
			old[n] = extmap_get(&p->sp.map, it->le);
			/* The reservation goes first: remap wants a free destination. */
			extmap_release(&p->sp.map, it->dev, it->pe);
			extmap_remap(&p->sp.map, it->le, it->dev, it->pe);
			changed[n++] = it->le;
			it->result = 0;
			continue;
		}
		if (cr == -EILSEQ)
			log_err("pool %s: extent %u differs from its copy on %s at byte %llu; the copy is"
				" dropped", p->sp.meta.name, it->le, p->sp.paths[it->dev],
				(unsigned long long)job->copies[i].diff_at);
		extmap_release(&p->sp.map, it->dev, it->pe);
		it->result = cr ? cr : -EIO;
	}
	r = n ? pool_commit(p, changed, n, err, sizeof(err)) : 0;
	if (r < 0) {
		/* Source and copy are both complete: either generation a device kept is right. */
		for (size_t i = n; i-- > 0;)
			extmap_remap(&p->sp.map, changed[i], old[i].dev, old[i].pe);
		for (size_t i = 0; i < job->nr_items; i++)
			job->items[i].result = -EIO;
		pool_set_broken(p, err);
	}
	job_batch_done(NULL, r, err, job);
}

static void job_copy_ready(struct ev_loop *loop, ev_io *w, int revents)
{
	struct pool_job *job = w->data;
	int r = ucopy_poll(job->ucopy);

	(void)loop;
	(void)revents;
	if (r == 0)
		return;
	ev_io_stop(job->loop, &job->copy_watch);
	job->copying = 0;
	if (r < 0) {
		for (size_t i = 0; i < job->nr_items; i++)
			job->copies[i].result = r;
		job_offline_commit(job);
		return;
	}
	if (job->p->ps->verify && !job->verifying) {
		/* Compare only what copied; a failed copy keeps its result. */
		for (size_t i = 0; i < job->nr_items; i++) {
			job->copy_failed[i] = job->copies[i].result != 0;
			if (job->copy_failed[i])
				job->copies[i].len = 0;
		}
		job->verifying = 1;
		r = ucopy_start(job->ucopy, UCOPY_VERIFY, job->copies, job->nr_items);
		if (r == 0) {
			job->copying = 1;
			ev_io_start(job->loop, &job->copy_watch);
			return;
		}
		for (size_t i = 0; i < job->nr_items; i++)
			job->copies[i].result = r;
	}
	job_offline_commit(job);
}

/* An inactive pool moves by tierd's own copy: its devices open, and an io_uring engine. */
static int job_offline_prepare(struct pool *p, struct pool_job *job, char *err, size_t err_len)
{
	int r;

	r = pool_open_devices(p, err, err_len);
	if (r < 0)
		return r;
	r = ucopy_open(&job->ucopy, 0, 0, pool_block_size(p));
	if (r < 0) {
		pool_close_devices(p);
		return failf(r, err, err_len,
			     "pool %s is inactive, and moving its extents needs io_uring, which is not"
			     " available (%s); activate the pool first", p->sp.meta.name, strerror(-r));
	}
	job->offline = 1;
	ev_io_init(&job->copy_watch, job_copy_ready, ucopy_fd(job->ucopy), EV_READ);
	job->copy_watch.data = job;
	return 0;
}

static void job_kick(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	job_next(w->data);
}

static int job_start(struct pool *p, struct ev_loop *loop, struct pool_job_move *moves, size_t nr,
		     const struct pool_move_limits *limits, pool_progress_fn progress,
		     pool_done_fn done, void *ctx, struct pool_job **out, char *err, size_t err_len)
{
	struct pool_job *job = calloc(1, sizeof(*job));

	if (!job) {
		free(moves);
		return failf(-ENOMEM, err, err_len, "out of memory");
	}
	job->p = p;
	job->loop = loop;
	job->moves = moves;
	job->nr = nr;
	if (limits)
		job->limits = *limits;
	job->waiting = "";
	job->progress = progress;
	job->done = done;
	job->ctx = ctx;
	if (!p->active) {
		int r = job_offline_prepare(p, job, err, err_len);

		if (r < 0) {
			free(moves);
			free(job);
			return r;
		}
	}
	if (p->active) {
		struct dmctl_info info;

		/* The volume's device number, for its load: created or activated, it may be new. */
		if (dmctl_info(p->sp.meta.name, &info) == 0 && info.exists) {
			p->dm_major = info.major;
			p->dm_minor = info.minor;
		}
	}
	job->load_ok = devload_read(p->dm_major, p->dm_minor, &job->load) == 0;
	ev_timer_init(&job->kick, job_kick, 0., 0.);
	job->kick.data = job;
	ev_timer_start(loop, &job->kick);
	p->job = job;
	*out = job;
	return 0;
}

/* The logical extents in [first, first + count) that are (on) or are not on dev, to move to to_dev. */
static int extents_by_dev(const struct pool *p, uint32_t first, uint32_t count, unsigned dev,
			  bool on, unsigned to_dev, struct pool_job_move **moves, size_t *nr)
{
	struct pool_job_move *v = malloc(((size_t)count + 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (uint32_t le = first; le < first + count; le++)
		if ((extmap_get(&p->sp.map, le).dev == dev) == on)
			v[n++] = (struct pool_job_move){ .le = le, .dev = (uint16_t)to_dev };
	*moves = v;
	*nr = n;
	return 0;
}

void pool_set_broken(struct pool *p, const char *why)
{
	snprintf(p->broken, sizeof(p->broken), "%s", why);
	log_err("pool %s: its metadata could not be written (%s); no more moves until tierd"
		" restarts", p->sp.meta.name, why);
}

/* Moves may run on an inactive pool (tierd copies then); a detach needs the volume. */
static int pool_check_idle(const struct pool *p, bool need_active, char *err, size_t err_len)
{
	if (p->broken[0])
		return failf(-EIO, err, err_len,
			     "pool %s takes no moves until tierd restarts: its metadata could not be"
			     " written (%s)", p->sp.meta.name, p->broken);
	if (need_active && !p->active)
		return failf(-EINVAL, err, err_len, "pool %s is inactive; activate it first",
			     p->sp.meta.name);
	if (p->job)
		return failf(-EBUSY, err, err_len, "pool %s is busy: %s", p->sp.meta.name, p->job->what);
	return 0;
}

int pool_move_start(struct pool *p, struct ev_loop *loop, uint32_t first, uint32_t count,
		    bool to_ssd, const struct pool_move_limits *limits, pool_progress_fn progress,
		    pool_done_fn done, void *ctx, char *err, size_t err_len)
{
	int ssd = pool_ssd_dev(p), r;
	unsigned to = to_ssd ? (unsigned)ssd : 0;
	struct pool_job_move *moves;
	struct pool_job *job;
	size_t nr;

	r = pool_check_idle(p, false, err, err_len);
	if (r < 0)
		return r;
	if (to_ssd && ssd < 0)
		return failf(-ENODEV, err, err_len, "pool %s has no SSD tier", p->sp.meta.name);
	if (count == 0 || first >= p->sp.map.nr_logical || count > p->sp.map.nr_logical - first)
		return failf(-EINVAL, err, err_len, "pool %s has extents 0 to %u", p->sp.meta.name,
			     p->sp.map.nr_logical - 1);
	r = extents_by_dev(p, first, count, to, false, to, &moves, &nr);
	if (r < 0)
		return failf(r, err, err_len, "out of memory");
	r = job_start(p, loop, moves, nr, limits, progress, done, ctx, &job, err,
		      err_len);
	if (r < 0)
		return r;
	snprintf(job->what, sizeof(job->what), "moving extents %u-%u to the %s tier", first,
		 first + count - 1, to_ssd ? "SSD" : "HDD");
	return 0;
}

int pool_moves_start(struct pool *p, struct ev_loop *loop, const struct pool_move_req *req,
		     size_t nr, const struct pool_move_limits *limits, const char *what,
		     struct state_moves *moved, pool_progress_fn progress, pool_done_fn done,
		     void *ctx, char *err, size_t err_len)
{
	int ssd = pool_ssd_dev(p), r;
	struct pool_job_move *moves;
	struct pool_job *job;

	r = pool_check_idle(p, false, err, err_len);
	if (r < 0)
		return r;
	if (ssd < 0)
		return failf(-ENODEV, err, err_len, "pool %s has no SSD tier", p->sp.meta.name);
	moves = calloc(nr + 1, sizeof(*moves));
	if (!moves)
		return failf(-ENOMEM, err, err_len, "out of memory");
	for (size_t i = 0; i < nr; i++) {
		if (req[i].le >= p->sp.map.nr_logical) {
			free(moves);
			return failf(-EINVAL, err, err_len, "pool %s has extents 0 to %u",
				     p->sp.meta.name, p->sp.map.nr_logical - 1);
		}
		moves[i] = (struct pool_job_move){ .le = req[i].le,
						   .dev = (uint16_t)(req[i].to_ssd ? ssd : 0) };
	}
	r = job_start(p, loop, moves, nr, limits, progress, done, ctx, &job, err,
		      err_len);
	if (r < 0)
		return r;
	job->moved_out = moved;
	snprintf(job->what, sizeof(job->what), "%s", what);
	return 0;
}

void pool_job_pause(struct pool *p, bool paused)
{
	struct pool_job *job = p->job;

	if (!job || job->paused == paused)
		return;
	job->paused = paused;
	/* A waiting job looks again now; a batch in flight ends first. */
	if (!paused && !job->batch)
		job_wait(job, "", 0.);
}

void pool_job_cancel(struct pool *p)
{
	struct pool_job *job = p->job;

	if (!job)
		return;
	job->cancelled = 1;
	if (!job->batch)
		job_wait(job, "", 0.);
}

json_object *pool_job_json(const struct pool *p)
{
	const struct pool_job *job = p->job;
	json_object *o, *batch;
	uint64_t copied = 0, total = 0;

	if (!job)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "what", json_object_new_string(job->what));
	add_u64(o, "done", job->started);
	add_u64(o, "total", job->nr);
	add_u64(o, "moved", job->moved);
	add_u64(o, "failed", job->failed);
	json_object_object_add(o, "paused", json_object_new_boolean(job->paused));
	json_object_object_add(o, "waiting", job->waiting[0] ? json_object_new_string(job->waiting) :
							       NULL);
	batch = json_object_new_array();
	for (size_t i = 0; job->batch && i < job->nr_items; i++) {
		const struct migrate_item *it = &job->items[i];
		struct extmap_loc src = extmap_get(&p->sp.map, it->le);
		json_object *m = json_object_new_object();

		add_u64(m, "extent", it->le);
		json_object_object_add(m, "from", json_object_new_string(
			src.dev < p->sp.meta.nr_devs ? tier_name_of(p->sp.meta.devs[src.dev].tier) : "?"));
		json_object_object_add(m, "to", json_object_new_string(
			tier_name_of(p->sp.meta.devs[it->dev].tier)));
		json_object_array_add(batch, m);
	}
	json_object_object_add(o, "batch", batch);
	if (job->batch)
		migrate_batch_progress(job->batch, &copied, &total);
	add_u64(o, "batch_regions_copied", copied);
	add_u64(o, "batch_regions", total);
	return o;
}

/* Drop the SSD's share of the volume from its end (the filesystem was shrunk). */
static int pool_shrink_by(struct pool *p, unsigned ssd, char *err, size_t err_len)
{
	const struct metadata_dev *d = &p->sp.meta.devs[ssd];
	uint32_t usable = d->nr_pe - d->reserve_pe, old_n = p->sp.map.nr_logical, new_n;
	uint64_t hdd_free = 0, needed = 0;
	struct extmap_loc *tail;
	int r;

	if (usable >= old_n)
		return failf(-EINVAL, err, err_len, "pool %s would be empty without its SSD",
			     p->sp.meta.name);
	new_n = old_n - usable;
	for (uint32_t le = new_n; le < old_n; le++) {
		struct extmap_loc loc = extmap_get(&p->sp.map, le);

		if (loc.dev != ssd)
			hdd_free++;
	}
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++)
		if (i != ssd)
			hdd_free += p->sp.map.nr_free[i];
	for (uint32_t le = 0; le < new_n; le++)
		if (extmap_get(&p->sp.map, le).dev == ssd)
			needed++;
	if (needed > hdd_free)
		return failf(-ENOSPC, err, err_len,
			     "pool %s: the HDD tier has room for %llu of the %llu extents on the SSD",
			     p->sp.meta.name, (unsigned long long)hdd_free, (unsigned long long)needed);
	tail = malloc((size_t)usable * sizeof(*tail));
	if (!tail)
		return failf(-ENOMEM, err, err_len, "out of memory");
	for (uint32_t le = new_n; le < old_n; le++) {
		tail[le - new_n] = extmap_get(&p->sp.map, le);
		extmap_unmap(&p->sp.map, le);
	}
	r = extmap_resize_logical(&p->sp.map, new_n);
	if (r == 0) {
		p->sp.meta.flags &= ~METADATA_POOL_SSD_GROWS;
		r = pool_commit(p, NULL, 0, err, err_len);
		if (r < 0) {
			/* Not committed: the volume keeps its size. */
			p->sp.meta.flags |= METADATA_POOL_SSD_GROWS;
			extmap_resize_logical(&p->sp.map, old_n);
			for (uint32_t le = new_n; le < old_n; le++)
				extmap_map(&p->sp.map, le, tail[le - new_n].dev, tail[le - new_n].pe);
		}
	}
	free(tail);
	if (r < 0)
		return r;
	r = pool_load_table(p, 0, err, err_len);
	if (r == 0)
		pool_stats_start(p);
	return r;
}

int pool_detach_start(struct pool *p, struct ev_loop *loop, const char *ssd, bool shrink,
		      pool_progress_fn progress, pool_done_fn done, void *ctx, char *err,
		      size_t err_len)
{
	int dev = pool_ssd_dev(p), r;
	struct pool_job_move *moves;
	struct pool_job *job;
	size_t nr;

	r = pool_check_idle(p, true, err, err_len);
	if (r < 0)
		return r;
	if (dev < 0)
		return failf(-ENODEV, err, err_len, "pool %s has no SSD tier", p->sp.meta.name);
	if (!same_device(ssd, p->sp.paths[dev]))
		return failf(-ENODEV, err, err_len, "%s is not the SSD of pool %s (that is %s)", ssd,
			     p->sp.meta.name, p->sp.paths[dev]);
	if (p->sp.meta.flags & METADATA_POOL_SSD_GROWS) {
		const struct metadata_dev *d = &p->sp.meta.devs[dev];
		uint64_t keep = (uint64_t)(p->sp.map.nr_logical - (d->nr_pe - d->reserve_pe)) *
				p->sp.meta.extent_size;
		char human[SIZE_FORMAT_MAX];

		if (!shrink)
			return failf(-EBUSY, err, err_len,
				     "the SSD's capacity is part of /dev/mapper/%s: shrink its filesystem"
				     " to at most %s (%llu bytes) first, then detach with --shrink",
				     p->sp.meta.name, size_format(keep, human, sizeof(human)),
				     (unsigned long long)keep);
		r = pool_shrink_by(p, (unsigned)dev, err, err_len);
		if (r < 0)
			return r;
	}
	r = extents_by_dev(p, 0, p->sp.map.nr_logical, (unsigned)dev, true, 0, &moves, &nr);
	if (r < 0)
		return failf(r, err, err_len, "out of memory");
	r = job_start(p, loop, moves, nr, NULL, progress, done, ctx, &job, err,
		      err_len);
	if (r < 0)
		return r;
	job->detach = 1;
	job->detach_dev = (unsigned)dev;
	snprintf(job->what, sizeof(job->what), "evacuating %s", p->sp.paths[dev]);
	return 0;
}

/* ---- heat ------------------------------------------------------------------------ */

/* dm-stats memory for all pools stays under 1/this of RAM (docs/heat.md). */
#define POOL_STATS_RAM_SHARE 16
/*
 * Areas read per dm message: the reply (~45 bytes an area) and the parsed
 * counters stay a constant 5 MB however large the pool (docs/heat.md).
 */
#define POOL_SAMPLE_CHUNK 65536u
/* Heat stored per step of the flush: one step stays well within 50 ms (bench-flush). */
#define POOL_HEAT_FLUSH_CHUNK STATE_HEAT_CHUNK

void pools_set_heat_params(struct pools *ps, const struct heat_params *params)
{
	ps->heat = *params;
}

void pools_set_verify(struct pools *ps, bool verify)
{
	ps->verify = verify;
}

bool pools_verify(const struct pools *ps)
{
	return ps->verify;
}

static uint64_t ram_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);

	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

/*
 * (Re)create the volume's region after activation or a resize; heat follows
 * the volume's extents. When the kernel memory it needs is over the bound,
 * heat stays off and pool show says why.
 */
static void pool_stats_start(struct pool *p)
{
	uint32_t nr = p->sp.map.nr_logical;
	uint64_t per_area = iostats_kernel_bytes_per_area(), used_by_others = 0;
	char need[SIZE_FORMAT_MAX], limit[SIZE_FORMAT_MAX];
	struct statsparse_area *grown;
	int r;

	p->stats_on = 0;
	p->stats_off[0] = '\0';
	for (struct pool *o = p->ps->list; o; o = o->next)
		if (o != p && o->stats_on)
			used_by_others += o->stats_kernel_bytes;
	p->stats_kernel_bytes = per_area * nr;
	p->stats_limit_bytes = ram_bytes() / POOL_STATS_RAM_SHARE;
	if (p->stats_limit_bytes && used_by_others + p->stats_kernel_bytes > p->stats_limit_bytes) {
		fail(p->stats_off, sizeof(p->stats_off),
		     "heat is off: dm-stats would need %s of kernel memory for %u extents (with the"
		     " other pools' over the bound of %s, 1/%d of RAM); use a larger extent size",
		     size_format(used_by_others + p->stats_kernel_bytes, need, sizeof(need)), nr,
		     size_format(p->stats_limit_bytes, limit, sizeof(limit)), POOL_STATS_RAM_SHARE);
		log_warn("pool %s: %s", p->sp.meta.name, p->stats_off);
		return;
	}
	r = heat_table_resize(&p->heat, nr);
	if (r == 0 && !p->sample) {
		grown = malloc(POOL_SAMPLE_CHUNK * sizeof(*grown));
		if (grown)
			p->sample = grown;
		else
			r = -ENOMEM;
	}
	if (r == 0)
		r = iostats_region_open(p->sp.meta.name, (uint64_t)nr * pool_extent_sectors(p),
					pool_extent_sectors(p), &p->stats_region);
	if (r < 0) {
		fail(p->stats_off, sizeof(p->stats_off), "heat is off: no dm-stats region: %s",
		     *dmctl_last_error() ? dmctl_last_error() : strerror(-r));
		log_warn("pool %s: %s", p->sp.meta.name, p->stats_off);
		return;
	}
	p->stats_on = 1;
}

static const char *tier_name_of(enum metadata_tier tier)
{
	return tier == METADATA_TIER_SSD ? "ssd" : "hdd";
}

/* Store this minute's I/O per tier (added to what the minute already has). */
static int pool_io_flush(struct pool *p)
{
	int r = 0;

	for (unsigned t = 0; t < 2; t++) {
		struct state_tier_io *io = &p->io[t];

		if (!io->reads && !io->writes)
			continue;
		r = state_tier_io_add(p->ps->state, p->sp.id, p->io_minute,
				      tier_name_of((enum metadata_tier)t), io);
		if (r < 0)
			return r;
		memset(io, 0, sizeof(*io));
	}
	return r;
}

/* Add the counters of areas [first, first + nr) to the I/O of the tier each extent is on. */
static void pool_count_io(struct pool *p, uint32_t first, uint32_t nr)
{
	for (uint32_t i = 0; i < nr; i++) {
		const struct statsparse_area *a = &p->sample[i];
		struct extmap_loc loc;
		struct state_tier_io *io;

		if (!a->reads && !a->writes)
			continue;
		loc = extmap_get(&p->sp.map, first + i);
		if (loc.dev == EXTMAP_NO_DEV)
			continue;
		io = &p->io[p->sp.meta.devs[loc.dev].tier];
		io->reads += a->reads;
		io->writes += a->writes;
		io->read_bytes += a->sectors_read * SECTOR;
		io->write_bytes += a->sectors_written * SECTOR;
	}
}

/* One part of a sample: read, parse, heat, I/O per tier. */
static int pool_sample_part(struct pool *p, uint32_t first, uint32_t nr, double decay, char *err,
			    size_t err_len)
{
	size_t len;
	char *text = NULL;
	int r;

	r = iostats_sample(p->sp.meta.name, p->stats_region, first, nr, &text, &len);
	if (r < 0) {
		fail(err, err_len, "pool %s: cannot read its dm-stats region: %s", p->sp.meta.name,
		     *dmctl_last_error() ? dmctl_last_error() : strerror(-r));
		return r;
	}
	r = statsparse_areas(text, len, pool_extent_sectors(p), p->sample, nr);
	free(text);
	if (r < 0)
		return failf(r, err, err_len, "pool %s: unexpected dm-stats counters: %s",
			     p->sp.meta.name, strerror(-r));
	r = heat_apply_range(&p->heat, &p->ps->heat, p->sample, first, nr, decay);
	if (r < 0)
		return failf(r, err, err_len, "pool %s: heat update failed: %s", p->sp.meta.name,
			     strerror(-r));
	pool_count_io(p, first, nr);
	return 0;
}

int pool_sample(struct pool *p, uint64_t now_ns, char *err, size_t err_len)
{
	uint32_t nr = p->sp.map.nr_logical;
	int64_t minute = (int64_t)(now_ns / 60000000000ull);
	double decay;
	int r;

	if (!p->active || !p->stats_on)
		return 0;
	if (minute != p->io_minute) {
		r = pool_io_flush(p);
		if (r < 0)
			log_warn("pool %s: cannot store its I/O history: %s", p->sp.meta.name,
				 state_last_error(p->ps->state));
		p->io_minute = minute;
	}
	if (p->heat.last_sample_ns > now_ns)
		p->heat.last_sample_ns = now_ns; /* the clock went back: no decay this time */
	r = heat_sample_begin(&p->heat, &p->ps->heat, now_ns, &decay);
	if (r < 0)
		return failf(r, err, err_len, "pool %s: heat update failed: %s", p->sp.meta.name,
			     strerror(-r));
	for (uint32_t first = 0; r == 0 && first < nr; first += POOL_SAMPLE_CHUNK)
		r = pool_sample_part(p, first, nr - first < POOL_SAMPLE_CHUNK ? nr - first :
						   POOL_SAMPLE_CHUNK, decay, err, err_len);
	/* Parts already applied were decayed for this sample: never twice. */
	heat_sample_end(&p->heat, now_ns);
	if (r < 0)
		pool_stats_start(p); /* regions die with the device: make a new one */
	return r;
}

int pool_flush_step(struct pool *p, int all, char *err, size_t err_len)
{
	uint32_t to;
	int r;

	r = pool_io_flush(p);
	if (r < 0)
		return failf(r, err, err_len, "pool %s: cannot store its I/O history: %s",
			     p->sp.meta.name, state_last_error(p->ps->state));
	if (p->heat.nr == 0)
		return 1;
	if (p->heat_flushed >= p->heat.nr)
		p->heat_flushed = 0; /* the volume shrank since the last step */
	to = all || p->heat.nr - p->heat_flushed < POOL_HEAT_FLUSH_CHUNK ?
		     p->heat.nr : p->heat_flushed + POOL_HEAT_FLUSH_CHUNK;
	r = state_heat_save(p->ps->state, p->sp.id, &p->heat, p->heat_flushed, to);
	if (r < 0)
		return failf(r, err, err_len, "pool %s: cannot store its heat: %s", p->sp.meta.name,
			     state_last_error(p->ps->state));
	p->heat_flushed = to;
	if (to < p->heat.nr)
		return 0;
	p->heat_flushed = 0;
	return 1;
}

json_object *pool_heat_json(const struct pool *p, uint32_t top)
{
	json_object *a = json_object_new_array();
	uint32_t *idx, n = 0;

	if (top > p->heat.nr)
		top = p->heat.nr;
	idx = calloc((size_t)top + 1, sizeof(*idx));
	if (!idx || heat_top(&p->heat, top, idx, &n) < 0)
		n = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t le = idx[i];
		struct extmap_loc loc = extmap_get(&p->sp.map, le);
		json_object *o;

		if (p->heat.e[le].heat == 0)
			break; /* hottest first: the rest are cold too */
		o = json_object_new_object();
		add_u64(o, "extent", le);
		add_u64(o, "offset", (uint64_t)le * p->sp.meta.extent_size);
		json_object_object_add(o, "tier",
				       json_object_new_string(loc.dev == EXTMAP_NO_DEV ? "none" :
							      tier_name_of(p->sp.meta.devs[loc.dev].tier)));
		json_object_object_add(o, "heat", json_object_new_double(p->heat.e[le].heat));
		add_u64(o, "reads", p->heat.e[le].reads);
		add_u64(o, "writes", p->heat.e[le].writes);
		json_object_array_add(a, o);
	}
	free(idx);
	return a;
}

static json_object *pool_heat_status_json(const struct pool *p)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "enabled", json_object_new_boolean(p->stats_on));
	add_u64(o, "areas", p->stats_on ? p->sp.map.nr_logical : 0);
	add_u64(o, "kernel_bytes_per_area", iostats_kernel_bytes_per_area());
	add_u64(o, "kernel_bytes", p->stats_on ? p->stats_kernel_bytes : 0);
	add_u64(o, "limit_bytes", p->stats_limit_bytes);
	add_u64(o, "half_life_seconds", (uint64_t)p->ps->heat.half_life_s);
	if (!p->stats_on && p->stats_off[0])
		json_object_object_add(o, "reason", json_object_new_string(p->stats_off));
	return o;
}

int pools_for_each(struct pools *ps, int (*fn)(struct pool *p, void *ctx), void *ctx)
{
	int r = 0;

	for (struct pool *p = ps->list; p; p = p->next)
		if (fn(p, ctx) < 0)
			r = -EIO;
	return r;
}

/* ---- for tiering runs (tiering.c) ---- */

int64_t pool_state_id(const struct pool *p)
{
	return p->sp.id;
}

uint64_t pool_extent_size(const struct pool *p)
{
	return p->sp.meta.extent_size;
}

uint32_t pool_nr_extents(const struct pool *p)
{
	return p->sp.map.nr_logical;
}

bool pool_is_active(const struct pool *p)
{
	return p->active;
}

bool pool_job_paused(const struct pool *p)
{
	return p->job && p->job->paused;
}

int pool_planner_input(const struct pool *p, struct planner_extent **out, uint32_t *ssd_capacity,
		       uint32_t *ssd_free, uint32_t *hdd_free)
{
	int ssd = pool_ssd_dev(p);
	uint32_t nr = p->sp.map.nr_logical, used;
	struct planner_extent *v = calloc(nr ? nr : 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (uint32_t le = 0; le < nr; le++) {
		struct extmap_loc loc = extmap_get(&p->sp.map, le);

		if (loc.dev < p->sp.meta.nr_devs)
			v[le].tier = p->sp.meta.devs[loc.dev].tier == METADATA_TIER_SSD ? PLANNER_SSD :
											  PLANNER_HDD;
		if (le < p->heat.nr) {
			float h = p->heat.e[le].heat;

			v[le].heat = h >= 0 && h < 3e38f ? h : 0;
			v[le].moved_at = p->heat.e[le].moved_at;
		}
	}
	*hdd_free = p->sp.map.nr_free[0];
	*ssd_capacity = *ssd_free = 0;
	if (ssd >= 0) {
		const struct metadata_dev *d = &p->sp.meta.devs[ssd];

		/* Promotions leave the SSD's swap reserve free (job_next). */
		used = d->nr_pe - p->sp.map.nr_free[ssd];
		*ssd_capacity = d->nr_pe - d->reserve_pe > used ? d->nr_pe - d->reserve_pe : used;
		*ssd_free = *ssd_capacity - used;
	}
	*out = v;
	return 0;
}

void pool_io_pending(const struct pool *p, struct state_tier_io io[2])
{
	io[0] = p->io[0];
	io[1] = p->io[1];
}
