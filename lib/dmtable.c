/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "dmtable.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shared by dmtable_params() and each line of dmtable_format(), which must agree. */
#define DMTABLE_PARAMS_FMT "%" PRIu32 ":%" PRIu32 " %" PRIu64

_Static_assert(sizeof(unsigned long long) == sizeof(uint64_t), "strtoull must cover uint64_t");

static int dmtable_push(struct dmtable *t, const struct dmtable_target *tg)
{
	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct dmtable_target *grown = reallocarray(t->t, cap, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		t->t = grown;
		t->cap = cap;
	}
	t->t[t->nr++] = *tg;
	return 0;
}

/*
 * Contiguity is judged on the kernel's terms (same major:minor, next offset)
 * rather than by pe number, so whatever the kernel would see as one run is
 * one target.
 */
static int dmtable_push_merged(struct dmtable *t, const struct dmtable_target *tg)
{
	struct dmtable_target *last = t->nr ? &t->t[t->nr - 1] : NULL;

	if (last && last->error && tg->error && last->start + last->len == tg->start) {
		last->len += tg->len;
		return 0;
	}
	if (last && !last->mirror_region && !last->error && !tg->error &&
	    last->major == tg->major && last->minor == tg->minor &&
	    last->start + last->len == tg->start && last->offset + last->len == tg->offset) {
		last->len += tg->len;
		return 0;
	}
	return dmtable_push(t, tg);
}

/* Sector of pe on dev; -EINVAL out of range, -ERANGE if the extent's end would wrap. */
static int dmtable_locate(const struct extmap *m, const struct dmtable_dev *devs,
			  uint64_t extent_sectors, unsigned dev, uint32_t pe, uint64_t *sector)
{
	if (dev >= m->nr_devs || pe >= m->nr_pe[dev])
		return -EINVAL;
	/* The end of the extent must fit, so merged offsets cannot wrap either. */
	if ((uint64_t)pe + 1 > (UINT64_MAX - devs[dev].data_start) / extent_sectors)
		return -ERANGE;
	*sector = devs[dev].data_start + pe * extent_sectors;
	return 0;
}

/* A moving extent's mirror target, from where the map puts it to the move's destination. */
static int dmtable_add_moving(struct dmtable *t, const struct extmap *m,
			      const struct dmtable_dev *devs, uint64_t extent_sectors,
			      const struct dmtable_move *move, uint32_t region_sectors)
{
	struct extmap_loc loc = extmap_get(m, move->le);
	struct dmtable_target tg = { .start = move->le * extent_sectors, .len = extent_sectors };
	int ret;

	ret = dmtable_locate(m, devs, extent_sectors, loc.dev, loc.pe, &tg.offset);
	if (ret)
		return ret;
	if (devs[loc.dev].missing || (move->dev == loc.dev && move->pe == loc.pe) ||
	    (move->dev < m->nr_devs && devs[move->dev].missing))
		return -EINVAL;
	tg.major = devs[loc.dev].major;
	tg.minor = devs[loc.dev].minor;
	ret = dmtable_locate(m, devs, extent_sectors, move->dev, move->pe, &tg.mirror_offset);
	if (ret)
		return ret;
	tg.mirror_major = devs[move->dev].major;
	tg.mirror_minor = devs[move->dev].minor;
	tg.mirror_region = region_sectors;
	return dmtable_push(t, &tg);
}

/* A failed build or parse leaves *out empty rather than half-filled. */
static int dmtable_settle(struct dmtable *out, int ret)
{
	if (ret)
		dmtable_destroy(out);
	return ret;
}

/*
 * Targets for le [le, end) where no move is: a span of the map at a time
 * (extmap_span), so a pool that is a few runs costs a few steps, not one
 * per extent (52 million at 200 TiB).
 */
static int dmtable_add_still(struct dmtable *t, const struct extmap *m,
			     const struct dmtable_dev *devs, uint64_t extent_sectors, uint32_t le,
			     uint32_t end)
{
	while (le < end) {
		struct extmap_loc loc;
		uint32_t n = extmap_span(m, le, end - le, &loc);
		struct dmtable_target tg = { .start = le * extent_sectors,
					     .len = (uint64_t)n * extent_sectors };
		int ret;

		if (!n)
			return -EINVAL;
		/* Its last extent in range and its end in 64 bits: then so is each before it. */
		ret = dmtable_locate(m, devs, extent_sectors, loc.dev, loc.pe + (n - 1), &tg.offset);
		if (ret)
			return ret;
		tg.offset -= (uint64_t)(n - 1) * extent_sectors;
		if (devs[loc.dev].missing) {
			tg.offset = 0;
			tg.error = true;
		} else {
			tg.major = devs[loc.dev].major;
			tg.minor = devs[loc.dev].minor;
		}
		ret = dmtable_push_merged(t, &tg);
		if (ret)
			return ret;
		le += n;
	}
	return 0;
}

