/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmctl against the kernel's device-mapper, in steps that
 * tests/vm/cases/dmctl.sh runs between its own checks with dmsetup and dd:
 *
 *   test-dmctl create NAME A B    a 2-segment linear volume over A and B
 *   test-dmctl swap NAME A B      load, clear, load again, suspend, resume
 *   test-dmctl reject NAME A      tables and names the kernel refuses
 *   test-dmctl message NAME       @stats_create / @stats_list
 *   test-dmctl busy NAME A        remove while open: -EBUSY, then force
 *   test-dmctl big NAME A B       a table of 65,536 targets over A loaded again
 *                                 after its status was read, then swap's again
 *   test-dmctl table|status NAME  print what dmctl reads, for dmsetup to compare
 *
 * Layout (sectors): 8192 of A from 8192 (to A's end: A is 8 MiB), then 16384
 * of B from 4096; "swap" puts B's segment first.
 */
#include "blockdev.h"
#include "check.h"
#include "dmctl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define VOLUME_SECTORS 24576

struct layout {
	char a[32], b[32]; /* "MAJ:MIN" */
	char a_seg[64], b_seg[64];
	struct dmctl_target first[2], swapped[2];
	char first_text[256], swapped_text[256];
};

static void dev_numbers(const char *path, char *buf, size_t len)
{
	struct stat st;

	CHECK(stat(path, &st) == 0 && S_ISBLK(st.st_mode));
	snprintf(buf, len, "%u:%u", major(st.st_rdev), minor(st.st_rdev));
}

static void layout_init(struct layout *l, const char *a, const char *b)
{
	dev_numbers(a, l->a, sizeof(l->a));
	dev_numbers(b, l->b, sizeof(l->b));
	snprintf(l->a_seg, sizeof(l->a_seg), "%s 8192", l->a);
	snprintf(l->b_seg, sizeof(l->b_seg), "%s 4096", l->b);
	l->first[0] = (struct dmctl_target){ 0, 8192, "linear", l->a_seg };
	l->first[1] = (struct dmctl_target){ 8192, 16384, "linear", l->b_seg };
	l->swapped[0] = (struct dmctl_target){ 0, 16384, "linear", l->b_seg };
	l->swapped[1] = (struct dmctl_target){ 16384, 8192, "linear", l->a_seg };
	snprintf(l->first_text, sizeof(l->first_text),
		 "0 8192 linear %s\n8192 16384 linear %s\n", l->a_seg, l->b_seg);
	snprintf(l->swapped_text, sizeof(l->swapped_text),
		 "0 16384 linear %s\n16384 8192 linear %s\n", l->b_seg, l->a_seg);
}

static void check_table(const char *name, const char *want)
{
	char *text = NULL;

	CHECK_OK(dmctl_table(name, &text));
	CHECK_STR(text, want);
	free(text);
}

static struct dmctl_info info_of(const char *name)
{
	struct dmctl_info info;

	CHECK_OK(dmctl_info(name, &info));
	return info;
}

/* r must be want, with libdevmapper's (or dmctl's) reason recorded. */
static void check_fails(int r, int want)
{
	CHECK_INT(r, want);
	CHECK(dmctl_last_error()[0] != '\0');
	printf("  %s -> %s\n", strerror(-want), dmctl_last_error());
	dmctl_init();
}

static void check_gone(const char *name)
{
	char node[128];

	CHECK_INT(info_of(name).exists, 0);
	snprintf(node, sizeof(node), "/dev/mapper/%s", name);
	CHECK(access(node, F_OK) != 0 && errno == ENOENT);
}

static void step_create(const char *name, const char *a, const char *b)
{
	struct layout l;
	struct dmctl_info info;
	struct stat st;
	char node[128], uuid[64], got[64], other[64], *text = NULL;

	layout_init(&l, a, b);
	snprintf(node, sizeof(node), "/dev/mapper/%s", name);
	snprintf(uuid, sizeof(uuid), "TIERD-test-%s", name);
	snprintf(other, sizeof(other), "%s-other", name);
	check_gone(name);

	CHECK_OK(dmctl_create(name, uuid, l.first, 2));
	info = info_of(name);
	CHECK_INT(info.exists, 1);
	CHECK_INT(info.suspended, 0);
	CHECK_INT(info.live_table, 1);
	CHECK_INT(info.inactive_table, 0);
	CHECK_UINT(info.open_count, 0);
	CHECK_UINT(info.size_sectors, VOLUME_SECTORS);
	/* No udev here: the node is libdevmapper's work, and must match the kernel's numbers. */
	CHECK(stat(node, &st) == 0 && S_ISBLK(st.st_mode));
	CHECK_UINT(major(st.st_rdev), info.major);
	CHECK_UINT(minor(st.st_rdev), info.minor);
	check_table(name, l.first_text);
	CHECK_OK(dmctl_status(name, &text));
	CHECK_STR(text, "0 8192 linear \n8192 16384 linear \n");
	free(text);
	CHECK_OK(dmctl_uuid(name, got, sizeof(got)));
	CHECK_STR(got, uuid);
	CHECK_INT(dmctl_uuid(name, got, 4), -ERANGE);

	/* Taken names and uuids are refused, and the refusal leaves nothing behind. */
	check_fails(dmctl_create(name, "TIERD-test-unused", l.first, 2), -EEXIST);
	check_fails(dmctl_create(other, uuid, l.first, 2), -EEXIST);
	check_gone(other);
	check_table(name, l.first_text);
}

static void step_swap(const char *name, const char *a, const char *b)
{
	struct layout l;
	struct dmctl_info info;

	layout_init(&l, a, b);
	CHECK_OK(dmctl_load(name, l.swapped, 2));
	info = info_of(name);
	CHECK_INT(info.inactive_table, 1);
	CHECK_INT(info.suspended, 0);
	check_table(name, l.first_text); /* I/O still uses the live table */

	CHECK_OK(dmctl_clear(name));
	CHECK_INT(info_of(name).inactive_table, 0);
	CHECK_OK(dmctl_suspend(name, 0));
	CHECK_INT(info_of(name).suspended, 1);
	CHECK_OK(dmctl_resume(name)); /* nothing to swap in after the clear */
	check_table(name, l.first_text);

	CHECK_OK(dmctl_load(name, l.swapped, 2));
	CHECK_OK(dmctl_suspend(name, 1));
	info = info_of(name);
	CHECK_INT(info.suspended, 1);
	CHECK_INT(info.inactive_table, 1);
	check_table(name, l.first_text);
	CHECK_OK(dmctl_resume(name));
	info = info_of(name);
	CHECK_INT(info.suspended, 0);
	CHECK_INT(info.inactive_table, 0);
	CHECK_UINT(info.size_sectors, VOLUME_SECTORS);
	check_table(name, l.swapped_text);
}

static void step_reject(const char *name, const char *a)
{
	char a_nr[32], params[64], scratch[128], *text = NULL;
	struct dmctl_target t = { 0, 8192, "linear", params };
	struct dmctl_info before = info_of(name);
	const char *none = "tierd-test-none";

	dev_numbers(a, a_nr, sizeof(a_nr));
	snprintf(scratch, sizeof(scratch), "%s-scratch", name);

	/* Each rejected create is rolled back: no device, no node. */
	t.type = "no-such-target";
	check_fails(dmctl_create(scratch, NULL, &t, 1), -EINVAL);
	check_gone(scratch);
	t.type = "linear";
	snprintf(params, sizeof(params), "%s", a_nr); /* no offset */
	check_fails(dmctl_create(scratch, NULL, &t, 1), -EINVAL);
	check_gone(scratch);
	snprintf(params, sizeof(params), "%s 8193", a_nr); /* one sector past A's end */
	check_fails(dmctl_create(scratch, NULL, &t, 1), -EINVAL);
	check_gone(scratch);
	check_fails(dmctl_create(scratch, NULL, &t, 0), -EINVAL);
	check_gone(scratch);

	/*
	 * A live volume only finds out at the swap that a table does not fit:
	 * the resume fails, the old table stays, and a second resume restarts I/O.
	 */
	CHECK_OK(dmctl_load(name, &t, 1));
	CHECK_OK(dmctl_suspend(name, 1));
	check_fails(dmctl_resume(name), -EINVAL);
	CHECK_INT(info_of(name).inactive_table, 0);
	CHECK_OK(dmctl_resume(name));
	CHECK_INT(info_of(name).suspended, 0);
	CHECK_UINT(info_of(name).size_sectors, before.size_sectors);

	/* Every call on a missing device says so. */
	check_fails(dmctl_load(none, &t, 1), -ENXIO);
	check_fails(dmctl_clear(none), -ENXIO);
	check_fails(dmctl_suspend(none, 1), -ENXIO);
	check_fails(dmctl_resume(none), -ENXIO);
	check_fails(dmctl_remove(none, 0), -ENXIO);
	check_fails(dmctl_remove(none, 1), -ENXIO);
	check_fails(dmctl_table(none, &text), -ENXIO);
	CHECK(text == NULL);
	check_fails(dmctl_status(none, &text), -ENXIO);
	check_fails(dmctl_uuid(none, params, sizeof(params)), -ENXIO);
	check_fails(dmctl_message(none, 0, "@stats_list", &text), -ENXIO);
	CHECK(text == NULL);
	check_gone(none);

	/* A closed device goes at once, forced or not. */
	snprintf(params, sizeof(params), "%s 0", a_nr);
	t.len = 2048;
	CHECK_OK(dmctl_create(scratch, NULL, &t, 1));
	CHECK_OK(dmctl_remove(scratch, 0));
	check_gone(scratch);
	CHECK_OK(dmctl_create(scratch, NULL, &t, 1));
	CHECK_OK(dmctl_remove(scratch, 1));
	check_gone(scratch);
}

static void step_message(const char *name)
{
	char *answer = NULL;

	CHECK_OK(dmctl_message(name, 0, "@stats_create - /4 tierd-test", &answer));
	CHECK_STR(answer, "0");
	free(answer);
	CHECK_OK(dmctl_message(name, 0, "@stats_list tierd-test", &answer));
	CHECK_STR(answer, "0: 0+24576 6144 tierd-test -\n");
	free(answer);
	CHECK_OK(dmctl_message(name, 0, "@stats_list someone-else", &answer));
	CHECK_STR(answer, "");
	free(answer);
	CHECK_OK(dmctl_message(name, 0, "@stats_clear 0", NULL));
	check_fails(dmctl_message(name, 0, "no-such-message", &answer), -EINVAL);
	CHECK(answer == NULL);
}

static int wait_gone(const char *name)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i < 500; i++) {
		if (!info_of(name).exists)
			return 1;
		nanosleep(&tick, NULL);
	}
	return 0;
}

