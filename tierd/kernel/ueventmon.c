/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "ueventmon.h"

#include <errno.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int ueventmon_open(struct ueventmon *m)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int size = 1 << 20;
	int fd, r;

	m->fd = -1;
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
	if (fd < 0)
		return -errno;
	/* md assembly and a disk hot-plug come in bursts: room for them (root may pass rmem_max). */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	m->fd = fd;
	return 0;
}

void ueventmon_close(struct ueventmon *m)
{
	if (m && m->fd >= 0) {
		close(m->fd);
		m->fd = -1;
	}
}

int ueventmon_read(struct ueventmon *m, struct uevent *ev)
{
	struct sockaddr_nl from;
	struct iovec iov = { m->buf, sizeof(m->buf) - 1 };
	struct msghdr msg = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov,
			      .msg_iovlen = 1 };
	ssize_t n;

	n = recvmsg(m->fd, &msg, 0);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	/* Only the kernel (port 0) speaks for the kernel's group. */
	if (from.nl_pid != 0 || (msg.msg_flags & MSG_TRUNC))
		return -EINVAL;
	return uevent_parse(m->buf, (size_t)n, ev);
}
