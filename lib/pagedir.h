/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TIERD_PAGEDIR_H
#define TIERD_PAGEDIR_H

#include <stdint.h>
#include <stddef.h>

/*
 * A sparse array of nr page pointers, most of them NULL: the pages of the
 * extent map and of the heat table, a pointer per 64 extents.  Held in
 * leaves of PAGEDIR_LEAF pointers, made when one of their pointers is
 * first set, so a 200 TiB pool's 819,200 pointers cost 13 KB until pages
 * are made, not 6.5 MB, and at most that when they are everywhere.  A
 * leaf stays until the array shrinks past it: a slot whose leaf was made
 * (pagedir_hold(), or any set in it) takes a pointer without memory.
 *
 * The pages are the caller's: nothing here allocates or frees them.
 * Functions that can fail return 0 or a negative errno.
 */

#define PAGEDIR_LEAF 512u

struct pagedir {
	uint32_t nr;
	uint32_t nr_leaves;
	void ***leaf; /* NULL: every pointer of the leaf is NULL */
	uint32_t nr_made;
};

/* nr NULL pointers; on error *d is left empty. */
int pagedir_init(struct pagedir *d, uint32_t nr);
/* The directory and its leaves, not the pages.  Accepts NULL and an empty one. */
void pagedir_destroy(struct pagedir *d);
/*
 * Grow with NULL pointers, or shrink: the caller has taken every page at
 * or past nr (they must be NULL).  -ENOMEM leaves d as it was.
 */
int pagedir_resize(struct pagedir *d, uint32_t nr);

static inline void *pagedir_get(const struct pagedir *d, uint32_t i)
{
	void **leaf = i < d->nr ? d->leaf[i / PAGEDIR_LEAF] : NULL;

	return leaf ? leaf[i % PAGEDIR_LEAF] : NULL;
}

/* Make i's leaf, so that pagedir_set(d, i, ...) cannot fail.  -EINVAL past nr. */
int pagedir_hold(struct pagedir *d, uint32_t i);
/* -ENOMEM when i's leaf must be made and cannot (nothing changed); -EINVAL past nr. */
int pagedir_set(struct pagedir *d, uint32_t i, void *page);
/* The first i in [from, end) with a page, passing a leaf without one at once; end if none. */
uint32_t pagedir_next(const struct pagedir *d, uint32_t from, uint32_t end);
/* Memory held: the directory and the leaves made, not the pages. */
size_t pagedir_bytes(const struct pagedir *d);

#endif
