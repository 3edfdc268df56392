/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ranges: byte ranges of a volume, such as the places of a file's data that
 * FIEMAP reports, merged into as few whole-extent ranges as cover them.
 */
#ifndef TIERCTL_RANGES_H
#define TIERCTL_RANGES_H

#include <stddef.h>
#include <stdint.h>

struct range {
	uint64_t start;
	uint64_t length;
};

/*
 * Round each of the n ranges out to multiples of align (not 0), then sort
 * them and merge those that overlap or touch, in place.  Empty ranges are
 * dropped; a range reaching past 2^64 is cut at the last whole multiple.
 * Returns how many ranges remain.
 */
size_t ranges_coalesce(struct range *ranges, size_t n, uint64_t align);

#endif
