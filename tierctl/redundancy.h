/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * redundancy: whether the device given as an SSD tier survives a disk of its
 * own failing. The SSD tier holds the only copy of what tierd promotes to
 * it, so create and attach warn when it does not (docs/pools.md).
 */
#ifndef TIERCTL_REDUNDANCY_H
#define TIERCTL_REDUNDANCY_H

enum redundancy {
	REDUNDANCY_NONE,    /* a disk, a partition, RAID0 or a linear md array */
	REDUNDANCY_YES,     /* md RAID1, 4, 5, 6 or 10 */
	REDUNDANCY_UNKNOWN, /* built on other devices in a way tierctl cannot judge (dm, LVM) */
};

/* From md's sysfs "level" ("raid1", "raid0", "linear"...). Pure. */
enum redundancy redundancy_of_md_level(const char *level);

/* Of the block device at path, from sysfs; REDUNDANCY_UNKNOWN when it cannot tell. */
enum redundancy redundancy_of(const char *path);

/*
 * Warn on stderr, after a pool create or tier attach took ssd, when the SSD
 * tier has no redundancy or tierctl cannot tell.
 */
void redundancy_warn_ssd(const char *ssd);

#endif
