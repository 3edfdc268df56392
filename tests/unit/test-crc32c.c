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

/* Every split of a buffer, and a sum kept per 4 KiB block with a short tail. */
static void test_append(void)
{
	static unsigned char buf[3 * 4096 + 100];
	uint32_t whole, acc, op4k = crc32c_zeros(4096);

	fill_pseudo_random(buf, sizeof(buf));
	for (size_t split = 0; split <= 200; split++) {
		uint32_t a = crc32c(0, buf, split), b = crc32c(0, buf + split, 200 - split);

		CHECK_UINT(crc32c_append(a, b, crc32c_zeros(200 - split)), crc32c(0, buf, 200));
	}
	whole = crc32c(0, buf, sizeof(buf));
	acc = crc32c(0, buf, 4096);
	for (size_t off = 4096; off < sizeof(buf); off += 4096) {
		size_t n = sizeof(buf) - off < 4096 ? sizeof(buf) - off : 4096;
		uint32_t op = n == 4096 ? op4k : crc32c_zeros(n);

		acc = crc32c_append(acc, crc32c(0, buf + off, n), op);
	}
	CHECK_UINT(acc, whole);
	CHECK_UINT(crc32c_append(crc32c(0, buf, 50), 0, crc32c_zeros(0)), crc32c(0, buf, 50));
}

int main(void)
{
	test_append();
	test_check_value();
	test_rfc3720();
	test_against_reference();
	test_chaining();
	test_detects_single_bit_flips();
	return 0;
}
