/* SPDX-License-Identifier: GPL-2.0-or-later */
/* statsparse: per-area counters from dm-stats `@stats_print` text. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "statsparse.h"

/* Eleven idle counters plus the two time columns every current kernel adds. */
#define IDLE " 0 0 0 0 0 0 0 0 0 0 0 0 0"

static int parse(const char *text, uint64_t area_sectors, struct statsparse_area *out, size_t nr)
{
	return statsparse_areas(text, strlen(text), area_sectors, out, nr);
}

static void check_area(const struct statsparse_area *a, uint32_t reads, uint32_t reads_merged,
		       uint64_t sectors_read, uint32_t writes, uint32_t writes_merged,
		       uint64_t sectors_written)
{
	CHECK_UINT(a->reads, reads);
	CHECK_UINT(a->reads_merged, reads_merged);
	CHECK_UINT(a->sectors_read, sectors_read);
	CHECK_UINT(a->writes, writes);
	CHECK_UINT(a->writes_merged, writes_merged);
	CHECK_UINT(a->sectors_written, sectors_written);
}

static void test_kernel_line(void)
{
	/* As a 6.1 kernel printed it: 7 reads of 56 sectors, 12 ms reading. */
	struct statsparse_area a;

	memset(&a, 0xff, sizeof(a));
	CHECK_OK(parse("4096+2048 7 0 56 12 0 0 0 0 0 12 12 12 0\n", 2048, &a, 1));
	check_area(&a, 7, 0, 56, 0, 0, 0);
	/* The same without the final newline. */
	memset(&a, 0xff, sizeof(a));
	CHECK_OK(parse("4096+2048 7 0 56 12 0 0 0 0 0 12 12 12 0", 2048, &a, 1));
	check_area(&a, 7, 0, 56, 0, 0, 0);
}

static void test_region(void)
{
	/* Busy and idle areas; the last one is shorter (a volume that is not a multiple of the extent). */
	const char *text = "0+8192 3 1 24 5 2 0 16 4 0 9 9 5 4\n"
			   "8192+8192" IDLE "\n"
			   "16384+8192 0 0 0 0 40 38 10240 80 1 80 80 0 80\n"
			   "24576+4096" IDLE "\n";
	struct statsparse_area a[4];

	memset(a, 0xff, sizeof(a));
	CHECK_OK(parse(text, 8192, a, 4));
	check_area(&a[0], 3, 1, 24, 2, 0, 16);
	check_area(&a[1], 0, 0, 0, 0, 0, 0);
	check_area(&a[2], 0, 0, 0, 40, 38, 10240);
	check_area(&a[3], 0, 0, 0, 0, 0, 0);
}

static void test_columns(void)
{
	static const char *const good[] = {
		"0+8 1 2 3 4 5 6 7 8 9 10 11\n",                     /* only the eleven of iostats */
		"0+8 1 2 3 4 5 6 7 8 9 10 11 12 13\n",               /* 12, 13: read/write ticks */
		"0+8 1 2 3 4 5 6 7 8 9 10 11 12 13 0:4:1:0\n",       /* a histogram */
		"0+8 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n",   /* columns yet to come */
		"0+8 1 2 3 4 5 6 7 8 -1 10 11 12 13\n",              /* in flight is printed with %d */
		"0+8 01 2 3 4 5 6 7 8 9 10 11\n",                    /* leading zeros */
		"0+8 000000000000000000000001 2 3 4 5 6 7 8 9 10 11\n", /* ... past 20 digits */
	};
	struct statsparse_area a;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		memset(&a, 0xff, sizeof(a));
		CHECK_OK(parse(good[i], 8, &a, 1));
		check_area(&a, 1, 2, 3, 5, 6, 7);
	}
	/* Idle but for a column that is ignored, and idle with more columns. */
	CHECK_OK(parse("0+8 0 0 0 0 0 0 0 0 0 0 05 0 0\n", 8, &a, 1));
	check_area(&a, 0, 0, 0, 0, 0, 0);
	CHECK_OK(parse("0+8 0 0 0 0 0 0 0 0 0 0 0 0 0 0:0:0\n", 8, &a, 1));
	check_area(&a, 0, 0, 0, 0, 0, 0);
	CHECK_OK(parse("0+8 0 0 0 0 0 0 0 0 0 0 0", 8, &a, 1));
	check_area(&a, 0, 0, 0, 0, 0, 0);
}

static void test_limits(void)
{
	struct statsparse_area a;

	CHECK_OK(parse("0+8 4294967295 4294967295 18446744073709551615 18446744073709551615 "
		       "4294967295 4294967295 18446744073709551615 0 0 0 0 0 0\n", 8, &a, 1));
	check_area(&a, UINT32_MAX, UINT32_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX, UINT64_MAX);
	/* The last sector of a 64-bit device. */
	CHECK_OK(parse("18446744073709551607+8" IDLE, 8, &a, 1));
	CHECK_OK(parse("18446744073709551614+1" IDLE, 8, &a, 1));
}

