/* SPDX-License-Identifier: GPL-2.0-or-later */
/* devices: finding a pool's devices by uuid, and checking and laying out new ones. */
#include "pool-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blockdev.h"
#include "dmctl.h"
#include "log.h"
#include "size.h"

int pool_open_direct(const char *path, int *fd)
{
	*fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	return *fd < 0 ? -errno : 0;
}

/* Open path if it carries device dev's superblock: -ENODEV if another's. */
static int open_if_device(const struct pool *p, unsigned dev, const char *path, int *fd_out,
			  struct metadata_sb *sb)
{
	int fd, r;

	r = pool_open_direct(path, &fd);
	if (r < 0)
		return r;
	r = pool_read_sb(fd, sb);
	if (r == 0 && (memcmp(sb->pool_uuid, p->sp.meta.uuid, 16) != 0 ||
		       memcmp(sb->dev_uuid, p->sp.meta.devs[dev].uuid, 16) != 0))
		r = -ENODEV;
	if (r < 0) {
		close(fd);
		return r;
	}
	*fd_out = fd;
	return 0;
}

/* Open path if it is this pool's device dev (by superblock), as that device. */
static int try_device(struct pool *p, unsigned dev, const char *path)
{
	struct metadata_sb sb;
	int fd, r;

	r = open_if_device(p, dev, path, &fd, &sb);
	if (r < 0)
		return r;
	p->fd[dev] = fd;
	p->sb[dev] = sb;
	if (path != p->sp.paths[dev]) /* snprintf onto its own argument is undefined */
		snprintf(p->sp.paths[dev], sizeof(p->sp.paths[dev]), "%s", path);
	return 0;
}

/*
 * Whether another block device is built on this one (sysfs name): one other
 * than own, the sysfs name of the pool's volume if it exists (a volume left
 * live by a stopped tierd holds the pool's devices).
 */
static bool held_by_other(const char *own, const char *name)
{
	char path[PATH_MAX];
	struct dirent *e;
	bool held = false;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/class/block/%s/holders", name);
	d = opendir(path);
	if (!d)
		return false;
	while (!held && (e = readdir(d)))
		held = e->d_name[0] != '.' && strcmp(e->d_name, own);
	closedir(d);
	return held;
}

/* Whether path carries device dev's superblock. */
static bool is_device(const struct pool *p, unsigned dev, const char *path)
{
	struct metadata_sb sb;
	int fd;

	if (open_if_device(p, dev, path, &fd, &sb) < 0)
		return false;
	close(fd);
	return true;
}

/*
 * Device names move between boots (loop0, md127...): look at every block
 * device. A device that another one is built on (the disk under a
 * dm-linear or a multipath map) shows the same superblock as the device on
 * top, which is the one to use; two that nothing is built on
 * (a clone, a snapshot's origin and its copy) are -ENOTUNIQ: which one
 * holds the newest data is not for tierd to guess.
 */
static int scan_for_device(struct pool *p, unsigned dev, char *err, size_t err_len)
{
	char found[2][PATH_MAX], own[32] = "";
	struct dmctl_info info;
	struct dirent *e;
	unsigned n = 0;
	DIR *d;

	if (dmctl_info(p->sp.meta.name, &info) == 0 && info.exists)
		snprintf(own, sizeof(own), "dm-%u", info.minor);
	d = opendir("/sys/class/block");
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char path[PATH_MAX];

		if (e->d_name[0] == '.' || held_by_other(own, e->d_name))
			continue;
		snprintf(path, sizeof(path), "/dev/%s", e->d_name);
		if (is_device(p, dev, path) && n < 2)
			snprintf(found[n++], sizeof(found[0]), "%s", path);
	}
	closedir(d);
	if (n == 0)
		return -ENODEV;
	if (n > 1) {
		char uuid[37];

		metadata_uuid_format(p->sp.meta.devs[dev].uuid, uuid);
		return errbuf_fail(-ENOTUNIQ, err, err_len,
				   "pool %s: its device %s is on both %s and %s (a clone or a"
				   " snapshot?); remove or wipe the one that is not the pool's",
				   p->sp.meta.name, uuid, found[0], found[1]);
	}
	return try_device(p, dev, found[0]);
}

