/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "ranges.h"

#include <stdlib.h>

static int ranges_compare(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

size_t ranges_coalesce(struct range *ranges, size_t n, uint64_t align)
{
	/* The highest multiple of align: where rounding an end up would wrap. */
	uint64_t top = UINT64_MAX - UINT64_MAX % align;
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t start = ranges[i].start - ranges[i].start % align;
		uint64_t end = ranges[i].start + ranges[i].length;

		if (!ranges[i].length)
			continue;
		if (end < ranges[i].start || end > top)
			end = top;
		else if (end % align)
			end += align - end % align;
		if (end <= start)
			continue;
		ranges[kept++] = (struct range){ start, end - start };
	}
	if (!kept)
		return 0;
	qsort(ranges, kept, sizeof(*ranges), ranges_compare);
	n = kept;
	kept = 1;
	for (size_t i = 1; i < n; i++) {
		struct range *last = &ranges[kept - 1];
		uint64_t last_end = last->start + last->length;

		if (ranges[i].start <= last_end) {
			uint64_t end = ranges[i].start + ranges[i].length;

			if (end > last_end)
				last->length = end - last->start;
		} else {
			ranges[kept++] = ranges[i];
		}
	}
	return kept;
}