/* len sectors of the volume from start, on dev from offset, or an error target where dev is missing. */
static int dmtable_add_range(struct dmtable *t, const struct dmtable_dev *dev, uint64_t start,
			     uint64_t len, uint64_t offset)
{
	struct dmtable_target tg = { .start = start, .len = len };

	if (dev->missing) {
		tg.error = true;
	} else {
		tg.major = dev->major;
		tg.minor = dev->minor;
		tg.offset = offset;
	}
	return dmtable_push_merged(t, &tg);
}

/* Where piece idx of le's extent now sits: its slot when out, else home (which is at home). */
static int dmtable_piece_at(const struct extmap *m, const struct piecemap *pm,
			    const struct dmtable_dev *devs, uint64_t extent_sectors, uint64_t home,
			    unsigned home_dev, uint32_t container, uint32_t slot, uint32_t idx,
			    unsigned *dev, uint64_t *offset)
{
	uint64_t ps = extent_sectors / pm->pieces_per_extent;
	const struct piecemap_container *c;
	int ret;

	if (container == PIECEMAP_NO_CONTAINER) {
		*dev = home_dev;
		*offset = home + idx * ps;
		return 0;
	}
	if (container >= pm->nr_containers || slot >= pm->pieces_per_extent)
		return -EINVAL;
	c = &pm->containers[container];
	ret = dmtable_locate(m, devs, extent_sectors, c->dev, c->pe, offset);
	*dev = c->dev;
	if (!ret)
		*offset += slot * ps;
	return ret;
}

/* A piece on its way: a mirror from where it is to where it goes. */
static int dmtable_add_piece_moving(struct dmtable *t, const struct dmtable_dev *devs,
				    uint64_t start, uint64_t ps, unsigned src_dev, uint64_t src,
				    unsigned dst_dev, uint64_t dst, uint32_t region_sectors)
{
	struct dmtable_target tg = { .start = start, .len = ps };

	if (devs[src_dev].missing || devs[dst_dev].missing || (src_dev == dst_dev && src == dst))
		return -EINVAL;
	tg.major = devs[src_dev].major;
	tg.minor = devs[src_dev].minor;
	tg.offset = src;
	tg.mirror_major = devs[dst_dev].major;
	tg.mirror_minor = devs[dst_dev].minor;
	tg.mirror_offset = dst;
	tg.mirror_region = region_sectors < ps ? region_sectors : (uint32_t)ps;
	return dmtable_push(t, &tg);
}

/*
 * A split extent, or one whose pieces move: its home between the pieces
 * out, each piece out from its slot, each moving piece (moves[], sorted by
 * piece) as a mirror.
 */
