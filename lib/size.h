/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TIERD_SIZE_H
#define TIERD_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* Longest size_format() result ("1023.9 KiB", "16.0 EiB") plus NUL, with slack. */
#define SIZE_FORMAT_MAX 32

/*
 * Parse a byte count: decimal digits with an optional fraction ("1.5"),
 * then optionally K, M, G, T or P (1024-based, any case; K, KiB and KB are
 * the same), then optionally "iB" or "B" after a multiplier or "B" alone.
 * The result must be a whole number of bytes: "1.5K" is 1536, "1.1" and
 * "0.1K" are refused rather than rounded.  Signs, exponents, a comma and
 * whitespace are rejected too, so that a size typed by an operator means
 * exactly one thing.
 * Returns 0, -EINVAL (malformed) or -ERANGE (does not fit 64 bits);
 * *out is written only on success.
 */
int size_parse(const char *s, uint64_t *out);

/*
 * Human-readable form with binary units: "0 B", "1023 B", "1.5 KiB",
 * "4.0 MiB".  Output is truncated to fit len (SIZE_FORMAT_MAX always
 * suffices).  Returns buf.
 */
const char *size_format(uint64_t bytes, char *buf, size_t len);

#endif
