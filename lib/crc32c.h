/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TIERD_CRC32C_H
#define TIERD_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * CRC-32C (Castagnoli), the usual reflected form with pre- and
 * post-inversion: crc32c(0, "123456789", 9) == 0xE3069283.  Pass 0 to
 * start and the previous result to continue, so a buffer can be summed
 * in pieces: crc32c(crc32c(0, a, n), b, m) equals the sum of a then b.
 */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);

/*
 * Sums of pieces put together without reading them again: the operator of
 * len zero bytes (crc32c_zeros(len)), then crc32c_append(a, b, op) is the
 * sum of a piece summed as a followed by one of len bytes summed as b, each
 * from 0. So a sum over many blocks can be kept per block, and one block's
 * change costs that block and one pass over the block sums, not the data.
 */
uint32_t crc32c_zeros(size_t len);
uint32_t crc32c_append(uint32_t a, uint32_t b, uint32_t zeros_op);

#endif
