/* SPDX-License-Identifier: GPL-2.0-or-later */
/* statsparse: the per-area counters of a dm-stats region, from `@stats_print` text. */
#ifndef TIERD_STATSPARSE_H
#define TIERD_STATSPARSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * What heat needs from one area (= one extent) of one sample.  With
 * `@stats_print_clear` these are deltas since the previous sample.
 * "Merged" follows dm-stats, not the request queue: a bio that starts
 * where the previous bio of the same direction on the same CPU ended.  It
 * is counted in reads/writes too, so merged <= completed (up to the races
 * dm-stats allows).  I/O counts are 32 bits: 4 billion I/Os on one extent
 * between two samples is not a real delta, and the narrower struct keeps
 * the scratch array of a million extents at 32 MB.
 */
struct statsparse_area {
	uint32_t reads, reads_merged, writes, writes_merged;
	uint64_t sectors_read, sectors_written;
};

_Static_assert(sizeof(struct statsparse_area) <= 32, "one cache line holds two areas");

/*
 * Fill out[0..nr_areas) from text[0..len), the reply to `@stats_print` or
 * `@stats_print_clear` for a whole region: one line per area,
 * "START+LEN c1 .. c11 [more columns]\n" (the final newline is optional).
 * The first line fixes the region start; each next area starts where the
 * previous one ends.  Every LEN is area_sectors, except that the last
 * may be shorter.  Columns after the eleventh (the kernel prints 13, and
 * more with a histogram) are checked for shape and ignored.
 *
 * -EINVAL: malformed text, an area out of order or leaving a gap, a wrong
 *          area size, or a number of lines other than nr_areas;
 * -ERANGE: a number too large for its field (32 bits for I/O counts,
 *          64 for the rest).
 * On error out is partly written.
 */
int statsparse_areas(const char *text, size_t len, uint64_t area_sectors,
		     struct statsparse_area *out, size_t nr_areas);

#endif
