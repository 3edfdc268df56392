/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "crc32c.h"

#include <threads.h>

/* 0x1EDC6F41 bit-reversed, because the reflected form consumes LSB first. */
#define CRC32C_POLY 0x82f63b78u

/*
 * Slice-by-8: crc32c_table[k][b] is the CRC contribution of byte b followed
 * by k zero bytes, so eight bytes fold in with eight independent lookups.
 * Built at first use rather than spelled out as 2048 literals.
 */
static uint32_t crc32c_table[8][256];
static once_flag crc32c_once = ONCE_FLAG_INIT;

static void crc32c_init_table(void)
{
	for (unsigned b = 0; b < 256; b++) {
		uint32_t c = b;

		for (int bit = 0; bit < 8; bit++)
			c = (c >> 1) ^ (CRC32C_POLY & (0u - (c & 1)));
		crc32c_table[0][b] = c;
	}
	for (unsigned b = 0; b < 256; b++)
		for (unsigned k = 1; k < 8; k++) {
			uint32_t prev = crc32c_table[k - 1][b];

			crc32c_table[k][b] = (prev >> 8) ^ crc32c_table[0][prev & 0xff];
		}
}

/* Byte-wise so it is alignment- and endian-neutral; compilers fuse it into one load. */
static uint32_t crc32c_load_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	uint32_t (*const t)[256] = crc32c_table;
	const unsigned char *p = buf;

	call_once(&crc32c_once, crc32c_init_table);
	crc = ~crc;
	for (; len >= 8; p += 8, len -= 8) {
		uint32_t lo = crc ^ crc32c_load_le32(p);
		uint32_t hi = crc32c_load_le32(p + 4);

		crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^
		      t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
		      t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^
		      t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
	}
	for (; len; p++, len--)
		crc = (crc >> 8) ^ t[0][(crc ^ *p) & 0xff];
	return ~crc;
}

/*
 * Polynomials mod P in the reflected form: bit 31 is x^0. The product of a
 * and b, b shifted one power of x at a time while a's bits are read from x^0.
 */
static uint32_t crc32c_mulmod(uint32_t a, uint32_t b)
{
	uint32_t product = 0;

	for (uint32_t bit = UINT32_C(1) << 31; bit; bit >>= 1) {
		if (a & bit)
			product ^= b;
		b = (b >> 1) ^ (CRC32C_POLY & (0u - (b & 1)));
	}
	return product;
}

/* x^(8 len) mod P: what appending len zero bytes multiplies the register by. */
uint32_t crc32c_zeros(size_t len)
{
	uint32_t op = UINT32_C(1) << 31, square = UINT32_C(1) << 23; /* x^0; x^8 */

	for (; len; len >>= 1) {
		if (len & 1)
			op = crc32c_mulmod(square, op);
		square = crc32c_mulmod(square, square);
	}
	return op;
}

/*
 * Summing a then b from 0 leaves a's register shifted through b's bytes
 * and b's own contribution; the pre- and post-inversions cancel, which is
 * why a plain product and an exclusive or suffice.
 */
uint32_t crc32c_append(uint32_t a, uint32_t b, uint32_t zeros_op)
{
	return crc32c_mulmod(zeros_op, a) ^ b;
}
