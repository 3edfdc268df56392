/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "blockdev.h"

#include <blkid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* O_DIRECT buffer alignment: suits every logical block size up to the page size. */
#define BLOCKDEV_ALIGN 4096u
/* Where BLKZEROOUT is missing, zeroes are written in pieces this big. */
#define BLOCKDEV_ZERO_CHUNK (1u << 20)

static int blockdev_stat(const char *path, struct stat *st)
{
	if (stat(path, st) < 0)
		return -errno;
	return S_ISBLK(st->st_mode) ? 0 : -ENOTBLK;
}

/* sysfs finds a device by number, whatever path the caller named it by. */
static int blockdev_sysfs_path(char *buf, size_t len, dev_t rdev, const char *rel)
{
	int n = snprintf(buf, len, "/sys/dev/block/%u:%u/%s", major(rdev), minor(rdev), rel);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int blockdev_rotational(dev_t rdev)
{
	/* A partition has no queue of its own: its disk's is one level up. */
	static const char *const rels[] = { "queue/rotational", "../queue/rotational" };
	char path[PATH_MAX];
	int v = -1;

	for (size_t i = 0; i < sizeof(rels) / sizeof(rels[0]) && v < 0; i++) {
		FILE *f;

		if (blockdev_sysfs_path(path, sizeof(path), rdev, rels[i]) < 0)
			continue;
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fscanf(f, "%d", &v) != 1 || (v != 0 && v != 1))
			v = -1;
		fclose(f);
	}
	return v;
}

/* 1 if the device starts with a tierd superblock. O_DIRECT: no stale cached copy. */
static int blockdev_has_tierd_magic(int fd, uint64_t size, uint32_t lbs)
{
	size_t len = lbs > BLOCKDEV_ALIGN ? lbs : BLOCKDEV_ALIGN;
	void *buf;
	int r;

	if (size < len)
		return 0;
	if (posix_memalign(&buf, len, len) != 0)
		return -ENOMEM;
	r = blockdev_read(fd, 0, buf, len);
	if (r == 0)
		r = memcmp(buf, BLOCKDEV_TIERD_MAGIC, strlen(BLOCKDEV_TIERD_MAGIC)) == 0;
	free(buf);
	return r;
}

static int blockdev_blkid(const char *path, char *sig, size_t len)
{
	blkid_probe pr = NULL;
	const char *v;
	int fd, r;

	/* libblkid reads at any offset and size, so it needs a buffered descriptor. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	/*
	 * The page cache of a device that someone holds open (md, dm) can be
	 * older than what was written through the devices stacked on it.
	 */
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	r = -ENOMEM;
	pr = blkid_new_probe();
	if (!pr)
		goto out;
	r = -EIO;
	if (blkid_probe_set_device(pr, fd, 0, 0) != 0)
		goto out;
	blkid_probe_enable_superblocks(pr, 1);
	/* A damaged superblock still means data is there. */
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_BADCSUM);
	blkid_probe_enable_partitions(pr, 1);
	switch (blkid_do_safeprobe(pr)) {
	case 0:
		if (blkid_probe_lookup_value(pr, "TYPE", &v, NULL) == 0)
			snprintf(sig, len, "%s", v);
		else if (blkid_probe_lookup_value(pr, "PTTYPE", &v, NULL) == 0)
			snprintf(sig, len, "pt:%s", v);
		r = 0;
		break;
	case 1:
		r = 0;
		break;
	case -2:
		snprintf(sig, len, "ambiguous");
		r = 0;
		break;
	}
out:
	blkid_free_probe(pr);
	close(fd);
	return r;
}

int blockdev_probe(const char *path, struct blockdev_info *info)
{
	struct stat st;
	size_t path_len = strlen(path);
	unsigned int pbs, io_opt;
	int lbs, fd, r;

	memset(info, 0, sizeof(*info));
	info->rotational = -1;
	if (path_len >= sizeof(info->path))
		return -ENAMETOOLONG;
	memcpy(info->path, path, path_len + 1);
	/* stat first: opening a FIFO by mistake would block. */
	r = blockdev_stat(path, &st);
	if (r < 0)
		return r;
	info->rdev = st.st_rdev;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, BLKGETSIZE64, &info->size) < 0 || ioctl(fd, BLKSSZGET, &lbs) < 0 ||
	    ioctl(fd, BLKPBSZGET, &pbs) < 0) {
		r = -errno;
		goto out;
	}
	info->logical_block_size = (uint32_t)lbs;
	info->physical_block_size = pbs;
	if (ioctl(fd, BLKIOOPT, &io_opt) < 0)
		io_opt = 0;
	info->optimal_io_size = io_opt;
	info->rotational = blockdev_rotational(info->rdev);
	r = blockdev_has_tierd_magic(fd, info->size, info->logical_block_size);
	if (r > 0)
		snprintf(info->signature, sizeof(info->signature), "tierd");
	else if (r == 0)
		r = blockdev_blkid(path, info->signature, sizeof(info->signature));
	if (r > 0)
		r = 0;
