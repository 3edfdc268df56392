/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fileplace: a file's data, piece by piece, joined with where the pool puts each part. */
#include "fileplace.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The first run that ends after pos. */
static size_t first_after(const struct fileplace_run *runs, size_t nr, uint64_t pos)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (runs[mid].offset + runs[mid].length <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool same_device(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool continues(const struct fileplace_row *a, const struct fileplace_row *b)
{
	return a->tier == b->tier && same_device(a->device, b->device) &&
	       a->file_offset + a->length == b->file_offset &&
	       a->volume_offset + a->length == b->volume_offset &&
	       (a->tier == FILEPLACE_NOWHERE || a->device_offset + a->length == b->device_offset);
}

long fileplace_rows(const struct filemap_extent *ext, size_t n, const struct fileplace_run *runs,
		    size_t nr, struct fileplace_row **out)
{
	struct fileplace_row *v = NULL, row;
	size_t len = 0, cap = 0;

	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		uint64_t pos = ext[i].physical, end = ext[i].physical + ext[i].length;
		size_t k = first_after(runs, nr, pos);

		while (pos < end) {
			const struct fileplace_run *r = k < nr ? &runs[k] : NULL;
			uint64_t stop;

			row = (struct fileplace_row){
				.file_offset = ext[i].logical + (pos - ext[i].physical),
				.volume_offset = pos,
				.tier = FILEPLACE_NOWHERE,
			};
			if (r && r->offset <= pos) {
				stop = r->offset + r->length;
				row.tier = r->tier;
				row.device = r->device;
				row.device_offset = r->device_offset + (pos - r->offset);
				k++;
			} else {
				stop = r ? r->offset : end;
			}
			row.length = (stop < end ? stop : end) - pos;
			pos += row.length;
			if (len && continues(&v[len - 1], &row)) {
				v[len - 1].length += row.length;
				continue;
			}
			if (len == cap) {
				struct fileplace_row *grown;

				cap = cap ? cap * 2 : 16;
				grown = reallocarray(v, cap, sizeof(*v));
				if (!grown) {
					free(v);
					return -ENOMEM;
				}
				v = grown;
			}
			v[len++] = row;
		}
	}
	*out = v;
	return (long)len;
}