static void test_empty_and_args(void)
{
	const char *line = "0+8" IDLE "\n";
	struct statsparse_area a;

	CHECK_OK(statsparse_areas("", 0, 8, NULL, 0));
	CHECK_OK(statsparse_areas(NULL, 0, 8, NULL, 0));
	CHECK_INT(statsparse_areas(line, strlen(line), 8, &a, 0), -EINVAL);
	CHECK_INT(statsparse_areas(NULL, 4, 8, &a, 1), -EINVAL);
	CHECK_INT(statsparse_areas(line, strlen(line), 8, NULL, 1), -EINVAL);
	CHECK_INT(statsparse_areas(line, strlen(line), 0, &a, 1), -EINVAL);
	/* len, not a NUL, ends the text: a NUL inside it is junk, one past it is not read. */
	CHECK_INT(statsparse_areas("0+8 0 0\0 0 0 0 0 0 0 0 0 0 0 0\n", 30, 8, &a, 1), -EINVAL);
	CHECK_OK(statsparse_areas("0+8" IDLE "\njunk", strlen(line), 8, &a, 1));
}

static void test_bad_input(void)
{
	/* Two areas of 8 sectors expected. */
	static const struct check_bad_input bad[] = {
		/* order and size */
		{ "0+8" IDLE "\n16+8" IDLE "\n", -EINVAL },       /* a gap */
		{ "8+8" IDLE "\n0+8" IDLE "\n", -EINVAL },        /* wrong order */
		{ "0+8" IDLE "\n4+8" IDLE "\n", -EINVAL },        /* overlap */
		{ "0+8" IDLE "\n0+8" IDLE "\n", -EINVAL },        /* the same area twice */
		{ "0+4" IDLE "\n4+4" IDLE "\n", -EINVAL },        /* short, but not the last */
		{ "0+16" IDLE "\n16+16" IDLE "\n", -EINVAL },     /* areas larger than asked */
		{ "0+8" IDLE "\n8+16" IDLE "\n", -EINVAL },       /* a longer last area */
		{ "0+8" IDLE "\n8+0" IDLE "\n", -EINVAL },        /* an empty area */
		{ "18446744073709551608+8" IDLE "\n0+8" IDLE "\n", -EINVAL }, /* past 2^64 sectors */
		/* line count */
		{ "", -EINVAL },
		{ "0+8" IDLE "\n", -EINVAL },
		{ "0+4" IDLE "\n", -EINVAL },                     /* short and too few */
		{ "0+8" IDLE "\n8+8" IDLE "\n16+8" IDLE "\n", -EINVAL },
		{ "0+8" IDLE "\n8+8" IDLE "\n\n", -EINVAL },      /* a blank line */
		{ "0+8" IDLE "\n\n8+8" IDLE "\n", -EINVAL },
		/* shape */
		{ "hello\nworld\n", -EINVAL },
		{ "0+8 1 0 8 x 0 0 0 0 0 0 0 0 0\n8+8" IDLE, -EINVAL },
		{ "0+8" IDLE " junk\n8+8" IDLE, -EINVAL },
		{ "0+8 0 0 0 0 0 0 0 0 0 0 0x\n8+8" IDLE, -EINVAL },
		{ "0-8" IDLE "\n8+8" IDLE, -EINVAL },
		{ "0 8" IDLE "\n8+8" IDLE, -EINVAL },
		{ "+8" IDLE "\n8+8" IDLE, -EINVAL },
		{ "0+" IDLE "\n8+8" IDLE, -EINVAL },
		{ " 0+8" IDLE "\n8+8" IDLE, -EINVAL },            /* a leading blank */
		{ "0+8 " IDLE "\n8+8" IDLE, -EINVAL },            /* two blanks */
		{ "0+8\t0 0 0 0 0 0 0 0 0 0 0\n8+8" IDLE, -EINVAL },
		{ "0+8" IDLE " \n8+8" IDLE, -EINVAL },            /* a trailing blank */
		{ "0+8" IDLE "\r\n8+8" IDLE "\r\n", -EINVAL },
		{ "0+8 -1 0 0 0 0 0 0 0 0 0 0\n8+8" IDLE, -EINVAL }, /* a sign outside in-flight */
		{ "0+8 0 0 0 0 0 0 0 0 +1 0 0\n8+8" IDLE, -EINVAL },
		{ "0+8 0 0 0 0 0 0 0 0 - 0 0\n8+8" IDLE, -EINVAL },
		{ "0+8 0 0 0 0 0 0 0 0 0 0 0 0 -1\n8+8" IDLE, -EINVAL }, /* extra columns are unsigned */
		{ "0+8 1:2 0 0 0 0 0 0 0 0 0 0\n8+8" IDLE, -EINVAL },
		/* truncated */
		{ "0+8 0 0 0 0 0 0 0 0 0 0\n8+8" IDLE, -EINVAL }, /* ten counters */
		{ "0+8 1 0 8 0 0 0 0 0 0 0\n8+8" IDLE, -EINVAL },
		{ "0+8" IDLE "\n8+8 0 0 0", -EINVAL },
		{ "0+8" IDLE "\n8+8 0 0 0 0 0 0 0 0 0 0 ", -EINVAL },
		{ "0+8" IDLE "\n8+", -EINVAL },
		{ "0+8" IDLE "\n8", -EINVAL },
		/* overflow of a field */
		{ "0+8 4294967296 0 0 0 0 0 0 0 0 0 0\n8+8" IDLE, -ERANGE },
		{ "0+8 1 4294967296 0 0 0 0 0 0 0 0 0\n8+8" IDLE, -ERANGE },
		{ "0+8 0 0 0 0 4294967296 0 0 0 0 0 0\n8+8" IDLE, -ERANGE },
		{ "0+8 0 0 0 0 1 4294967296 0 0 0 0 0\n8+8" IDLE, -ERANGE },
		{ "0+8 0 0 18446744073709551616 0 0 0 0 0 0 0 0\n8+8" IDLE, -ERANGE },
		{ "0+8 0 0 0 0 0 0 99999999999999999999 0 0 0 0\n8+8" IDLE, -ERANGE },
		{ "0+8 0 0 0 18446744073709551616 0 0 0 0 0 0 0\n8+8" IDLE, -ERANGE },
		{ "18446744073709551616+8" IDLE "\n8+8" IDLE, -ERANGE },
		{ "0+18446744073709551616" IDLE "\n8+8" IDLE, -ERANGE },
		/* the first fault wins */
		{ "0+8 4294967296 0 0 0 0 0 0 0 0 0 0\n9+8" IDLE, -ERANGE },
		{ "0+8" IDLE "\n9+8 4294967296 0 0 0 0 0 0 0 0 0 0", -EINVAL },
	};
	struct statsparse_area a[2];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse(bad[i].text, 8, a, 2);

		if (r != bad[i].err)
			fprintf(stderr, "bad[%zu]: \"%s\"\n", i, bad[i].text);
		CHECK_INT(r, bad[i].err);
	}
}