static const char *tier_word(const struct metadata_dev *d)
{
	return d->tier == METADATA_TIER_SSD ? "SSD" : "HDD";
}

int pool_open_devices(struct pool *p, bool degraded, char *err, size_t err_len)
{
	unsigned missing = 0;
	char uuid[37];
	int r;

	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		if (p->fd[i] >= 0)
			continue;
		if (try_device(p, i, p->sp.paths[i]) == 0)
			continue;
		r = scan_for_device(p, i, err, err_len);
		if (r == 0) {
			log_pool_info(p->sp.meta.name, "device %u is now %s", i, p->sp.paths[i]);
			continue;
		}
		if (r == -ENOTUNIQ) {
			pool_close_devices(p);
			return r;
		}
		metadata_uuid_format(p->sp.meta.devs[i].uuid, uuid);
		if (degraded) {
			if (!p->probe_missing)
				log_pool_warn(p->sp.meta.name, "its %s device %s (last seen at %s)"
					      " is missing: what it held reads and writes as I/O"
					      " errors", tier_word(&p->sp.meta.devs[i]), uuid,
					      p->sp.paths[i]);
			missing++;
			continue;
		}
		pool_close_devices(p);
		return pool_fail(p, -ENODEV, err, err_len,
				 "its %s device %s (last seen at %s) is missing; 'tierctl pool activate"
				 " %s --degraded' would map what it held to I/O errors and the rest as"
				 " usual", tier_word(&p->sp.meta.devs[i]), uuid, p->sp.paths[i],
				 p->sp.meta.name);
	}
	if (missing == p->sp.meta.nr_devs) {
		pool_close_devices(p);
		return pool_fail(p, -ENODEV, err, err_len, "none of its devices is present");
	}
	p->degraded = missing > 0;
	p->allow_missing = degraded;
	pool_read_slots(p);
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
	int reused[METADATA_MAX_DEVS] = { 0 }, from_p[METADATA_MAX_DEVS], r = 0;
	char uuid[37];

	if (!next)
		return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
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
		} else if ((r = scan_for_device(next, i, err, err_len)) == -ENODEV &&
			   p->allow_missing) {
			metadata_uuid_format(meta->devs[i].uuid, uuid);
			log_pool_warn(p->sp.meta.name, "its newest metadata names device %s, which"
				      " is missing: what it holds reads and writes as I/O errors",
				      uuid);
			next->fd[i] = -1;
			next->sp.paths[i][0] = '\0';
			p->degraded = true;
		} else if (next->fd[i] < 0) {
			metadata_uuid_format(meta->devs[i].uuid, uuid);
			for (unsigned k = 0; k < i; k++)
				if (from_p[k] < 0)
					close(next->fd[k]);
			for (unsigned k = 0; k < METADATA_MAX_DEVS; k++)
				next->fd[k] = -1; /* the rest belong to p */
			pool_free(next);
			if (r == -ENOTUNIQ)
				return r;
			return pool_fail(p, -ENODEV, err, err_len,
					 "its newest metadata names device %s, which is missing",
					 uuid);
		} else {
			for (unsigned slot = 0; slot < 2; slot++)
				pool_read_slot(next->fd[i], &next->sb[i], slot,
					       &next->slot_gen[i][slot], NULL, NULL, NULL);
			log_pool_info(p->sp.meta.name, "%s joins from the newest metadata",
				      next->sp.paths[i]);
		}
	}
	for (unsigned j = 0; j < p->sp.meta.nr_devs; j++) {
		if (reused[j] || p->fd[j] < 0)
			continue;
		log_pool_info(p->sp.meta.name, "%s left the pool in the newest metadata",
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
	/* The joining devices' slots were never compared with the map: nothing is known of them. */
	pool_known_drop(p);
	/* Degraded only if a device the newest metadata names is missing. */
	p->degraded = false;
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++)
		p->degraded |= p->fd[i] < 0;
	return 0;
}

