/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fileplace: a file's data, piece by piece, joined with where the pool puts
 * each part of its volume: the rows of "tierctl locate". Pure.
 */
#ifndef TIERCTL_FILEPLACE_H
#define TIERCTL_FILEPLACE_H

#include <stddef.h>
#include <stdint.h>

#include "filemap.h"

/* A run of the volume on one device (pool.locate). */
struct fileplace_run {
	uint64_t offset, length; /* bytes of the volume */
	int tier;                /* FILEPLACE_SSD, FILEPLACE_HDD or FILEPLACE_NOWHERE */
	const char *device;      /* NULL when nowhere; borrowed */
	uint64_t device_offset;  /* of the run's first byte */
};

enum { FILEPLACE_NOWHERE = -1, FILEPLACE_HDD = 0, FILEPLACE_SSD = 1 };

struct fileplace_row {
	uint64_t file_offset, length, volume_offset;
	int tier;
	const char *device; /* a run's */
	uint64_t device_offset;
};

/*
 * Rows for the file's extents ext[0..n) (in file order) from runs[0..nr),
 * sorted by offset and disjoint: each extent split where runs change,
 * neighbours that continue each other in the file, on the volume and on
 * the device merged. What no run covers is FILEPLACE_NOWHERE. Returns the
 * number of rows with *out (the caller frees it), or -ENOMEM.
 */
long fileplace_rows(const struct filemap_extent *ext, size_t n, const struct fileplace_run *runs,
		    size_t nr, struct fileplace_row **out);

#endif