static int dmtable_add_split(struct dmtable *t, const struct extmap *m,
			     const struct piecemap *pm, const struct dmtable_dev *devs,
			     uint64_t extent_sectors, uint32_t le,
			     const struct dmtable_piece_move *moves, size_t nr_moves,
			     uint32_t region_sectors)
{
	uint64_t ps = extent_sectors / pm->pieces_per_extent;
	uint64_t start = le * extent_sectors, home;
	struct extmap_loc loc = extmap_get(m, le);
	uint32_t first, nr = piecemap_extent(pm, le, &first), next = 0, i = first;
	size_t k = 0;
	int ret;

	if (loc.dev == EXTMAP_NO_DEV)
		return -EINVAL;
	ret = dmtable_locate(m, devs, extent_sectors, loc.dev, loc.pe, &home);
	/* The pieces out and the pieces moving, merged in piece order. */
	while (!ret && (i < first + nr || k < nr_moves)) {
		const struct piecemap_piece *out = i < first + nr ? &pm->pieces[i] : NULL;
		const struct dmtable_piece_move *mv = k < nr_moves ? &moves[k] : NULL;
		uint32_t idx = out && (!mv || out->idx <= mv->idx) ? out->idx : mv->idx;
		uint32_t container = PIECEMAP_NO_CONTAINER, slot = 0;
		unsigned dev;
		uint64_t at;

		if (out && out->idx == idx) {
			container = out->container;
			slot = out->slot;
			i++;
		}
		if (idx >= pm->pieces_per_extent)
			return -EINVAL;
		if (idx > next)
			ret = dmtable_add_range(t, &devs[loc.dev], start + next * ps,
						(idx - next) * ps, home + next * ps);
		if (!ret)
			ret = dmtable_piece_at(m, pm, devs, extent_sectors, home, loc.dev,
					       container, slot, idx, &dev, &at);
		if (!ret && mv && mv->idx == idx) {
			unsigned dst_dev;
			uint64_t dst;

			ret = dmtable_piece_at(m, pm, devs, extent_sectors, home, loc.dev,
					       mv->container, mv->slot, idx, &dst_dev, &dst);
			if (!ret)
				ret = dmtable_add_piece_moving(t, devs, start + idx * ps, ps, dev, at,
							       dst_dev, dst, region_sectors);
			k++;
		} else if (!ret) {
			ret = dmtable_add_range(t, &devs[dev], start + idx * ps, ps, at);
		}
		next = idx + 1u;
	}
	if (!ret && next < pm->pieces_per_extent)
		ret = dmtable_add_range(t, &devs[loc.dev], start + next * ps,
					(pm->pieces_per_extent - next) * ps, home + next * ps);
	return ret;
}

/*
 * The whole table, le by le where something is other than the runs say:
 * extents that move whole, split extents of pm (may be NULL) and extents
 * whose pieces move; the runs in between a span at a time.
 */
static int dmtable_add_all(struct dmtable *t, const struct extmap *m, const struct piecemap *pm,
			   const struct dmtable_dev *devs, uint64_t extent_sectors,
			   const struct dmtable_move *moves, size_t nr_moves,
			   const struct dmtable_piece_move *piece_moves, size_t nr_piece_moves,
			   uint32_t region_sectors)
{
	uint32_t le = 0;
	size_t i = 0, j = 0;

	while (le < m->nr_logical) {
		uint32_t next = pm ? piecemap_next_split(pm, le) : UINT32_MAX;
		bool split;
		int ret;

		if (next > m->nr_logical)
			next = m->nr_logical;
		if (i < nr_moves && moves[i].le < next)
			next = moves[i].le;
		if (j < nr_piece_moves && piece_moves[j].le < next)
			next = piece_moves[j].le;
		ret = dmtable_add_still(t, m, devs, extent_sectors, le, next);
		if (ret || next == m->nr_logical)
			return ret;
		split = (pm && piecemap_extent(pm, next, NULL)) ||
			(j < nr_piece_moves && piece_moves[j].le == next);
		if (i < nr_moves && moves[i].le == next) {
			if (split)
				return -EINVAL;
			ret = dmtable_add_moving(t, m, devs, extent_sectors, &moves[i++],
						 region_sectors);
		} else {
			size_t k = j;

			while (k < nr_piece_moves && piece_moves[k].le == next)
				k++;
			ret = dmtable_add_split(t, m, pm, devs, extent_sectors, next,
						piece_moves + j, k - j, region_sectors);
			j = k;
		}
		if (ret)
			return ret;
		le = next + 1;
	}
	return 0;
}

/* A piece map that is zeroed (decoded from a slot without pieces) has none: as NULL. */
static const struct piecemap *dmtable_pieces(const struct piecemap *pm)
{
	return pm && (pm->pieces_per_extent || pm->nr_pieces || pm->nr_containers) ? pm : NULL;
}

/* What every build checks of its arguments; region_sectors 0 for a table with no moves. */
static int dmtable_args_valid(const struct extmap *m, const struct piecemap *pm,
			      const struct dmtable_dev *devs, uint64_t extent_sectors,
			      uint32_t region_sectors, bool moving)
{
	if (!m || (m->nr_devs && !devs) || !extent_sectors)
		return -EINVAL;
	if (pm && (!pm->pieces_per_extent || extent_sectors % pm->pieces_per_extent))
		return -EINVAL;
	if (moving && (!region_sectors || (region_sectors & (region_sectors - 1)) ||
		       extent_sectors % region_sectors))
		return -EINVAL;
	if (m->nr_logical > UINT64_MAX / extent_sectors)
		return -ERANGE;
	if (pm && pm->nr_pieces && pm->pieces[pm->nr_pieces - 1].le >= m->nr_logical)
		return -EINVAL;
	return 0;
}

