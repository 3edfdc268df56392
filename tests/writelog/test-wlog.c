/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The dm-log-writes parser and the crash-point planner, on logs built here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/check.h"
#include "wlog.h"

#define SS 512

struct builder {
	unsigned char *buf;
	size_t len;
	uint64_t nr;
};

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void b_init(struct builder *b)
{
	b->buf = calloc(1, 1 << 20);
	CHECK(b->buf);
	b->len = SS;
	b->nr = 0;
	put64(b->buf, WLOG_MAGIC);
	put64(b->buf + 8, 1);
	b->buf[24] = SS & 0xff;
	b->buf[25] = SS >> 8;
}

static void b_entry(struct builder *b, uint64_t flags, uint64_t sector, uint64_t nr_sectors,
		    const char *mark)
{
	unsigned char *e = b->buf + b->len;

	put64(e, sector);
	put64(e + 8, nr_sectors);
	put64(e + 16, flags);
	put64(e + 24, mark ? strlen(mark) : 0);
	if (mark)
		memcpy(e + 32, mark, strlen(mark));
	b->len += SS;
	if (!(flags & WLOG_DISCARD)) {
		memset(b->buf + b->len, (int)(sector & 0xff), nr_sectors * SS);
		b->len += nr_sectors * SS;
	}
	put64(b->buf + 16, ++b->nr);
}

static void b_write(struct builder *b, uint64_t sector)
{
	b_entry(b, 0, sector, 8, NULL);
}

static void b_flush(struct builder *b)
{
	b_entry(b, WLOG_FLUSH, 0, 0, NULL);
}

static void b_mark(struct builder *b, const char *text)
{
	b_entry(b, WLOG_MARK, 0, 0, text);
}

static void test_parse(void)
{
	struct builder b;
	struct wlog log;

	b_init(&b);
	b_mark(&b, "tick:0");
	b_write(&b, 16);
	b_entry(&b, WLOG_DISCARD, 64, 128, NULL);
	b_flush(&b);
	b_entry(&b, WLOG_FUA, 24, 8, NULL);
	CHECK_OK(wlog_parse(&log, b.buf, b.len));
	CHECK_UINT(log.nr, 5);
	CHECK_UINT(log.sectorsize, SS);
	CHECK_STR(log.e[0].mark, "tick:0");
	CHECK_UINT(log.e[1].sector, 16);
	CHECK_UINT(log.e[1].data_off, 3 * SS);
	CHECK_UINT(b.buf[log.e[1].data_off], 16);
	/* A discard has no data in the log: the FUA write's data follows at once. */
	CHECK_UINT(log.e[4].data_off, (1 + 1 + 1 + 8 + 1 + 1 + 1) * SS);
	CHECK_UINT(b.buf[log.e[4].data_off], 24);
	CHECK_UINT(wlog_group_start(&log, 3), 1);
	CHECK_UINT(wlog_group_start(&log, 1), 1);
	wlog_destroy(&log);

	CHECK_INT(wlog_parse(&log, b.buf, b.len - SS), -EUCLEAN);
	b.buf[0] ^= 1;
	CHECK_INT(wlog_parse(&log, b.buf, b.len), -EINVAL);
	free(b.buf);
}

/*
 *          tick0        tick1          tick2             tick3
 * dev 0:   | a b FLUSH  |              | c FLUSH         | d        (d never flushed)
 * dev 1:   |            | ack:7 e FLUSH| f FLUSH phase:x |
 */
