/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tierctl's pure helpers: durations and times (timefmt), FIEMAP range merging
 * (ranges), a file's pieces joined with the volume's runs (fileplace).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bar.h"
#include "check.h"
#include "fileplace.h"
#include "ranges.h"
#include "redundancy.h"
#include "timefmt.h"
#include "array.h"

#define MIB (UINT64_C(1) << 20)

static void check_duration(const char *text, uint64_t expected)
{
	uint64_t s = 12345;

	CHECK_OK(timefmt_parse_duration(text, &s));
	CHECK_UINT(s, expected);
}

static void test_parse_duration(void)
{
	static const struct check_bad_input bad[] = {
		{ "", -EINVAL }, { "30", -EINVAL }, { "m", -EINVAL }, { "1w", -EINVAL },
		{ "1m1h", -EINVAL }, { "1h1h", -EINVAL }, { " 1h", -EINVAL }, { "1h ", -EINVAL },
		{ "-1h", -EINVAL }, { "1.5h", -EINVAL }, { "1H", -EINVAL },
		{ "99999999999999999999s", -ERANGE }, { "999999999999999999d", -ERANGE },
	};

	check_duration("0", 0);
	check_duration("0s", 0);
	check_duration("90s", 90);
	check_duration("30m", 1800);
	check_duration("6h", 21600);
	check_duration("1d", 86400);
	check_duration("7d", 604800);
	check_duration("1h30m", 5400);
	check_duration("1d2h3m4s", 93784);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		uint64_t s = 7;

		CHECK_INT(timefmt_parse_duration(bad[i].text, &s), bad[i].err);
		/* Untouched on error. */
		CHECK_UINT(s, 7);
	}
}

static void test_format_duration(void)
{
	char buf[TIMEFMT_MAX];

	CHECK_STR(timefmt_duration(0, buf, sizeof(buf)), "0s");
	CHECK_STR(timefmt_duration(45, buf, sizeof(buf)), "45s");
	CHECK_STR(timefmt_duration(60, buf, sizeof(buf)), "1m");
	CHECK_STR(timefmt_duration(200, buf, sizeof(buf)), "3m20s");
	CHECK_STR(timefmt_duration(7200, buf, sizeof(buf)), "2h");
	CHECK_STR(timefmt_duration(7500 + 59, buf, sizeof(buf)), "2h5m");
	CHECK_STR(timefmt_duration(86400 + 3 * 3600 + 59, buf, sizeof(buf)), "1d3h");
	CHECK_STR(timefmt_duration(12 * 86400, buf, sizeof(buf)), "12d");
	/* What it prints, it reads back (to the precision shown). */
	for (uint64_t s = 0; s < 200000; s += 997) {
		uint64_t back;

		CHECK_OK(timefmt_parse_duration(timefmt_duration(s, buf, sizeof(buf)), &back));
		CHECK(back <= s);
	}
}

static void test_iso(void)
{
	static const char *const bad[] = {
		"", "2026-11-29", "2026-11-29 23:05:00Z", "2026-11-29T23:05:00",
		"2026-11-29T23:05:00+01:00", "2026-11-29T23:05:00Zx", "2026-13-29T23:05:00Z",
		"2026-11-29T23:05:00.Z", " 2026-11-29T23:05:00Z", "2026-1-29T23:05:00Z",
	};
	char buf[TIMEFMT_MAX];
	time_t t = 0;

	CHECK_OK(timefmt_parse_iso("2026-11-29T23:05:00Z", &t));
	CHECK_INT(t, 1795993500);
	CHECK_OK(timefmt_parse_iso("1970-01-01T00:00:00.250Z", &t));
	CHECK_INT(t, 0);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		t = 42;
		CHECK_INT(timefmt_parse_iso(bad[i], &t), -EINVAL);
		CHECK_INT(t, 42);
	}
	CHECK_INT(timefmt_parse_iso(NULL, &t), -EINVAL);

	/* Local time follows TZ: across midnight and the date line of the year. */
	setenv("TZ", "UTC", 1);
	tzset();
	CHECK_STR(timefmt_local(1795993500, buf, sizeof(buf)), "2026-11-29 23:05:00");
	setenv("TZ", "CET-1", 1);
	tzset();
	CHECK_STR(timefmt_local(1795993500, buf, sizeof(buf)), "2026-11-30 00:05:00");
}

