/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "pagedir.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t leaves_for(uint32_t nr)
{
	return (uint32_t)(((uint64_t)nr + PAGEDIR_LEAF - 1) / PAGEDIR_LEAF);
}

int pagedir_init(struct pagedir *d, uint32_t nr)
{
	if (!d)
		return -EINVAL;
	memset(d, 0, sizeof(*d));
	return pagedir_resize(d, nr);
}

void pagedir_destroy(struct pagedir *d)
{
	if (!d)
		return;
	for (uint32_t l = 0; l < d->nr_leaves; l++)
		free(d->leaf[l]);
	free(d->leaf);
	memset(d, 0, sizeof(*d));
}

int pagedir_resize(struct pagedir *d, uint32_t nr)
{
	uint32_t leaves = leaves_for(nr);
	void ***grown;

	if (!d)
		return -EINVAL;
	if (leaves > d->nr_leaves) {
		grown = reallocarray(d->leaf, leaves, sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		memset(grown + d->nr_leaves, 0, (leaves - d->nr_leaves) * sizeof(*grown));
		d->leaf = grown;
	}
	for (uint32_t l = leaves; l < d->nr_leaves; l++) {
		if (d->leaf[l])
			d->nr_made--;
		free(d->leaf[l]);
		d->leaf[l] = NULL;
	}
	if (leaves < d->nr_leaves) {
		/* A failed shrink of the directory keeps the larger block, which still serves. */
		grown = leaves ? reallocarray(d->leaf, leaves, sizeof(*grown)) : NULL;
		if (grown || !leaves) {
			if (!leaves)
				free(d->leaf);
			d->leaf = grown;
		}
	}
	d->nr_leaves = leaves;
	d->nr = nr;
	return 0;
}

int pagedir_hold(struct pagedir *d, uint32_t i)
{
	void ***slot;

	if (!d || i >= d->nr)
		return -EINVAL;
	slot = &d->leaf[i / PAGEDIR_LEAF];
	if (*slot)
		return 0;
	*slot = calloc(PAGEDIR_LEAF, sizeof(**slot));
	if (!*slot)
		return -ENOMEM;
	d->nr_made++;
	return 0;
}

int pagedir_set(struct pagedir *d, uint32_t i, void *page)
{
	int r;

	if (!d || i >= d->nr)
		return -EINVAL;
	if (!page && !d->leaf[i / PAGEDIR_LEAF])
		return 0;
	r = pagedir_hold(d, i);
	if (r < 0)
		return r;
	d->leaf[i / PAGEDIR_LEAF][i % PAGEDIR_LEAF] = page;
	return 0;
}

uint32_t pagedir_next(const struct pagedir *d, uint32_t from, uint32_t end)
{
	if (!d || end > d->nr)
		end = d ? d->nr : 0;
	while (from < end) {
		void **leaf = d->leaf[from / PAGEDIR_LEAF];
		uint32_t leaf_end = (from / PAGEDIR_LEAF + 1) * PAGEDIR_LEAF;

		if (leaf_end > end)
			leaf_end = end;
		if (leaf) {
			for (; from < leaf_end; from++)
				if (leaf[from % PAGEDIR_LEAF])
					return from;
		}
		from = leaf_end;
	}
	return end;
}

size_t pagedir_bytes(const struct pagedir *d)
{
	if (!d)
		return 0;
	return (size_t)d->nr_leaves * sizeof(*d->leaf) +
	       (size_t)d->nr_made * PAGEDIR_LEAF * sizeof(**d->leaf);
}
