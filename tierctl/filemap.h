/* SPDX-License-Identifier: GPL-2.0-or-later */
/* filemap: where a file's data lies on its block device, as FIEMAP reports it (pin, locate). */
#ifndef TIERCTL_FILEMAP_H
#define TIERCTL_FILEMAP_H

#include <stddef.h>
#include <stdint.h>

struct filemap_extent {
	uint64_t logical;  /* bytes into the file */
	uint64_t physical; /* bytes into the filesystem's device */
	uint64_t length;
};

struct filemap {
	const char *path;
	struct filemap_extent *v; /* in file order */
	size_t n, cap;
	/* What has no byte range of its own on the device, left out of v. */
	uint64_t nowhere_bytes; /* not placed yet (delayed allocation, unknown) */
	uint64_t packed_bytes;  /* inline or tail-packed in the filesystem's metadata */
};

/*
 * Read where fd's (f->path's) data lies into f, after flushing its dirty
 * data so that it gets a place. Returns 0, or CLI_EXIT_FAILURE after saying
 * why (FIEMAP not supported, an encoded extent, out of memory).
 */
int filemap_read(struct filemap *f, int fd);
/* The warnings for what filemap_read left out, on stderr. */
void filemap_warn(const struct filemap *f);
/* Accepts an empty filemap. */
void filemap_free(struct filemap *f);

#endif