static void check_ranges(struct range *r, size_t n, uint64_t align, const struct range *expected,
			 size_t n_expected)
{
	CHECK_UINT(ranges_coalesce(r, n, align), n_expected);
	for (size_t i = 0; i < n_expected; i++) {
		CHECK_UINT(r[i].start, expected[i].start);
		CHECK_UINT(r[i].length, expected[i].length);
	}
}

static void test_ranges(void)
{
	/* Out of order, overlapping, touching after rounding, empty, and far apart. */
	struct range r[] = {
		{ 100 * MIB + 4096, 8192 },     /* extent 25 */
		{ 4096, 4096 },                 /* extent 0 */
		{ 0, 0 },                       /* empty: dropped */
		{ 4 * MIB - 4096, 8192 },       /* straddles extents 0 and 1 */
		{ 8 * MIB, 4 * MIB },           /* extent 2 exactly: touches the one before */
		{ 101 * MIB, MIB },             /* extent 25 again */
	};
	const struct range expected[] = { { 0, 12 * MIB }, { 100 * MIB, 4 * MIB } };
	struct range one[] = { { 5, 10 } };
	const struct range one_expected[] = { { 5, 10 } };
	struct range edge[] = { { UINT64_MAX - 5000, 10000 } };
	struct range none[] = { { 7, 0 } };

	check_ranges(r, ARRAY_SIZE(r), 4 * MIB, expected, ARRAY_SIZE(expected));
	/* Alignment 1 merges only what overlaps or touches. */
	check_ranges(one, 1, 1, one_expected, 1);
	/* Past 2^64: cut at the last whole multiple, which 2^64 itself is not. */
	CHECK_UINT(ranges_coalesce(edge, 1, 4096), 1);
	CHECK_UINT(edge[0].start, UINT64_MAX - 4095 - 4096);
	CHECK_UINT(edge[0].start + edge[0].length, UINT64_MAX - 4095);
	CHECK_UINT(ranges_coalesce(none, 1, 4096), 0);
	CHECK_UINT(ranges_coalesce(NULL, 0, 4096), 0);
}

static void test_redundancy(void)
{
	CHECK_INT(redundancy_of_md_level("raid1\n"), REDUNDANCY_YES);
	CHECK_INT(redundancy_of_md_level("raid10"), REDUNDANCY_YES);
	CHECK_INT(redundancy_of_md_level("raid6\n"), REDUNDANCY_YES);
	CHECK_INT(redundancy_of_md_level("raid0\n"), REDUNDANCY_NONE);
	CHECK_INT(redundancy_of_md_level("linear\n"), REDUNDANCY_NONE);
	CHECK_INT(redundancy_of_md_level("raid1x"), REDUNDANCY_UNKNOWN);
	CHECK_INT(redundancy_of_md_level(""), REDUNDANCY_UNKNOWN);
	CHECK_INT(redundancy_of_md_level("container\n"), REDUNDANCY_UNKNOWN);
}

static void check_row(const struct fileplace_row *r, uint64_t file, uint64_t len, uint64_t vol,
		      int tier, const char *dev, uint64_t dev_off)
{
	CHECK_UINT(r->file_offset, file);
	CHECK_UINT(r->length, len);
	CHECK_UINT(r->volume_offset, vol);
	CHECK_INT(r->tier, tier);
	CHECK(dev ? r->device && !strcmp(r->device, dev) : !r->device);
	if (dev)
		CHECK_UINT(r->device_offset, dev_off);
}

/*
 * Volume extents of 4 MiB: [0, 8M) on the HDD at 1M, [8M, 12M) on the SSD
 * at 1M, [12M, 16M) on the HDD at 9M (continuing the first run on the
 * device but not on the volume), nothing known past 16M.
 */
