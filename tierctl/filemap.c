/* SPDX-License-Identifier: GPL-2.0-or-later */
/* filemap: where a file's data lies on its block device, as FIEMAP reports it (pin, locate). */
#include "filemap.h"

#include <errno.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "cli.h"
#include "size.h"

/* Extents asked for per FIEMAP call; a fragmented file takes several calls. */
#define FILEMAP_BATCH 256

/* Placement flags of FIEMAP extents that have no byte range of their own on the volume. */
#define FILEMAP_NOWHERE (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC)
#define FILEMAP_PACKED \
	(FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_NOT_ALIGNED)

/* 0 or -ENOMEM. */
static int filemap_add(struct filemap *f, const struct fiemap_extent *fe)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		struct filemap_extent *v = reallocarray(f->v, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n++] = (struct filemap_extent){ fe->fe_logical, fe->fe_physical, fe->fe_length };
	return 0;
}

/* One FIEMAP extent into f; returns 0, or CLI_EXIT_FAILURE after saying why. */
static int filemap_take(struct filemap *f, const struct fiemap_extent *fe)
{
	if (fe->fe_flags & FIEMAP_EXTENT_ENCODED)
		return cli_fail("%s: the data at byte %llu is compressed or otherwise encoded, so"
				" its place on the volume is not a byte range of its own",
				f->path, (unsigned long long)fe->fe_logical);
	if (fe->fe_flags & FILEMAP_NOWHERE)
		f->nowhere_bytes += fe->fe_length;
	else if (fe->fe_flags & FILEMAP_PACKED)
		f->packed_bytes += fe->fe_length;
	else if (fe->fe_length && filemap_add(f, fe))
		return cli_fail("%s", strerror(ENOMEM));
	return 0;
}

int filemap_read(struct filemap *f, int fd)
{
	size_t size = sizeof(struct fiemap) + FILEMAP_BATCH * sizeof(struct fiemap_extent);
	struct fiemap *fm = malloc(size);
	uint64_t start = 0;
	bool last = false;
	int r = 0;

	if (!fm)
		return cli_fail("%s", strerror(ENOMEM));
	while (!last && !r) {
		const struct fiemap_extent *fe;

		memset(fm, 0, size);
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		/* Dirty data has no place yet: write it out first, so that it gets one. */
		fm->fm_flags = start ? 0 : FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = FILEMAP_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
			if (errno == EOPNOTSUPP || errno == ENOTTY || errno == EBADR)
				r = cli_fail("%s: its filesystem cannot tell where the file's data"
					     " lies (FIEMAP)", f->path);
			else
				r = cli_fail("%s: FIEMAP: %s", f->path, strerror(errno));
			break;
		}
		/* None: the rest of the file is a hole (a sparse file need not end in LAST). */
		if (!fm->fm_mapped_extents)
			break;
		for (uint32_t i = 0; i < fm->fm_mapped_extents && !r; i++) {
			fe = &fm->fm_extents[i];
			last = fe->fe_flags & FIEMAP_EXTENT_LAST;
			r = filemap_take(f, fe);
		}
		fe = &fm->fm_extents[fm->fm_mapped_extents - 1];
		/* A filesystem that reported nothing new would loop us forever. */
		if (fe->fe_logical + fe->fe_length <= start)
			break;
		start = fe->fe_logical + fe->fe_length;
	}
	free(fm);
	return r;
}

void filemap_warn(const struct filemap *f)
{
	char size[SIZE_FORMAT_MAX];

	if (f->nowhere_bytes)
		fprintf(stderr, "tierctl: warning: %s of %s has no place on the volume yet and is"
			" left out\n", size_format(f->nowhere_bytes, size, sizeof(size)), f->path);
	if (f->packed_bytes)
		fprintf(stderr, "tierctl: warning: %s of %s lies inside the filesystem's metadata"
			" and is left out\n", size_format(f->packed_bytes, size, sizeof(size)),
			f->path);
}

void filemap_free(struct filemap *f)
{
	free(f->v);
	f->v = NULL;
	f->n = f->cap = 0;
}
