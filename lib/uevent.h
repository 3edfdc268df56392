/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uevent: a kernel uevent as the kernel's netlink socket delivers it
 * (NETLINK_KOBJECT_UEVENT, group 1): "ACTION@DEVPATH\0" then KEY=VALUE
 * strings, each NUL-terminated.  Pure.
 */
#ifndef TIERD_UEVENT_H
#define TIERD_UEVENT_H

#include <stddef.h>

struct uevent {
	/* Pointers into the parsed buffer; "" when the event has no such key. */
	const char *action;    /* add, change, remove, ... */
	const char *devpath;
	const char *subsystem; /* block, ... */
	const char *devname;   /* vda, md0, mapper/..., without /dev/ */
	const char *devtype;   /* disk, partition */
};

/*
 * Parse buf[0, len); buf must stay alive and unchanged while *ev is used.
 * -EINVAL: not a kernel uevent (udev's own "libudev" messages on the same
 * family are rejected too), or one that does not end in a NUL.
 */
int uevent_parse(const char *buf, size_t len, struct uevent *ev);

#endif