static void test_fileplace(void)
{
	char hdd[] = "/dev/vdb", hdd_again[] = "/dev/vdb";
	const struct fileplace_run runs[] = {
		{ 0, 8 * MIB, FILEPLACE_HDD, hdd, 1 * MIB },
		{ 8 * MIB, 4 * MIB, FILEPLACE_SSD, "/dev/vdc", 1 * MIB },
		{ 12 * MIB, 4 * MIB, FILEPLACE_HDD, hdd_again, 9 * MIB },
	};
	const struct filemap_extent ext[] = {
		{ 0, 6 * MIB, 4 * MIB },          /* 6M..10M: HDD then SSD */
		{ 4 * MIB, 10 * MIB, 4 * MIB },   /* 10M..14M: SSD, then the HDD again */
		{ 8 * MIB, 14 * MIB, 4 * MIB },   /* 14M..18M: continues on the HDD, then nowhere */
		{ 12 * MIB, 1 * MIB, 1 * MIB },   /* back at 1M: HDD, not merged (file and volume jump) */
	};
	struct fileplace_row *rows;
	long n = fileplace_rows(ext, ARRAY_SIZE(ext), runs, ARRAY_SIZE(runs), &rows);

	CHECK_INT(n, 5);
	check_row(&rows[0], 0, 2 * MIB, 6 * MIB, FILEPLACE_HDD, "/dev/vdb", 7 * MIB);
	check_row(&rows[1], 2 * MIB, 4 * MIB, 8 * MIB, FILEPLACE_SSD, "/dev/vdc", 1 * MIB);
	/* The second and third extents continue each other on the HDD: one row. */
	check_row(&rows[2], 6 * MIB, 4 * MIB, 12 * MIB, FILEPLACE_HDD, "/dev/vdb", 9 * MIB);
	check_row(&rows[3], 10 * MIB, 2 * MIB, 16 * MIB, FILEPLACE_NOWHERE, NULL, 0);
	check_row(&rows[4], 12 * MIB, 1 * MIB, 1 * MIB, FILEPLACE_HDD, "/dev/vdb", 2 * MIB);
	free(rows);

	CHECK_INT(fileplace_rows(ext, 0, runs, ARRAY_SIZE(runs), &rows), 0);
	free(rows);
	CHECK_INT(fileplace_rows(ext, 1, NULL, 0, &rows), 1);
	check_row(&rows[0], 0, 4 * MIB, 6 * MIB, FILEPLACE_NOWHERE, NULL, 0);
	free(rows);
}

static void test_bar(void)
{
	struct bar b = { .what = "evacuating /dev/vdb", .done = 10, .total = 40,
			 .done_bytes = 40 * MIB, .total_bytes = 160 * MIB, .rate = 2 * MIB,
			 .eta = 60, .waiting = "" };
	char buf[BAR_TEXT_MAX], small[24];

	CHECK_STR(bar_format(&b, false, buf, sizeof(buf)),
		  "40.0 MiB/160.0 MiB  10/40 extents  2.0 MiB/s  ETA 1m  evacuating /dev/vdb");
	/* On a terminal the bar goes by bytes: a quarter of 30 cells. */
	CHECK_STR(bar_format(&b, true, buf, sizeof(buf)),
		  "[#######.......................]  40.0 MiB/160.0 MiB  10/40 extents  2.0 MiB/s"
		  "  ETA 1m  evacuating /dev/vdb");
	/* Half the bytes (a batch half copied) with the same extents done. */
	b.done_bytes = 80 * MIB;
	CHECK(strstr(bar_format(&b, true, buf, sizeof(buf)), "[###############...............]"));
	/* Rate and time left not known yet; a wait named as a person reads it. */
	b.rate = 0;
	b.eta = -1;
	b.waiting = "rate";
	CHECK_STR(bar_format(&b, false, buf, sizeof(buf)),
		  "80.0 MiB/160.0 MiB  10/40 extents  evacuating /dev/vdb (waiting: rate limit)");
	b.waiting = "busy";
	CHECK(strstr(bar_format(&b, false, buf, sizeof(buf)),
		     "(waiting: I/O awareness: the volume is busy)"));
	/* Done: no time left shown; no bytes known: extents only. */
	b = (struct bar){ .what = "x", .done = 4, .total = 4, .eta = 0, .rate = 1024 };
	CHECK_STR(bar_format(&b, false, buf, sizeof(buf)), "4/4 extents  1.0 KiB/s  x");
	CHECK_STR(bar_format(&b, true, buf, sizeof(buf)),
		  "[##############################]  4/4 extents  1.0 KiB/s  x");
	/* Too small a buffer: cut, still a string. */
	CHECK_STR(bar_format(&b, false, small, sizeof(small)), "4/4 extents  1.0 KiB/s ");
	CHECK(bar_waiting_text(NULL) == NULL);
	CHECK(bar_waiting_text("") == NULL);
	CHECK_STR(bar_waiting_text("paused"), "paused");
	CHECK_STR(bar_waiting_text("idle"), "I/O awareness: waiting for an idle volume");
}

int main(void)
{
	test_bar();
	test_parse_duration();
	test_format_duration();
	test_iso();
	test_ranges();
	test_redundancy();
	test_fileplace();
	return 0;
}