/* A deterministic mix over many areas, checked field by field. */
static void test_generated(void)
{
	enum { NR = 5000, AREA = 8192, LINE = 160 };
	static char text[NR * LINE];
	static struct statsparse_area want[NR], got[NR];
	uint32_t x = 12345;
	size_t len = 0;

	for (size_t i = 0; i < NR; i++) {
		struct statsparse_area *w = &want[i];

		x = x * 1103515245 + 12345;
		memset(w, 0, sizeof(*w));
		if (x >> 28 == 0) {
			w->reads = x >> 4;
			w->reads_merged = w->reads / 3;
			w->sectors_read = (uint64_t)w->reads * 2048;
			w->writes = x & 0xffff;
			w->writes_merged = x & 0xff;
			w->sectors_written = (uint64_t)w->writes * 8;
		}
		len += (size_t)snprintf(text + len, LINE, "%zu+%u %u %u %" PRIu64 " 3 %u %u %" PRIu64
					" 4 0 5 6 7 8\n", i * AREA, (unsigned)AREA, w->reads, w->reads_merged,
					w->sectors_read, w->writes, w->writes_merged,
					w->sectors_written);
	}
	CHECK_OK(statsparse_areas(text, len, AREA, got, NR));
	for (size_t i = 0; i < NR; i++)
		check_area(&got[i], want[i].reads, want[i].reads_merged, want[i].sectors_read,
			   want[i].writes, want[i].writes_merged, want[i].sectors_written);
	CHECK_INT(statsparse_areas(text, len, AREA, got, NR - 1), -EINVAL);
	CHECK_INT(statsparse_areas(text, len, AREA, got, NR + 1), -EINVAL);
	/* Cutting the last line short, from its tail "6 7 8\n" back into the counters. */
	CHECK_OK(statsparse_areas(text, len - 1, AREA, got, NR));
	CHECK_INT(statsparse_areas(text, len - 2, AREA, got, NR), -EINVAL);
	CHECK_OK(statsparse_areas(text, len - 3, AREA, got, NR));
	CHECK_OK(statsparse_areas(text, len - 5, AREA, got, NR));
	CHECK_INT(statsparse_areas(text, len - 6, AREA, got, NR), -EINVAL);
	CHECK_INT(statsparse_areas(text, len - 7, AREA, got, NR), -EINVAL);
}

int main(void)
{
	test_kernel_line();
	test_region();
	test_columns();
	test_limits();
	test_empty_and_args();
	test_bad_input();
	test_generated();
	return 0;
}