out:
	close(fd);
	return r;
}

int blockdev_open_exclusive(const char *path, int flags, int *fd_out)
{
	struct stat st;
	int r = blockdev_stat(path, &st);

	*fd_out = -1;
	if (r < 0)
		return r;
	/* With O_CREAT, O_EXCL would mean "must not exist" instead. */
	r = open(path, (flags & ~O_CREAT) | O_EXCL);
	if (r < 0)
		return -errno;
	*fd_out = r;
	return 0;
}

int blockdev_holders(const char *path, char *buf, size_t len)
{
	char dir_path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	size_t used = 0;
	DIR *dir;
	int r = blockdev_stat(path, &st);

	if (len == 0)
		return -ERANGE;
	buf[0] = '\0';
	if (r < 0)
		return r;
	r = blockdev_sysfs_path(dir_path, sizeof(dir_path), st.st_rdev, "holders");
	if (r < 0)
		return r;
	dir = opendir(dir_path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		int n;

		if (de->d_name[0] == '.')
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", de->d_name);
		if (n < 0 || (size_t)n >= len - used) {
			buf[0] = '\0';
			r = -ERANGE;
			break;
		}
		used += (size_t)n;
	}
	closedir(dir);
	return r;
}

/* pread and pwrite take off_t: refuse what would wrap it. */
static int blockdev_range_ok(uint64_t offset, uint64_t len)
{
	return offset <= INT64_MAX && len <= INT64_MAX - offset;
}

/* One loop for both directions; p is only read from when writing. */
static int blockdev_io(int fd, uint64_t offset, char *p, size_t len, int write)
{
	if (!blockdev_range_ok(offset, len))
		return -EINVAL;
	while (len > 0) {
		ssize_t n = write ? pwrite(fd, p, len, (off_t)offset) : pread(fd, p, len, (off_t)offset);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		offset += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int blockdev_read(int fd, uint64_t offset, void *buf, size_t len)
{
	return blockdev_io(fd, offset, buf, len, 0);
}

int blockdev_write(int fd, uint64_t offset, const void *buf, size_t len)
{
	return blockdev_io(fd, offset, (char *)buf, len, 1);
}

int blockdev_flush(int fd)
{
	return fdatasync(fd) < 0 ? -errno : 0;
}

static int blockdev_write_zeroes(int fd, uint64_t offset, uint64_t len)
{
	size_t chunk = len < BLOCKDEV_ZERO_CHUNK ? (size_t)len : BLOCKDEV_ZERO_CHUNK;
	void *zeroes;
	int r = 0;

	if (posix_memalign(&zeroes, BLOCKDEV_ALIGN, chunk) != 0)
		return -ENOMEM;
	memset(zeroes, 0, chunk);
	while (len > 0 && r == 0) {
		size_t n = len < chunk ? (size_t)len : chunk;

		r = blockdev_write(fd, offset, zeroes, n);
		offset += n;
		len -= n;
	}
	free(zeroes);
	return r;
}

int blockdev_wipe(int fd, uint64_t offset, uint64_t len)
{
	uint64_t range[2] = { offset, len };

	if (!blockdev_range_ok(offset, len))
		return -EINVAL;
	if (len == 0)
		return 0;
	if (ioctl(fd, BLKZEROOUT, range) == 0)
		return 0;
	if (errno != ENOTTY && errno != EOPNOTSUPP)
		return -errno;
	return blockdev_write_zeroes(fd, offset, len);
}

/* Depth-bounded: a stack deeper than this is not one the kernel builds. */
static int stacked_on(dev_t upper, dev_t lower, int depth)
{
	char path[PATH_MAX];
	struct dirent *e;
	int found = 0;
	DIR *d;

	if (upper == lower)
		return 1;
	if (depth > 16)
		return 0;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/slaves", major(upper), minor(upper));
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		char dev_path[PATH_MAX + 300], text[32];
		unsigned maj, min;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(dev_path, sizeof(dev_path), "%s/%s/dev", path, e->d_name);
		f = fopen(dev_path, "re");
		if (!f)
			continue;
		if (fgets(text, sizeof(text), f) && sscanf(text, "%u:%u", &maj, &min) == 2)
			found = stacked_on(makedev(maj, min), lower, depth + 1);
		fclose(f);
	}
	closedir(d);
	return found;
}

int blockdev_stacked_on(dev_t upper, dev_t lower)
{
	return stacked_on(upper, lower, 0);
}
