/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blockdev: the block devices tierd puts pools on, probed before anything is
 * written to them and opened so that nobody else can be using them.
 */
#ifndef TIERD_BLOCKDEV_H
#define TIERD_BLOCKDEV_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The first 8 bytes of a tierd superblock. */
#define BLOCKDEV_TIERD_MAGIC "TIERDSB1"

struct blockdev_info {
	char path[PATH_MAX];
	dev_t rdev;
	uint64_t size; /* bytes */
	uint32_t logical_block_size; /* the unit of O_DIRECT offsets and lengths */
	uint32_t physical_block_size;
	uint32_t optimal_io_size; /* bytes, 0 if none: a RAID's full stripe (md sets it) */
	int rotational; /* 1, 0, or -1 if the kernel does not say */
	/*
	 * What the device already holds: "" nothing known; "tierd"; a libblkid
	 * TYPE ("ext4", "linux_raid_member", "LVM2_member", ...); "pt:" and the
	 * PTTYPE of a partition table ("pt:gpt"); "ambiguous" if libblkid found
	 * several signatures that contradict each other.
	 */
	char signature[32];
};

/*
 * Describe the block device at path. -ENOENT missing, -ENOTBLK not a block
 * device, -EACCES not allowed to open it, -EIO if it cannot be read.
 */
int blockdev_probe(const char *path, struct blockdev_info *info);

/*
 * Open with O_EXCL added to flags (e.g. O_RDWR | O_DIRECT | O_CLOEXEC):
 * -EBUSY if the device is mounted, part of an md array or a device-mapper
 * device, or open O_EXCL elsewhere (blockdev_holders() tells which of the
 * stacked ones). -ENOENT, -ENOTBLK as for blockdev_probe(). *fd_out is -1 on
 * failure.
 */
int blockdev_open_exclusive(const char *path, int flags, int *fd_out);

/*
 * The kernel devices stacked on path ("dm-3", "md127"), comma separated, ""
 * if none. A mounted filesystem is not a holder. -ERANGE if len is too small.
 */
int blockdev_holders(const char *path, char *buf, size_t len);

/*
 * Whether block device upper is lower or is built on it, however deep
 * (sysfs slaves: LVM, dm-crypt or md over lower): 1 or 0.
 */
int blockdev_stacked_on(dev_t upper, dev_t lower);

/*
 * The whole range or an error: -EIO if the device ends first, -ENOSPC for a
 * write starting at its end, -EINVAL for what O_DIRECT cannot do (offset and
 * len must be multiples of the logical block size; a 4096-aligned buf always
 * does).
 */
int blockdev_read(int fd, uint64_t offset, void *buf, size_t len);
int blockdev_write(int fd, uint64_t offset, const void *buf, size_t len);

/* Make what was written durable (fdatasync: the device's cache is flushed). */
int blockdev_flush(int fd);

/*
 * Zero a range: BLKZEROOUT, so the kernel uses the device's own zeroing
 * where it has one; a descriptor without it (a file) gets zeroes written.
 * Offset and len must be multiples of 512.
 */
int blockdev_wipe(int fd, uint64_t offset, uint64_t len);

#endif
