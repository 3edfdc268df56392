/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "uevent.h"

#include <errno.h>
#include <string.h>

int uevent_parse(const char *buf, size_t len, struct uevent *ev)
{
	const char *at;
	size_t pos;

	*ev = (struct uevent){ "", "", "", "", "" };
	if (len == 0 || buf[len - 1] != '\0')
		return -EINVAL;
	at = strchr(buf, '@');
	/* The header's ACTION and DEVPATH are repeated as keys; its shape is what tells a uevent. */
	if (!at || at == buf || at[1] != '/')
		return -EINVAL;
	for (pos = strlen(buf) + 1; pos < len; pos += strlen(buf + pos) + 1) {
		static const struct {
			const char *key;
			size_t offset;
		} keys[] = {
			{ "ACTION=", offsetof(struct uevent, action) },
			{ "DEVPATH=", offsetof(struct uevent, devpath) },
			{ "SUBSYSTEM=", offsetof(struct uevent, subsystem) },
			{ "DEVNAME=", offsetof(struct uevent, devname) },
			{ "DEVTYPE=", offsetof(struct uevent, devtype) },
		};
		const char *kv = buf + pos;

		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			size_t n = strlen(keys[k].key);

			if (strncmp(kv, keys[k].key, n) == 0)
				*(const char **)((char *)ev + keys[k].offset) = kv + n;
		}
	}
	if (!*ev->action || !*ev->devpath)
		return -EINVAL;
	return 0;
}
