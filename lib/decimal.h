/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * decimal: a floating-point value as the short decimal text a person or a
 * JSON reader wants (0.1, not 0.10000000000000001).
 */
#ifndef TIERD_DECIMAL_H
#define TIERD_DECIMAL_H

#include <stddef.h>

/* Enough for any decimal_format() result. */
#define DECIMAL_FORMAT_MAX 32

/*
 * v rounded to 4 significant digits, in plain decimal notation without
 * trailing zeros ("0.9312", "150.1", "12350", "0"); magnitudes from 1e15 up
 * or below 1e-9 use exponent notation ("1.5e+20"), which JSON also takes.
 * NaN and infinities, which JSON cannot hold, give "0".  Returns buf.
 */
const char *decimal_format(double v, char *buf, size_t len);

#endif
