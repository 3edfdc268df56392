/* SPDX-License-Identifier: GPL-2.0-or-later */
/* udevprops: a pool member's superblock as udev properties, blkid's way. */
#include "udevprops.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* blkid's whitelist (libblkid encode.c), by hand: isalnum() follows the locale. */
static bool udevprops_safe(unsigned char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	       (ch && strchr("#+-.:=@_", ch));
}

int udevprops_encode(const char *s, char *out, size_t cap)
{
	size_t j = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (udevprops_safe(*p)) {
			if (cap - j < 2)
				return -ENOSPC;
			out[j++] = (char)*p;
		} else {
			if (cap - j < 5)
				return -ENOSPC;
			snprintf(out + j, 5, "\\x%02x", *p);
			j += 4;
		}
	}
	if (cap - j < 1)
		return -ENOSPC;
	out[j] = '\0';
	return (int)j;
}

struct udevprops_out {
	char *buf;
	size_t cap, len;
	bool full;
};

__attribute__((format(printf, 2, 3)))
static void udevprops_line(struct udevprops_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->cap - o->len) {
		o->full = true;
		return;
	}
	o->len += (size_t)n;
}

/* KEY=value and KEY_ENC=encoded value, as blkid pairs them. */
static void udevprops_pair(struct udevprops_out *o, const char *key, const char *value)
{
	char enc[4 * METADATA_NAME_MAX + 1];

	if (udevprops_encode(value, enc, sizeof(enc)) < 0) {
		o->full = true;
		return;
	}
	udevprops_line(o, "%s=%s\n%s_ENC=%s\n", key, value, key, enc);
}

int udevprops_format(const struct metadata_sb *sb, char *out, size_t cap)
{
	struct udevprops_out o = { .buf = out, .cap = cap };
	char pool[37], dev[37];

	if (metadata_name_valid(sb->pool_name))
		return -EINVAL;
	if (!cap)
		return -ENOSPC;
	out[0] = '\0';
	metadata_uuid_format(sb->pool_uuid, pool);
	metadata_uuid_format(sb->dev_uuid, dev);
	udevprops_line(&o, "ID_FS_TYPE=" UDEVPROPS_TYPE "\n");
	/* "raid", as for LVM2_member and linux_raid_member: not a file system to mount. */
	udevprops_line(&o, "ID_FS_USAGE=raid\n");
	udevprops_line(&o, "ID_FS_VERSION=%u\n", (unsigned)sb->version);
	/* The pool's uuid is the same on every member, as an md array's. */
	udevprops_pair(&o, "ID_FS_UUID", pool);
	udevprops_pair(&o, "ID_FS_UUID_SUB", dev);
	udevprops_pair(&o, "ID_FS_LABEL", sb->pool_name);
	udevprops_line(&o, "TIERD_POOL_NAME=%s\n", sb->pool_name);
	if (o.full)
		return -ENOSPC;
	return (int)o.len;
}

int udevprops_probe(const void *block, size_t len, char *out, size_t cap)
{
	struct metadata_sb sb;
	int r;

	if (len < METADATA_BLOCK)
		return -ENODATA;
	r = metadata_sb_decode(&sb, block);
	if (r == -EPROTONOSUPPORT && cap) {
		/*
		 * An intact superblock of a newer tierd: only the first 16 bytes
		 * are common to every version, so what is past them is not read,
		 * but the device is a member all the same: mkfs over it would
		 * destroy a pool.
		 */
		const unsigned char *b = block;
		unsigned version = b[8] | b[9] << 8 | (unsigned)b[10] << 16 | (unsigned)b[11] << 24;
		int n = snprintf(out, cap, "ID_FS_TYPE=" UDEVPROPS_TYPE "\nID_FS_USAGE=raid\n"
				 "ID_FS_VERSION=%u\n", version);

		return n < 0 || (size_t)n >= cap ? -ENOSPC : n;
	}
	if (r < 0)
		return r;
	return udevprops_format(&sb, out, cap);
}