bool pool_newest_leaves_out_missing(const struct pool *p)
{
	uint64_t best = p->sp.meta.generation, gen;
	unsigned best_dev = 0, best_slot = 0;
	struct metadata_pool meta;
	struct extmap map;
	struct piecemap pieces;
	bool out = true;

	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++)
		for (unsigned s = 0; s < 2; s++)
			if (p->fd[i] >= 0 && p->slot_gen[i][s] > best) {
				best = p->slot_gen[i][s];
				best_dev = i;
				best_slot = s;
			}
	if (best == p->sp.meta.generation)
		return false;
	if (pool_read_slot(p->fd[best_dev], &p->sb[best_dev], best_slot, &gen, &meta, &map,
			   &pieces) < 0)
		return false;
	if (gen != best) {
		if (gen) {
			extmap_destroy(&map);
			piecemap_destroy(&pieces);
		}
		return false;
	}
	extmap_destroy(&map);
	piecemap_destroy(&pieces);
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		if (p->fd[i] >= 0)
			continue;
		for (unsigned j = 0; j < meta.nr_devs; j++)
			if (!memcmp(meta.devs[j].uuid, p->sp.meta.devs[i].uuid, 16))
				out = false;
	}
	return out;
}

/* A slot of some device that holds generation gen: 0 and *dev, *slot set, or -ENOENT. */
static int pool_find_slot(const struct pool *p, uint64_t gen, unsigned *dev, unsigned *slot)
{
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++) {
		for (unsigned s = 0; s < 2; s++) {
			if (p->slot_gen[i][s] == gen) {
				*dev = i;
				*slot = s;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/*
 * The devices are written before the state, so after a crash between the two
 * a device may hold a newer generation: it is complete, adopt it. With equal
 * generations the device's map wins too: the state can only differ from it
 * after a save that failed and was not redone (both are written from the
 * same memory), and the devices are what the volume was built from.
 */
int pool_adopt_newer_metadata(struct pool *p, char *err, size_t err_len)
{
	uint64_t best = p->sp.meta.generation;
	unsigned best_dev = 0, best_slot = 0;
	struct metadata_pool meta;
	struct extmap map;
	struct piecemap pieces;
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
	if (best == p->sp.meta.generation &&
	    pool_find_slot(p, best, &best_dev, &best_slot) < 0)
		return 0; /* no device holds the state's generation: nothing to compare */
	/*
	 * A slot of that generation was found to hold the map's very record
	 * (pool_read_slots): the map and devices agree without reading it again
	 * (a decode of 420 MB at 200 TiB).
	 */
	if (best == p->sp.meta.generation && p->slot_is_map[best_dev][best_slot])
		return 0;
	r = pool_read_slot(p->fd[best_dev], &p->sb[best_dev], best_slot, &gen, &meta, &map, &pieces);
	if (r < 0 && gen == best)
		return pool_fail(p, r, err, err_len,
				 "its newest metadata (generation %" PRIu64 " on %s) %s", best,
				 p->sp.paths[best_dev], pool_slot_error(r));
	if (r < 0 || gen != best) {
		/* Decoded only when the slot held a generation. */
		if (r == 0 && gen) {
			extmap_destroy(&map);
			piecemap_destroy(&pieces);
		}
		return pool_fail(p, r < 0 ? r : -EIO, err, err_len, "cannot re-read metadata on %s",
				 p->sp.paths[best_dev]);
	}
	if (best == p->sp.meta.generation) {
		if (meta.nr_devs == p->sp.meta.nr_devs && extmap_same_mapping(&map, &p->sp.map) &&
		    piecemap_same_placement(&pieces, &p->sp.pieces)) {
			extmap_destroy(&map);
			piecemap_destroy(&pieces);
			return 0;
		}
		log_pool_warn(p->sp.meta.name, "the state's extent map differs from generation %llu"
			      " on %s; using the device's", (unsigned long long)best,
			      p->sp.paths[best_dev]);
	} else {
		log_pool_warn(p->sp.meta.name, "metadata generation %llu on %s is newer than the"
			      " state's %llu; using it", (unsigned long long)best,
			      p->sp.paths[best_dev], (unsigned long long)p->sp.meta.generation);
	}
	r = pool_take_devices(p, &meta, err, err_len);
	if (r < 0) {
		extmap_destroy(&map);
		piecemap_destroy(&pieces);
		return r;
	}
	extmap_destroy(&p->sp.map);
	p->sp.map = map;
	piecemap_destroy(&p->sp.pieces);
	p->sp.pieces = pieces;
	/* Known against the map replaced: the next commit's fill reads the slots again. */
	pool_known_drop(p);
	r = pool_save_state(p, NULL, 0);
	if (r < 0)
		return pool_fail(p, r, err, err_len, "cannot save the state: %s",
				 state_last_error(p->ps->state));
	return 0;
}

/* ---- new devices --------------------------------------------------------------- */

void pool_new_dev_close(struct pool_new_dev *nd)
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
int pool_check_new_device(struct pools *ps, const char *path, bool wipe_signatures,
			  const struct pool *attach_to, struct pool_new_dev *nd, char *err,
			  size_t err_len)
{
	char holders[256];
	int r;

	nd->path = path;
	nd->fd = -1;
	if (path[0] != '/')
		return errbuf_fail(-EINVAL, err, err_len, "%s: give the device as an absolute path",
				   path);
	r = blockdev_probe(path, &nd->info);
	if (r == -ENOENT)
		return errbuf_fail(r, err, err_len, "%s: no such device", path);
	if (r == -ENOTBLK)
		return errbuf_fail(r, err, err_len, "%s: not a block device", path);
	if (r < 0)
		return errbuf_fail(r, err, err_len, "%s: cannot examine it: %s", path,
				   strerror(-r));
	if (strcmp(nd->info.signature, "tierd") == 0) {
		struct metadata_sb sb = { .pool_name = "?" };
		struct pool *owner = NULL;
		int fd;

		if (pool_open_direct(path, &fd) == 0) {
			if (pool_read_sb(fd, &sb) == 0)
				owner = pools_find_uuid(ps, sb.pool_uuid);
			close(fd);
		}
		if (owner && pool_has_dev_uuid(owner, sb.dev_uuid))
			return errbuf_fail(-EBUSY, err, err_len, "%s already belongs to pool %s",
					   path, owner->sp.meta.name);
		/* Left by an attach or detach of that pool that did not finish. */
		if (owner && owner != attach_to && !wipe_signatures)
			return errbuf_fail(-EEXIST, err, err_len,
					   "%s carries a leftover superblock of pool %s, which does not use"
					   " it; use --wipe-signatures to overwrite it", path,
					   owner->sp.meta.name);
		if (!owner && !wipe_signatures)
			return errbuf_fail(-EEXIST, err, err_len,
					   "%s belongs to tierd pool '%s', unknown here: import it with"
					   " 'tierctl pool import', or use --wipe-signatures to overwrite it",
					   path, sb.pool_name);
	} else if (nd->info.signature[0] && !wipe_signatures) {
		if (strncmp(nd->info.signature, "pt:", 3) == 0)
			return errbuf_fail(-EEXIST, err, err_len,
					   "%s has a %s partition table; use --wipe-signatures to overwrite"
					   " it",
					   path, nd->info.signature + 3);
		return errbuf_fail(-EEXIST, err, err_len,
				   "%s has a %s signature; use --wipe-signatures to overwrite it", path,
				   nd->info.signature);
	}
	r = blockdev_open_exclusive(path, O_RDWR | O_DIRECT | O_CLOEXEC, &nd->fd);
	if (r == -EBUSY) {
		if (blockdev_holders(path, holders, sizeof(holders)) == 0 && holders[0])
			return errbuf_fail(r, err, err_len, "%s is in use (held by %s)", path,
					   holders);
		return errbuf_fail(r, err, err_len,
				   "%s is in use (mounted or open by another program)", path);
	}
	if (r < 0)
		return errbuf_fail(r, err, err_len, "%s: cannot open it: %s", path, strerror(-r));
	return 0;
}

/* Checked before the exclusive opens, which would otherwise report "in use". */
int pool_same_device(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && S_ISBLK(sa.st_mode) &&
	       sa.st_rdev == sb.st_rdev;
}

/* Lay out nd for a pool whose metadata holds max_logical extents. */
int pool_layout_new_device(struct pool_new_dev *nd, uint64_t extent_size, uint32_t max_logical,
			   char *err, size_t err_len)
{
	char have[SIZE_FORMAT_MAX], need[SIZE_FORMAT_MAX], ext[SIZE_FORMAT_MAX];
	struct metadata_sb probe;
	int r;

	r = metadata_layout(&nd->sb, nd->info.size, nd->info.logical_block_size, extent_size,
			    max_logical, nd->info.optimal_io_size);
	if (r == -ENOSPC) {
		/* The metadata area does not depend on the device's size: ask for a big one. */
		uint64_t min = 0;

		if (metadata_layout(&probe, UINT64_C(1) << 50, nd->info.logical_block_size,
				    extent_size, max_logical, nd->info.optimal_io_size) == 0)
			min = probe.data_start + METADATA_MIN_PE * extent_size;
		return errbuf_fail(r, err, err_len,
				   "%s is too small (%s): with %s extents a pool device needs at least %s",
				   nd->path, size_format(nd->info.size, have, sizeof(have)),
				   size_format(extent_size, ext, sizeof(ext)),
				   size_format(min, need, sizeof(need)));
	}
	if (r < 0)
		return errbuf_fail(r, err, err_len, "%s: cannot lay out the metadata: %s", nd->path,
				   strerror(-r));
	return 0;
}

uint32_t pool_reserve_for(uint32_t nr_pe)
{
	uint32_t r = nr_pe / 200;

	if (r < POOL_RESERVE_MIN)
		r = POOL_RESERVE_MIN;
	if (r > POOL_RESERVE_MAX)
		r = POOL_RESERVE_MAX;
	return r;
}

void pool_fill_dev(struct metadata_dev *d, const struct pool_new_dev *nd, enum metadata_tier tier)
{
	memcpy(d->uuid, nd->sb.dev_uuid, 16);
	d->tier = tier;
	d->nr_pe = nd->sb.nr_pe;
	d->reserve_pe = pool_reserve_for(nd->sb.nr_pe);
	d->logical_block_size = nd->info.logical_block_size;
	d->data_start = nd->sb.data_start;
	d->size_bytes = nd->info.size;
}

int pool_random_uuid(uint8_t uuid[16])
{
	if (getrandom(uuid, 16, 0) != 16)
		return -errno;
	uuid[6] = (uuid[6] & 0x0f) | 0x40; /* RFC 4122 version 4 */
	uuid[8] = (uuid[8] & 0x3f) | 0x80;
	return 0;
}

/* Map logical extents from le onwards to dev's pe 0.. (count of them). */
int pool_map_run(struct extmap *m, uint32_t le, unsigned dev, uint32_t count)
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
int pool_reopen_device(struct pool *p, unsigned dev, struct pool_new_dev *nd, char *err,
		       size_t err_len)
{
	int r;

	pool_new_dev_close(nd);
	if (p->fd[dev] >= 0)
		close(p->fd[dev]);
	p->fd[dev] = -1;
	r = pool_open_direct(nd->path, &p->fd[dev]);
	if (r < 0)
		return errbuf_fail(r, err, err_len, "%s: cannot reopen it: %s", nd->path,
				   strerror(-r));
	return 0;
}

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

enum pool_piece_copy pool_piece_copy(const struct pool *p)
{
	return p->ps->piece_copy;
}