static void test_plan(void)
{
	struct builder b0, b1;
	struct wlog logs[2];
	struct wlog_plan plan;

	b_init(&b0);
	b_init(&b1);
	b_mark(&b0, "tick:0");
	b_write(&b0, 8);
	b_write(&b0, 16);
	b_flush(&b0); /* 3 */
	b_mark(&b0, "tick:1");
	b_mark(&b0, "tick:2"); /* 5 */
	b_write(&b0, 24);
	b_flush(&b0); /* 7 */
	b_mark(&b0, "tick:3"); /* 8 */
	b_write(&b0, 32);

	b_mark(&b1, "tick:0");
	b_mark(&b1, "tick:1"); /* 1 */
	b_mark(&b1, "ack:7");
	b_write(&b1, 40);
	b_flush(&b1); /* 4 */
	b_mark(&b1, "tick:2"); /* 5 */
	b_write(&b1, 48);
	b_flush(&b1);
	b_mark(&b1, "phase:x");
	b_mark(&b1, "tick:3"); /* 9 */

	CHECK_OK(wlog_parse(&logs[0], b0.buf, b0.len));
	CHECK_OK(wlog_parse(&logs[1], b1.buf, b1.len));
	CHECK_OK(wlog_plan(logs, 2, &plan));
	/* 4 ticks, before+after dev 0's first flush and dev 1's first; tick 2's pair is skipped. */
	CHECK_UINT(plan.nr, 8);
	CHECK_UINT(plan.skipped, 2);

	CHECK_INT(plan.cut[0].kind, WLOG_CUT_TICK);
	CHECK_UINT(plan.cut[0].prefix[0], 1);
	CHECK_UINT(plan.cut[0].prefix[1], 1);
	CHECK_INT(plan.cut[1].kind, WLOG_CUT_BEFORE);
	CHECK_UINT(plan.cut[1].dev, 0);
	CHECK_UINT(plan.cut[1].prefix[0], 1);
	CHECK_UINT(plan.cut[1].group_end, 3);
	CHECK_INT(plan.cut[2].kind, WLOG_CUT_AFTER);
	CHECK_UINT(plan.cut[2].prefix[0], 4);
	CHECK_UINT(plan.cut[2].prefix[1], 1); /* dev 1 as it was at tick 0 */

	CHECK_INT(plan.cut[3].kind, WLOG_CUT_TICK);
	CHECK_UINT(plan.cut[3].prefix[0], 5);
	CHECK_UINT(plan.cut[3].prefix[1], 2);
	CHECK_UINT(plan.cut[3].acked, 0);
	CHECK_INT(plan.cut[4].kind, WLOG_CUT_BEFORE);
	CHECK_UINT(plan.cut[4].dev, 1);
	CHECK_UINT(plan.cut[4].prefix[1], 3);
	CHECK_UINT(plan.cut[4].acked, 7);
	CHECK_UINT(plan.cut[5].prefix[1], 5);

	CHECK_INT(plan.cut[6].kind, WLOG_CUT_TICK);
	CHECK_UINT(plan.cut[6].prefix[0], 6);
	CHECK_INT(plan.cut[7].kind, WLOG_CUT_TICK);
	CHECK_UINT(plan.cut[7].prefix[0], 9);
	CHECK_UINT(plan.cut[7].prefix[1], 10);
	/* Phases are read from device 0's log, which has none here. */
	CHECK_STR(plan.cut[7].phase, "");
	for (size_t i = 1; i < plan.nr; i++)
		for (unsigned d = 0; d < 2; d++)
			CHECK(plan.cut[i].prefix[d] >= plan.cut[i - 1].prefix[d]);
	wlog_plan_destroy(&plan);

	/* A log without ticks has no common clock. */
	wlog_destroy(&logs[1]);
	free(b1.buf);
	b_init(&b1);
	b_write(&b1, 8);
	b_flush(&b1);
	CHECK_OK(wlog_parse(&logs[1], b1.buf, b1.len));
	CHECK_INT(wlog_plan(logs, 2, &plan), -ENOENT);
	wlog_destroy(&logs[0]);
	wlog_destroy(&logs[1]);
	free(b0.buf);
	free(b1.buf);
}

static void test_subset(void)
{
	unsigned char a[40], b[40], one;
	size_t kept = 0;

	wlog_subset(5, 40, a);
	wlog_subset(5, 40, b);
	CHECK(!memcmp(a, b, sizeof(a)));
	for (size_t i = 0; i < 40; i++)
		kept += a[i];
	CHECK(kept > 0 && kept < 40);
	for (uint64_t seed = 0; seed < 64; seed++) {
		wlog_subset(seed, 1, &one);
		CHECK_UINT(one, 1); /* never empty: that state is the cut before */
	}
}

int main(void)
{
	test_parse();
	test_plan();
	test_subset();
	return 0;
}
