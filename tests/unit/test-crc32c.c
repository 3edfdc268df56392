/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdint.h>

#include "check.h"
#include "crc32c.h"

/* Bit-at-a-time reference, independent of the table-driven code under test. */
static uint32_t reference_crc32c(const unsigned char *p, size_t len)
{
	uint32_t crc = ~0u;

	while (len--) {
		crc ^= *p++;
		for (int bit = 0; bit < 8; bit++)
			crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
	}
	return ~crc;
}

static void test_check_value(void)
{
	CHECK_UINT(crc32c(0, "123456789", 9), 0xE3069283u);
	CHECK_UINT(crc32c(0, "a", 1), 0xC1D04330u);
	CHECK_UINT(crc32c(0, NULL, 0), 0);
	CHECK_UINT(crc32c(0xdeadbeef, NULL, 0), 0xdeadbeef);
}

/* The 32-byte vectors of RFC 3720 (iSCSI), appendix B.4. */
static void test_rfc3720(void)
{
	unsigned char buf[32];

	memset(buf, 0, sizeof(buf));
	CHECK_UINT(crc32c(0, buf, sizeof(buf)), 0x8A9136AAu);
	memset(buf, 0xff, sizeof(buf));
	CHECK_UINT(crc32c(0, buf, sizeof(buf)), 0x62A8AB43u);
	for (unsigned i = 0; i < 32; i++)
		buf[i] = (unsigned char)i;
	CHECK_UINT(crc32c(0, buf, sizeof(buf)), 0x46DD794Eu);
	for (unsigned i = 0; i < 32; i++)
		buf[i] = (unsigned char)(31 - i);
	CHECK_UINT(crc32c(0, buf, sizeof(buf)), 0x113FDB5Cu);
}

static void fill_pseudo_random(unsigned char *buf, size_t len)
{
	uint32_t x = 2463534242u;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (unsigned char)x;
	}
}

/* Every alignment and every tail length around the 8-byte stride. */
static void test_against_reference(void)
{
	unsigned char buf[300];

	fill_pseudo_random(buf, sizeof(buf));
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len + off <= 80; len++)
			CHECK_UINT(crc32c(0, buf + off, len), reference_crc32c(buf + off, len));
	CHECK_UINT(crc32c(0, buf, sizeof(buf)), reference_crc32c(buf, sizeof(buf)));
}

static void test_chaining(void)
{
	unsigned char buf[200];
	uint32_t whole;

	fill_pseudo_random(buf, sizeof(buf));
	whole = crc32c(0, buf, sizeof(buf));
	for (size_t split = 0; split <= sizeof(buf); split++) {
		uint32_t crc = crc32c(0, buf, split);

		CHECK_UINT(crc32c(crc, buf + split, sizeof(buf) - split), whole);
	}
}

static void test_detects_single_bit_flips(void)
{
	unsigned char buf[64];
	uint32_t good;

	fill_pseudo_random(buf, sizeof(buf));
	good = crc32c(0, buf, sizeof(buf));
	for (size_t bit = 0; bit < sizeof(buf) * 8; bit++) {
		buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
		CHECK(crc32c(0, buf, sizeof(buf)) != good);
		buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
	}
}

int main(void)
{
	test_check_value();
	test_rfc3720();
	test_against_reference();
	test_chaining();
	test_detects_single_bit_flips();
	return 0;
}
