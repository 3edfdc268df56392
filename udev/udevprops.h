/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TIERD_UDEVPROPS_H
#define TIERD_UDEVPROPS_H

#include <stddef.h>

#include "metadata.h"

/*
 * udevprops: what tierd-probe prints for udev's IMPORT{program}, the
 * properties blkid sets for a file system or RAID member (ID_FS_TYPE,
 * ID_FS_UUID, ...), so lsblk, wipefs users and udev rules see a pool member
 * as one.  Pure: the caller reads the device.
 */

#define UDEVPROPS_TYPE "tierd_member"
/* Room for every line of a superblock's properties. */
#define UDEVPROPS_MAX 1024

/*
 * blkid_encode_string()'s safe form, as blkid gives ID_FS_LABEL_ENC: every
 * byte outside [0-9A-Za-z#+-.:=@_], '\\' included, becomes \xNN (lower-case
 * hex).  blkid keeps valid multi-byte UTF-8 as it is; this escapes those
 * bytes too, which lsblk decodes back all the same (pool names are ASCII).
 * Returns the length written (a NUL follows) or -ENOSPC.
 */
int udevprops_encode(const char *s, char *out, size_t cap);

/*
 * The KEY=VALUE lines, each ending in a newline, for a decoded superblock.
 * -EINVAL: the pool name is not one metadata_name_valid() accepts (a
 * newline in it would pass for another property); -ENOSPC.  Returns the
 * length written otherwise.
 */
int udevprops_format(const struct metadata_sb *sb, char *out, size_t cap);

/*
 * The first len bytes of a device: the lines for a valid tierd superblock
 * (for an intact one of a newer version, only its type, usage and version),
 * or what metadata_sb_decode() says (-ENOENT no magic, -EBADMSG, ...);
 * -ENODATA when len is under METADATA_BLOCK (a device too small to be a
 * member).  Returns the length written otherwise.
 */
int udevprops_probe(const void *block, size_t len, char *out, size_t cap);

#endif
