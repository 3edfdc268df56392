/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <math.h>

#include "check.h"
#include "decimal.h"

static void test_format(void)
{
	static const struct {
		double v;
		const char *text;
	} cases[] = {
		{ 0.0, "0" },
		{ -0.0, "0" },
		{ 0.1, "0.1" },
		{ 0.10000000000000001, "0.1" },
		{ 1.0 / 3.0, "0.3333" },
		{ 0.98, "0.98" },
		{ 0.93125, "0.9313" },
		{ 1.0, "1" },
		{ 1.5, "1.5" },
		{ 150.1234, "150.1" },
		{ 188.26, "188.3" },
		{ 12345.6, "12350" },
		{ 86400.0, "86400" },
		{ -2.5, "-2.5" },
		{ -0.00001, "-0.00001" },
		{ 0.000012346, "0.00001235" },
		{ 1e20, "1e+20" },
		{ 1.25e-12, "1.25e-12" },
		{ NAN, "0" },
		{ INFINITY, "0" },
	};
	char buf[DECIMAL_FORMAT_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_STR(decimal_format(cases[i].v, buf, sizeof(buf)), cases[i].text);
}

static void test_truncated(void)
{
	char small[4];

	CHECK(decimal_format(0.5, small, sizeof(small)) == small);
	CHECK_STR(small, "0.5");
	CHECK_STR(decimal_format(0.1234, small, sizeof(small)), "0.1");
	CHECK(decimal_format(0.5, small, 0) == small);
}

int main(void)
{
	test_format();
	test_truncated();
	return 0;
}