int dmtable_build_split(struct dmtable *out, const struct extmap *m, const struct piecemap *pm,
			const struct dmtable_dev *devs, uint64_t extent_sectors)
{
	int ret;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	pm = dmtable_pieces(pm);
	ret = dmtable_args_valid(m, pm, devs, extent_sectors, 0, false);
	if (ret)
		return ret;
	return dmtable_settle(out, dmtable_add_all(out, m, pm, devs, extent_sectors, NULL, 0,
						   NULL, 0, 0));
}

int dmtable_build(struct dmtable *out, const struct extmap *m,
		  const struct dmtable_dev *devs, uint64_t extent_sectors)
{
	return dmtable_build_split(out, m, NULL, devs, extent_sectors);
}

int dmtable_build_moving_split(struct dmtable *out, const struct extmap *m,
			       const struct piecemap *pm, const struct dmtable_dev *devs,
			       uint64_t extent_sectors, const struct dmtable_move *moves,
			       size_t nr_moves, const struct dmtable_piece_move *piece_moves,
			       size_t nr_piece_moves, uint32_t region_sectors)
{
	int ret;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	pm = dmtable_pieces(pm);
	ret = dmtable_args_valid(m, pm, devs, extent_sectors, region_sectors, true);
	if (ret)
		return ret;
	if ((nr_moves && !moves) || (nr_piece_moves && (!piece_moves || !pm)))
		return -EINVAL;
	for (size_t i = 1; i < nr_moves; i++)
		if (moves[i].le <= moves[i - 1].le)
			return -EINVAL;
	if (nr_moves && moves[nr_moves - 1].le >= m->nr_logical)
		return -EINVAL;
	for (size_t i = 1; i < nr_piece_moves; i++)
		if (piece_moves[i].le < piece_moves[i - 1].le ||
		    (piece_moves[i].le == piece_moves[i - 1].le &&
		     piece_moves[i].idx <= piece_moves[i - 1].idx))
			return -EINVAL;
	if (nr_piece_moves && piece_moves[nr_piece_moves - 1].le >= m->nr_logical)
		return -EINVAL;
	return dmtable_settle(out, dmtable_add_all(out, m, pm, devs, extent_sectors, moves,
						   nr_moves, piece_moves, nr_piece_moves,
						   region_sectors));
}

int dmtable_build_moving(struct dmtable *out, const struct extmap *m,
			 const struct dmtable_dev *devs, uint64_t extent_sectors,
			 const struct dmtable_move *moves, size_t nr_moves, uint32_t region_sectors)
{
	return dmtable_build_moving_split(out, m, NULL, devs, extent_sectors, moves, nr_moves,
					  NULL, 0, region_sectors);
}

const char *dmtable_type(const struct dmtable_target *t)
{
	return t->error ? "error" : t->mirror_region ? "mirror" : "linear";
}

int dmtable_params(const struct dmtable_target *t, char *buf, size_t len)
{
	int n;

	if (!t || (!buf && len))
		return -EINVAL;
	if (t->error)
		n = snprintf(buf, len, "%s", "");
	else if (t->mirror_region)
		n = snprintf(buf, len, "core 1 %" PRIu32 " 2 " DMTABLE_PARAMS_FMT " " DMTABLE_PARAMS_FMT
			     " 1 handle_errors", t->mirror_region, t->major, t->minor, t->offset,
			     t->mirror_major, t->mirror_minor, t->mirror_offset);
	else
		n = snprintf(buf, len, DMTABLE_PARAMS_FMT, t->major, t->minor, t->offset);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return 0;
}

/* Parsing cursor with a sticky error, so a line reads as its grammar does. */
struct dmtable_cursor {
	const char *p;
	int err;
};

static void dmtable_fail(struct dmtable_cursor *c, int err)
{
	if (!c->err)
		c->err = err;
}

static uint64_t dmtable_take_number(struct dmtable_cursor *c, uint64_t max)
{
	unsigned long long v;
	char *end;

	if (c->err)
		return 0;
	/* strtoull alone would accept leading blanks, '+' and a negating '-'. */
	if (*c->p < '0' || *c->p > '9') {
		dmtable_fail(c, -EINVAL);
		return 0;
	}
	errno = 0;
	v = strtoull(c->p, &end, 10);
	if (errno == ERANGE || v > max) {
		dmtable_fail(c, -ERANGE);
		return 0;
	}
	c->p = end;
	return v;
}

