/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ueventmon: the kernel's device events, read from its netlink socket.
 * The kernel's own events rather than udev's, so that tierd hears of an md
 * array or a disk whether or not udev runs (the test VM has none); the
 * device node exists by then (devtmpfs).
 */
#ifndef TIERD_UEVENTMON_H
#define TIERD_UEVENTMON_H

#include "uevent.h"

#define UEVENTMON_BUF 8192

struct ueventmon {
	int fd;
	char buf[UEVENTMON_BUF];
};

/* Non-blocking socket in m->fd; -errno. */
int ueventmon_open(struct ueventmon *m);
void ueventmon_close(struct ueventmon *m);
/*
 * The next event into *ev (pointing into m->buf, valid until the next
 * call): 0; -EAGAIN when none is waiting; -ENOBUFS when the kernel dropped
 * events (the caller should assume anything changed); -EINVAL for a message
 * that is not a kernel uevent (skip it); other -errno.
 */
int ueventmon_read(struct ueventmon *m, struct uevent *ev);

#endif
