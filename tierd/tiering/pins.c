/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pins: ranges of a volume held on one tier whatever their heat. */
#include "tiering.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tiering-internal.h"

int tiering_report_pins(struct tierings *ts, struct pool *p, struct tiering_pins_report *out)
{
	struct tiering_pool *tp = tiering_get(ts, p);

	*out = (struct tiering_pins_report){ .extent_size = pool_extent_size(p) };
	if (!tp)
		return -ENOMEM;
	if (!tp->nr_pins)
		return 0;
	out->pins = malloc(tp->nr_pins * sizeof(*out->pins));
	if (!out->pins)
		return -ENOMEM;
	memcpy(out->pins, tp->pins, tp->nr_pins * sizeof(*out->pins));
	out->nr = tp->nr_pins;
	return 0;
}

void tiering_pins_report_destroy(struct tiering_pins_report *r)
{
	if (!r)
		return;
	free(r->pins);
	r->pins = NULL;
	r->nr = 0;
}

/*
 * Pins as a per-extent array (0 none, 1 hdd, 2 ssd) is the simple way to
 * overlay, split and merge ranges; a pool's extents number millions at most.
 */
static int pins_rebuild(const uint8_t *per, uint32_t nr, struct state_pin **out, size_t *nr_out)
{
	struct state_pin *v = NULL;
	size_t n = 0, cap = 0;

	for (uint32_t le = 0; le < nr;) {
		uint32_t end = le;

		if (!per[le]) {
			le++;
			continue;
		}
		while (end < nr && per[end] == per[le])
			end++;
		if (n == cap) {
			size_t want = cap ? cap * 2 : 8;
			struct state_pin *grown = realloc(v, want * sizeof(*v));

			if (!grown) {
				free(v);
				return -ENOMEM;
			}
			v = grown;
			cap = want;
		}
		v[n++] = (struct state_pin){ .first = le, .nr = end - le, .ssd = per[le] == 2 };
		le = end;
	}
	*out = v;
	*nr_out = n;
	return 0;
}

static uint8_t *pins_per_extent(const struct tiering_pool *tp, uint32_t nr)
{
	uint8_t *per = calloc(nr ? nr : 1, 1);

	if (!per)
		return NULL;
	for (size_t i = 0; i < tp->nr_pins; i++)
		for (uint32_t le = tp->pins[i].first; le < tp->pins[i].first + tp->pins[i].nr && le < nr;
		     le++)
			per[le] = tp->pins[i].ssd ? 2 : 1;
	return per;
}

int tiering_pin(struct tierings *ts, struct pool *p, const struct tiering_range *ranges,
		size_t nr_ranges, const char *tier, char *err, size_t err_len)
{
	struct tiering_pool *tp;
	uint32_t nr = pool_nr_extents(p);
	uint64_t es = pool_extent_size(p), size = (uint64_t)nr * es;
	struct state_pin *pins;
	size_t nr_pins;
	uint8_t *per, value;
	int r = tiering_get_or_fail(ts, p, &tp, err, err_len);

	if (r < 0)
		return r;
	if (tier && strcmp(tier, "ssd") && strcmp(tier, "hdd"))
		return errbuf_fail(-EINVAL, err, err_len, "bad tier '%s': use ssd or hdd", tier);
	if (!nr_ranges)
		return errbuf_fail(-EINVAL, err, err_len, "no range given");
	/* Every range is checked before any changes: a bad one anywhere changes nothing. */
	for (size_t i = 0; i < nr_ranges; i++) {
		uint64_t offset = ranges[i].offset, length = ranges[i].length;

		if (length && offset < size && length <= size - offset)
			continue;
		if (nr_ranges == 1)
			return errbuf_fail(-EINVAL, err, err_len,
					   "the range must lie inside the volume (%llu bytes) and not be empty",
					   (unsigned long long)size);
		return errbuf_fail(-EINVAL, err, err_len,
				   "range %zu of %zu (offset %llu, length %llu) must lie inside the"
				   " volume (%llu bytes) and not be empty; no range was changed",
				   i + 1, nr_ranges, (unsigned long long)offset,
				   (unsigned long long)length, (unsigned long long)size);
	}
	value = !tier ? 0 : !strcmp(tier, "ssd") ? 2 : 1;
	per = pins_per_extent(tp, nr);
	if (!per)
		return errbuf_fail(-ENOMEM, err, err_len, "out of memory");
	for (size_t i = 0; i < nr_ranges; i++) {
		uint64_t first = ranges[i].offset / es;
		uint64_t end = (ranges[i].offset + ranges[i].length + es - 1) / es;

		memset(per + first, value, end - first);
	}
	r = pins_rebuild(per, nr, &pins, &nr_pins);
	free(per);
	if (r < 0)
		return errbuf_fail(r, err, err_len, "out of memory");
	r = state_pins_save(ts->st, pool_state_id(p), pins, nr_pins);
	if (r < 0) {
		free(pins);
		return errbuf_fail(r, err, err_len, "cannot store the pins of pool %s: %s",
				   pool_name(p), state_last_error(ts->st));
	}
	free(tp->pins);
	tp->pins = pins;
	tp->nr_pins = nr_pins;
	return 0;
}