static void step_busy(const char *name, const char *a)
{
	char node[128], holders[64], want[32], *text = NULL;
	struct dmctl_info info = info_of(name);
	char buf[512];
	int fd;

	snprintf(node, sizeof(node), "/dev/mapper/%s", name);
	snprintf(want, sizeof(want), "dm-%u", info.minor);
	CHECK_UINT(info.open_count, 0);
	fd = open(node, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_UINT(info_of(name).open_count, 1);

	check_fails(dmctl_remove(name, 0), -EBUSY);
	CHECK_INT(info_of(name).exists, 1);
	CHECK_OK(blockdev_holders(a, holders, sizeof(holders)));
	CHECK_STR(holders, want);

	/*
	 * Forced: the table becomes `error` at once, which lets go of A and B;
	 * the device itself goes when its last opener closes it.
	 */
	CHECK_OK(dmctl_remove(name, 1));
	info = info_of(name);
	CHECK_INT(info.exists, 1);
	CHECK_UINT(info.open_count, 1);
	CHECK_OK(dmctl_table(name, &text));
	CHECK_STR(text, "0 24576 error \n");
	free(text);
	CHECK_OK(blockdev_holders(a, holders, sizeof(holders)));
	CHECK_STR(holders, "");
	CHECK(pread(fd, buf, sizeof(buf), 0) < 0 && errno == EIO);
	close(fd);
	CHECK(wait_gone(name));
	check_gone(name);
}

/*
 * The volume's table at tierd's default table-targets: 65,536 one-sector
 * linear targets over A. libdevmapper keeps, for the life of the process,
 * how often it had to double its buffer for a status, and makes every later
 * ioctl's buffer that much bigger: read back once, a table this long made
 * the next load ask for about a gigabyte, and fail.
 */
#define BIG_TARGETS 65536u
static void step_big(const char *name, const char *a, const char *b)
{
	struct layout l;
	struct dmctl_target *t = calloc(BIG_TARGETS, sizeof(*t));
	char *params = calloc(BIG_TARGETS, 48), dev[32], *text = NULL;
	struct timespec t0, t1;

	CHECK(t && params);
	layout_init(&l, a, b);
	dev_numbers(a, dev, sizeof(dev));
	for (uint32_t i = 0; i < BIG_TARGETS; i++) {
		/* A is 8 MiB: 16,384 sectors, each mapped four times over. */
		snprintf(params + i * 48, 48, "%s %u", dev, i % 16384);
		t[i] = (struct dmctl_target){ i, 1, "linear", params + i * 48 };
	}
	for (int round = 0; round < 2; round++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK_OK(dmctl_load(name, t, BIG_TARGETS));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("round %d: loaded %u targets in %.1f ms\n", round, BIG_TARGETS,
		       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
		CHECK_OK(dmctl_suspend(name, 1));
		CHECK_OK(dmctl_resume(name));
		CHECK_UINT(info_of(name).size_sectors, BIG_TARGETS);
		/* Both read every target: the second round loads after them. */
		CHECK_OK(dmctl_status(name, &text));
		free(text);
		CHECK_OK(dmctl_table(name, &text));
		CHECK(strncmp(text, "0 1 linear ", 11) == 0);
		free(text);
	}
	CHECK_OK(dmctl_load(name, l.swapped, 2));
	CHECK_OK(dmctl_suspend(name, 1));
	CHECK_OK(dmctl_resume(name));
	check_table(name, l.swapped_text);
	free(t);
	free(params);
}

static void print_text(int (*get)(const char *, char **), const char *name)
{
	char *text = NULL;

	CHECK_OK(get(name, &text));
	fputs(text, stdout);
	free(text);
}

static void usage(void)
{
	fprintf(stderr, "usage: test-dmctl create|swap|reject|message|busy|big|table|status NAME [DEV...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	char version[DMCTL_VERSION_MAX];
	const char *step, *name;
	int r;

	if (argc < 3)
		usage();
	step = argv[1];
	name = argv[2];
	dmctl_init();
	r = dmctl_driver_version(version, sizeof(version));
	if (r < 0) {
		fprintf(stderr, "SKIP: no device-mapper here (%s)\n", strerror(-r));
		return 77;
	}
	if (!strcmp(step, "create") && argc == 5)
		step_create(name, argv[3], argv[4]);
	else if (!strcmp(step, "swap") && argc == 5)
		step_swap(name, argv[3], argv[4]);
	else if (!strcmp(step, "reject") && argc == 4)
		step_reject(name, argv[3]);
	else if (!strcmp(step, "message") && argc == 3)
		step_message(name);
	else if (!strcmp(step, "busy") && argc == 4)
		step_busy(name, argv[3]);
	else if (!strcmp(step, "big") && argc == 5)
		step_big(name, argv[3], argv[4]);
	else if (!strcmp(step, "table") && argc == 3)
		print_text(dmctl_table, name);
	else if (!strcmp(step, "status") && argc == 3)
		print_text(dmctl_status, name);
	else
		usage();
	return 0;
}
