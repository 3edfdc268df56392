/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdint.h>

#include "check.h"
#include "size.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define TiB (UINT64_C(1) << 40)
#define PiB (UINT64_C(1) << 50)
#define EiB (UINT64_C(1) << 60)

static void test_parse_good(void)
{
	static const struct {
		const char *text;
		uint64_t bytes;
	} cases[] = {
		{ "0", 0 },
		{ "4096", 4096 },
		{ "007", 7 },
		{ "4096B", 4096 },
		{ "4096b", 4096 },
		{ "4K", 4 * KiB },
		{ "4k", 4 * KiB },
		{ "4KiB", 4 * KiB },
		{ "4kib", 4 * KiB },
		{ "4KB", 4 * KiB },
		{ "4M", 4 * MiB },
		{ "4MiB", 4 * MiB },
		{ "4MB", 4 * MiB },
		{ "4mB", 4 * MiB },
		{ "1G", GiB },
		{ "10GiB", 10 * GiB },
		{ "3T", 3 * TiB },
		{ "2p", 2 * PiB },
		{ "0K", 0 },
		{ "1.5G", 3 * GiB / 2 },
		{ "1.5g", 3 * GiB / 2 },
		{ "1.5GiB", 3 * GiB / 2 },
		{ "1.5GB", 3 * GiB / 2 },
		{ "0.5K", 512 },
		{ "1.25M", 5 * MiB / 4 },
		{ "2.0", 2 },
		{ "4.000K", 4 * KiB },
		{ "0.0009765625M", 1024 },
		{ "1.000000000000000000000000K", KiB },
		{ "16383.5P", 16383 * PiB + PiB / 2 },
		{ "16383P", 16383 * PiB },
		{ "17179869183G", 17179869183 * GiB },
		{ "18446744073709551615", UINT64_MAX },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;

		CHECK_OK(size_parse(cases[i].text, &v));
		CHECK_UINT(v, cases[i].bytes);
	}
}

static void test_parse_bad(void)
{
	static const struct check_bad_input cases[] = {
		{ "", -EINVAL },
		{ "-1", -EINVAL },
		{ "+1", -EINVAL },
		{ " 4", -EINVAL },
		{ "4 ", -EINVAL },
		{ "4 K", -EINVAL },
		{ "4K ", -EINVAL },
		{ "4\n", -EINVAL },
		{ "K", -EINVAL },
		{ "KiB", -EINVAL },
		{ "1,5G", -EINVAL },
		{ "1.", -EINVAL },
		{ "1.K", -EINVAL },
		{ ".5K", -EINVAL },
		{ "1.5", -EINVAL },
		{ "0.1K", -EINVAL },
		{ "1.00000000000000000001K", -EINVAL },
		{ "1.5.0K", -EINVAL },
		{ "1e3", -EINVAL },
		{ "16383.9999P", -EINVAL },
		{ "16384.5P", -ERANGE },
		{ "0x10", -EINVAL },
		{ "4X", -EINVAL },
		{ "4E", -EINVAL },
		{ "4iB", -EINVAL },
		{ "4Ki", -EINVAL },
		{ "4KiBx", -EINVAL },
		{ "4KBB", -EINVAL },
		{ "4BB", -EINVAL },
		{ "4KK", -EINVAL },
		{ "4kbit", -EINVAL },
		{ "18446744073709551616", -ERANGE },
		{ "99999999999999999999999", -ERANGE },
		{ "16384P", -ERANGE },
		{ "17179869184G", -ERANGE },
		{ "18446744073709551615K", -ERANGE },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;

		CHECK_INT(size_parse(cases[i].text, &v), cases[i].err);
		/* A failed parse must not leave a half-computed value behind. */
		CHECK_UINT(v, 12345);
	}
	CHECK_INT(size_parse(NULL, &(uint64_t){ 0 }), -EINVAL);
	CHECK_INT(size_parse("4K", NULL), -EINVAL);
}

static void test_format(void)
{
	static const struct {
		uint64_t bytes;
		const char *text;
	} cases[] = {
		{ 0, "0 B" },
		{ 1, "1 B" },
		{ 1023, "1023 B" },
		{ 1024, "1.0 KiB" },
		{ 1075, "1.0 KiB" },  /* 1.0498 */
		{ 1126, "1.1 KiB" },  /* 1.0996 */
		{ 1536, "1.5 KiB" },
		{ 4194304, "4.0 MiB" },
		{ 10 * GiB, "10.0 GiB" },
		{ 1023 * KiB, "1023.0 KiB" },
		{ MiB - 1, "1.0 MiB" },  /* rounds to 1024.0 KiB */
		{ MiB - 60, "1023.9 KiB" },
		{ GiB + GiB / 2, "1.5 GiB" },
		{ 5 * TiB, "5.0 TiB" },
		{ 3 * PiB, "3.0 PiB" },
		{ EiB, "1.0 EiB" },
		{ UINT64_MAX, "16.0 EiB" },
	};
	char buf[SIZE_FORMAT_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK(size_format(cases[i].bytes, buf, sizeof(buf)) == buf);
		CHECK_STR(buf, cases[i].text);
	}
}

static void test_format_truncates(void)
{
	char small[4] = "xxx";

	CHECK(size_format(4 * MiB, small, sizeof(small)) == small);
	CHECK_STR(small, "4.0");
	/* A zero-length buffer is left alone. */
	CHECK(size_format(4 * MiB, small, 0) == small);
	CHECK_STR(small, "4.0");
}

/* Every exact multiple prints with ".0" and the parse of the plain form agrees. */
static void test_units_agree(void)
{
	static const char *const letters[] = { "K", "M", "G", "T", "P" };
	static const char *const names[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	char in[32], want[32], buf[SIZE_FORMAT_MAX];

	for (unsigned u = 0; u < 5; u++)
		for (uint64_t n = 1; n < 1024; n += 97) {
			uint64_t v;

			snprintf(in, sizeof(in), "%" PRIu64 "%s", n, letters[u]);
			snprintf(want, sizeof(want), "%" PRIu64 ".0 %s", n, names[u]);
			CHECK_OK(size_parse(in, &v));
			CHECK_UINT(v, n << (10 * (u + 1)));
			CHECK_STR(size_format(v, buf, sizeof(buf)), want);
		}
}

int main(void)
{
	test_parse_good();
	test_parse_bad();
	test_format();
	test_format_truncates();
	test_units_agree();
	return 0;
}
