/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dmstatus: mirror progress and failures from `dmsetup status` text. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "dmstatus.h"

static void test_mixed_table(void)
{
	/* As the kernel printed it in the VM for a live move (tests/vm). */
	const char *text = "0 8192 mirror 2 7:0 7:1 3/8 1 AA 1 core\n"
			   "8192 24576 linear \n"
			   "32768 8192 mirror 2 7:0 7:1 8/8 1 AA 1 core\n"
			   "40960 8192 mirror 2 7:0 7:2 8/8 1 AD 1 core\n";
	struct dmstatus_mirror m[4];
	size_t nr = 99;

	CHECK_INT(dmstatus_mirrors(text, m, 4, &nr), 0);
	CHECK_UINT(nr, 3);
	CHECK_UINT(m[0].start, 0);
	CHECK_UINT(m[0].len, 8192);
	CHECK_UINT(m[0].in_sync, 3);
	CHECK_UINT(m[0].regions, 8);
	CHECK_STR(m[0].health, "AA");
	CHECK(!dmstatus_mirror_synced(&m[0]));
	CHECK(!dmstatus_mirror_failed(&m[0]));
	CHECK_UINT(m[1].start, 32768);
	CHECK(dmstatus_mirror_synced(&m[1]));
	CHECK(dmstatus_mirror_failed(&m[2]));
	CHECK(!dmstatus_mirror_synced(&m[2]));
}

static void test_no_mirrors(void)
{
	struct dmstatus_mirror m[1];
	size_t nr = 99;

	CHECK_INT(dmstatus_mirrors("0 100 linear \n100 50 linear", m, 1, &nr), 0);
	CHECK_UINT(nr, 0);
	CHECK_INT(dmstatus_mirrors("", m, 1, &nr), 0);
	CHECK_UINT(nr, 0);
}

static void test_bad_input(void)
{
	static const char *const bad[] = {
		"0 8192 mirror 2 7:0 7:1 9/8 1 AA 1 core",  /* more in sync than there are */
		"0 8192 mirror 2 7:0 7:1 3/8 1 AX 1 core",  /* unknown health */
		"0 8192 mirror 2 7:0 7:1 3/8 1 A 1 core",   /* one health char for two legs */
		"0 8192 mirror 2 7:0 3/8 1 AA 1 core",      /* a leg missing */
		"0 8192 mirror 0 3/8 1 1 core",             /* no legs */
		"0 8192 mirror 2 7:0 7:1 3-8 1 AA 1 core",  /* no ratio */
		"zero 8192 linear",
		"0 8192",
	};
	struct dmstatus_mirror m[2];
	size_t nr;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_INT(dmstatus_mirrors(bad[i], m, 2, &nr), -EINVAL);
	CHECK_INT(dmstatus_mirrors("0 8 mirror 2 7:0 7:1 1/1 1 AA 1 core\n"
				   "8 8 mirror 2 7:0 7:1 1/1 1 AA 1 core\n", m, 1, &nr), -ENOSPC);
}

int main(void)
{
	test_mixed_table();
	test_no_mirrors();
	test_bad_input();
	return 0;
}