static void dmtable_take_text(struct dmtable_cursor *c, const char *text)
{
	size_t n = strlen(text);

	if (c->err)
		return;
	if (strncmp(c->p, text, n))
		dmtable_fail(c, -EINVAL);
	else
		c->p += n;
}

static bool dmtable_skip_blanks(struct dmtable_cursor *c)
{
	const char *start = c->p;

	while (*c->p == ' ' || *c->p == '\t')
		c->p++;
	return c->p != start;
}

static void dmtable_take_blanks(struct dmtable_cursor *c)
{
	if (!c->err && !dmtable_skip_blanks(c))
		dmtable_fail(c, -EINVAL);
}

static void dmtable_take_line(struct dmtable_cursor *c, struct dmtable_target *tg)
{
	memset(tg, 0, sizeof(*tg));
	tg->start = dmtable_take_number(c, UINT64_MAX);
	dmtable_take_blanks(c);
	tg->len = dmtable_take_number(c, UINT64_MAX);
	dmtable_take_blanks(c);
	if (!c->err && !strncmp(c->p, "error", 5)) {
		c->p += 5;
		tg->error = true;
		goto end_of_line;
	}
	dmtable_take_text(c, "linear");
	dmtable_take_blanks(c);
	tg->major = (uint32_t)dmtable_take_number(c, UINT32_MAX);
	dmtable_take_text(c, ":");
	tg->minor = (uint32_t)dmtable_take_number(c, UINT32_MAX);
	dmtable_take_blanks(c);
	tg->offset = dmtable_take_number(c, UINT64_MAX);
end_of_line:
	if (c->err)
		return;
	dmtable_skip_blanks(c);
	if (*c->p == '\n')
		c->p++;
	else if (*c->p)
		dmtable_fail(c, -EINVAL);
}

/* The kernel only holds gapless tables, so anything else did not come from it. */
static int dmtable_add_line(struct dmtable *t, struct dmtable_cursor *c)
{
	uint64_t next = dmtable_size(t);
	struct dmtable_target tg;

	dmtable_take_line(c, &tg);
	if (c->err)
		return c->err;
	if (tg.start != next || !tg.len || tg.len > UINT64_MAX - tg.start ||
	    tg.len > UINT64_MAX - tg.offset)
		return -EINVAL;
	return dmtable_push(t, &tg);
}

int dmtable_parse(struct dmtable *out, const char *text)
{
	struct dmtable_cursor c = { .p = text };
	int ret = 0;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!text)
		return -EINVAL;
	while (*c.p && !ret)
		ret = dmtable_add_line(out, &c);
	return dmtable_settle(out, ret);
}

static size_t dmtable_format_line(const struct dmtable_target *tg, char *buf, size_t len)
{
	char params[160];
	int n;

	dmtable_params(tg, params, sizeof(params));
	n = snprintf(buf, len, "%" PRIu64 " %" PRIu64 " %s%s%s\n", tg->start, tg->len,
		     dmtable_type(tg), params[0] ? " " : "", params);

	/* Only an encoding error could make n negative, and there is no text to encode. */
	return n > 0 ? (size_t)n : 0;
}

int dmtable_format(const struct dmtable *t, char **text_out)
{
	size_t total = 1, used = 0;
	char *text;

	if (!text_out)
		return -EINVAL;
	*text_out = NULL;
	if (!t)
		return -EINVAL;
	for (size_t i = 0; i < t->nr; i++)
		total += dmtable_format_line(&t->t[i], NULL, 0);
	text = malloc(total);
	if (!text)
		return -ENOMEM;
	text[0] = '\0';
	for (size_t i = 0; i < t->nr; i++)
		used += dmtable_format_line(&t->t[i], text + used, total - used);
	*text_out = text;
	return 0;
}

uint64_t dmtable_size(const struct dmtable *t)
{
	if (!t || !t->nr)
		return 0;
	return t->t[t->nr - 1].start + t->t[t->nr - 1].len;
}

void dmtable_destroy(struct dmtable *t)
{
	if (!t)
		return;
	free(t->t);
	memset(t, 0, sizeof(*t));
}
