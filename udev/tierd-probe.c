/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tierd-probe DEVNODE: udev's IMPORT{program} for 69-tierd.rules.  Prints
 * the device's properties (udevprops.h) if it starts with a valid tierd
 * superblock.  Exit status: 0 a member; 1 not a member (nothing printed,
 * udev imports nothing) or an I/O error (said on stderr); 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "metadata.h"
#include "udevprops.h"

/* Read up to len bytes from the start; a short count means the device is smaller. */
static ssize_t read_start(int fd, unsigned char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int main(int argc, char **argv)
{
	static unsigned char block[METADATA_BLOCK];
	char out[UDEVPROPS_MAX];
	ssize_t got;
	int fd, r;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: tierd-probe DEVNODE\n");
		return 2;
	}
	/* Read-only: closing a device opened for writing makes udev probe it again. */
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "tierd-probe: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	got = read_start(fd, block, sizeof(block));
	close(fd);
	if (got < 0) {
		fprintf(stderr, "tierd-probe: %s: %s\n", argv[1], strerror((int)-got));
		return 1;
	}
	r = udevprops_probe(block, (size_t)got, out, sizeof(out));
	if (r < 0)
		return 1;
	if (fputs(out, stdout) == EOF || fflush(stdout) == EOF) {
		fprintf(stderr, "tierd-probe: cannot write: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
