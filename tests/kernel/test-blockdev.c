/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blockdev on real block devices, in steps that tests/vm/cases/blockdev.sh
 * runs and cross-checks with blockdev(8), blkid(8), dmsetup and dd:
 *
 *   test-blockdev probe DEV                 print what blockdev_probe() finds
 *   test-blockdev errors DEV MISSING FILE   paths that are not usable devices
 *   test-blockdev free DEV                  exclusive open of an unused device
 *   test-blockdev busy DEV HOLDERS          a device in use: -EBUSY, who holds it
 *   test-blockdev io DEV DATA OFFSET WIPE_OFFSET WIPE_LEN
 *                                           O_DIRECT write, flush, read, wipe
 */
#include "blockdev.h"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#define ALIGN 4096

static void *aligned(size_t len)
{
	void *p = NULL;

	CHECK_INT(posix_memalign(&p, ALIGN, len), 0);
	return p;
}

static uint64_t number(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	CHECK(*s && !*end);
	return v;
}

static void step_probe(const char *dev)
{
	struct blockdev_info info;
	struct stat st;

	CHECK_OK(blockdev_probe(dev, &info));
	CHECK(stat(dev, &st) == 0);
	CHECK_UINT(info.rdev, st.st_rdev);
	CHECK_STR(info.path, dev);
	CHECK(info.logical_block_size >= 512 &&
	      !(info.logical_block_size & (info.logical_block_size - 1)));
	CHECK(info.physical_block_size >= info.logical_block_size);
	printf("size=%" PRIu64 "\nlbs=%u\npbs=%u\nrotational=%d\nsignature=%s\nrdev=%u:%u\n",
	       info.size, info.logical_block_size, info.physical_block_size, info.rotational,
	       info.signature, major(info.rdev), minor(info.rdev));
}

