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

#endif