/* Probing as an unprivileged user: the device node is root's. */
static void check_probe_denied(const char *dev)
{
	struct blockdev_info info;
	pid_t pid = fork();
	int status;

	CHECK(pid >= 0);
	if (pid == 0) {
		int r = -1;

		if (setgroups(0, NULL) == 0 && setgid(65534) == 0 && setuid(65534) == 0)
			r = blockdev_probe(dev, &info);
		if (r != -EACCES)
			fprintf(stderr, "probe as nobody: %d, expected %d\n", r, -EACCES);
		_exit(r == -EACCES ? 0 : 1);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The fallback of blockdev_wipe(): a regular file has no BLKZEROOUT. */
static void check_wipe_file(const char *file)
{
	unsigned char buf[3 * ALIGN], want[3 * ALIGN];
	int fd = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	CHECK(fd >= 0);
	memset(want, 0xaa, sizeof(want));
	CHECK_OK(blockdev_write(fd, 0, want, sizeof(want)));
	CHECK_OK(blockdev_wipe(fd, ALIGN, ALIGN));
	memset(want + ALIGN, 0, ALIGN);
	CHECK_OK(blockdev_read(fd, 0, buf, sizeof(buf)));
	CHECK(memcmp(buf, want, sizeof(buf)) == 0);
	CHECK_INT(blockdev_read(fd, 2 * ALIGN, buf, 2 * ALIGN), -EIO);
	CHECK_OK(blockdev_flush(fd));
	close(fd);
}

static void step_errors(const char *dev, const char *missing, const char *file)
{
	struct blockdev_info info;
	char holders[64], long_path[PATH_MAX + 8];
	int fd = 123;

	CHECK_INT(blockdev_probe(missing, &info), -ENOENT);
	CHECK_INT(blockdev_probe(file, &info), -ENOTBLK);
	CHECK_INT(blockdev_probe("/dev/null", &info), -ENOTBLK);
	CHECK_INT(blockdev_open_exclusive(missing, O_RDWR, &fd), -ENOENT);
	CHECK_INT(fd, -1);
	CHECK_INT(blockdev_open_exclusive(file, O_RDWR, &fd), -ENOTBLK);
	CHECK_INT(fd, -1);
	CHECK_INT(blockdev_holders(missing, holders, sizeof(holders)), -ENOENT);
	CHECK_INT(blockdev_holders(file, holders, sizeof(holders)), -ENOTBLK);
	memset(long_path, '/', sizeof(long_path) - 1);
	long_path[sizeof(long_path) - 1] = '\0';
	CHECK_INT(blockdev_probe(long_path, &info), -ENAMETOOLONG);
	check_probe_denied(dev);
	check_wipe_file(file);
}

static void step_free(const char *dev)
{
	char holders[64];
	int fd, fd2;

	CHECK_OK(blockdev_holders(dev, holders, sizeof(holders)));
	CHECK_STR(holders, "");
	CHECK_OK(blockdev_open_exclusive(dev, O_RDWR | O_DIRECT | O_CLOEXEC, &fd));
	CHECK(fd >= 0);
	/* O_EXCL openers exclude each other, even within one process. */
	CHECK_INT(blockdev_open_exclusive(dev, O_RDONLY | O_CLOEXEC, &fd2), -EBUSY);
	CHECK_INT(fd2, -1);
	close(fd);
	CHECK_OK(blockdev_open_exclusive(dev, O_RDONLY | O_CLOEXEC, &fd2));
	close(fd2);
}

static void step_busy(const char *dev, const char *want)
{
	struct blockdev_info info;
	char holders[64];
	int fd = 123;

	CHECK_INT(blockdev_open_exclusive(dev, O_RDWR | O_DIRECT | O_CLOEXEC, &fd), -EBUSY);
	CHECK_INT(fd, -1);
	CHECK_OK(blockdev_holders(dev, holders, sizeof(holders)));
	CHECK_STR(holders, want);
	if (want[0])
		CHECK_INT(blockdev_holders(dev, holders, 2), -ERANGE);
	/* Probing opens without O_EXCL: it must work on a busy device, to explain it. */
	CHECK_OK(blockdev_probe(dev, &info));
	printf("busy, holders '%s', signature '%s'\n", want, info.signature);
}

static void step_io(const char *dev, const char *data_path, uint64_t offset, uint64_t wipe_off,
		    uint64_t wipe_len)
{
	struct blockdev_info info;
	struct stat st;
	unsigned char *data, *back;
	size_t len;
	int fd, data_fd;

	CHECK_OK(blockdev_probe(dev, &info));
	data_fd = open(data_path, O_RDONLY | O_CLOEXEC);
	CHECK(data_fd >= 0 && fstat(data_fd, &st) == 0);
	len = (size_t)st.st_size;
	CHECK(len % ALIGN == 0 && wipe_off >= offset && wipe_off + wipe_len <= offset + len);
	data = aligned(len);
	back = aligned(len);
	CHECK_OK(blockdev_read(data_fd, 0, data, len));
	close(data_fd);

	CHECK_OK(blockdev_open_exclusive(dev, O_RDWR | O_DIRECT | O_CLOEXEC, &fd));
	CHECK_OK(blockdev_write(fd, offset, data, len));
	CHECK_OK(blockdev_flush(fd));
	CHECK_OK(blockdev_read(fd, offset, back, len));
	CHECK(memcmp(data, back, len) == 0);

	CHECK_OK(blockdev_wipe(fd, wipe_off, wipe_len));
	memset(data + (wipe_off - offset), 0, wipe_len);
	CHECK_OK(blockdev_read(fd, offset, back, len));
	CHECK(memcmp(data, back, len) == 0);
	CHECK_OK(blockdev_wipe(fd, 0, 0));

	/* The edges: the end of the device, and O_DIRECT's alignment. */
	CHECK_INT(blockdev_read(fd, info.size - info.logical_block_size, back,
				2 * info.logical_block_size), -EIO);
	CHECK_INT(blockdev_write(fd, info.size, data, info.logical_block_size), -ENOSPC);
	CHECK_INT(blockdev_write(fd, info.logical_block_size / 2, data, info.logical_block_size),
		  -EINVAL);
	CHECK_INT(blockdev_wipe(fd, info.size, 4096), -EINVAL);
	CHECK_INT(blockdev_read(fd, UINT64_MAX - 512, back, 4096), -EINVAL);
	close(fd);
	free(data);
	free(back);
}

static void usage(void)
{
	fprintf(stderr, "usage: test-blockdev probe|errors|free|busy|io DEV [ARGS...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *step;

	if (argc < 3)
		usage();
	step = argv[1];
	if (!strcmp(step, "probe") && argc == 3)
		step_probe(argv[2]);
	else if (!strcmp(step, "errors") && argc == 5)
		step_errors(argv[2], argv[3], argv[4]);
	else if (!strcmp(step, "free") && argc == 3)
		step_free(argv[2]);
	else if (!strcmp(step, "busy") && argc == 4)
		step_busy(argv[2], argv[3]);
	else if (!strcmp(step, "io") && argc == 7)
		step_io(argv[2], argv[3], number(argv[4]), number(argv[5]), number(argv[6]));
	else
		usage();
	return 0;
}
