/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * state-map: a pool's extent map as runs of table extent_run
 * (schema/005-extent-runs.sql): written whole, changed extent by extent in
 * a migration's commit, and loaded.
 */
#include "state.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "state-internal.h"

/* Logical extents [le, le + nr) at physical extents [pe, pe + nr) of dev. */
struct run {
	int64_t le, nr, dev, pe;
};

static int run_insert(struct state *st, sqlite3_stmt *stmt, int64_t id, const struct run *r)
{
	sqlite3_bind_int64(stmt, 1, id);
	sqlite3_bind_int64(stmt, 2, r->le);
	sqlite3_bind_int64(stmt, 3, r->nr);
	sqlite3_bind_int64(stmt, 4, r->dev);
	sqlite3_bind_int64(stmt, 5, r->pe);
	return state_step_done(st, stmt);
}

int state_map_write(struct state *st, const struct state_pool *p)
{
	sqlite3_stmt *stmt = NULL;
	struct run run = { .nr = 0 };
	int r;

	r = state_prepare(st, "INSERT INTO extent_run (pool_id, le, nr, dev, pe)"
			  " VALUES (?1, ?2, ?3, ?4, ?5)", &stmt);
	if (r < 0)
		return r;
	/* Maximal runs, as state_map_save_les() keeps them. One past the end ends the last. */
	for (uint64_t le = 0; r == 0 && le <= p->map.nr_logical; le++) {
		struct extmap_loc loc = extmap_get(&p->map, (uint32_t)le);

		if (run.nr && loc.dev == run.dev && loc.pe == run.pe + run.nr) {
			run.nr++;
			continue;
		}
		if (run.nr)
			r = run_insert(st, stmt, p->id, &run);
		run.nr = 0;
		if (loc.dev != EXTMAP_NO_DEV)
			run = (struct run){ .le = (int64_t)le, .nr = 1, .dev = loc.dev, .pe = loc.pe };
	}
	sqlite3_finalize(stmt);
	return r;
}

/* The statements of an incremental save, prepared once per commit. */
struct map_stmts {
	sqlite3_stmt *before; /* the run with the greatest le <= ?2 */
	sqlite3_stmt *at;     /* the run that starts at ?2 */
	sqlite3_stmt *insert;
	sqlite3_stmt *set_nr;
	sqlite3_stmt *del;
};

static void map_stmts_finalize(struct map_stmts *s)
{
	sqlite3_finalize(s->before);
	sqlite3_finalize(s->at);
	sqlite3_finalize(s->insert);
	sqlite3_finalize(s->set_nr);
	sqlite3_finalize(s->del);
}

static int map_stmts_prepare(struct state *st, struct map_stmts *s)
{
	int r;

	/* Both lookups seek the primary key (pool_id, le): O(log runs) each. */
	r = state_prepare(st, "SELECT le, nr, dev, pe FROM extent_run WHERE pool_id = ?1 AND le <= ?2"
			  " ORDER BY le DESC LIMIT 1", &s->before);
	if (r == 0)
		r = state_prepare(st, "SELECT le, nr, dev, pe FROM extent_run"
				  " WHERE pool_id = ?1 AND le = ?2", &s->at);
	if (r == 0)
		r = state_prepare(st, "INSERT INTO extent_run (pool_id, le, nr, dev, pe)"
				  " VALUES (?1, ?2, ?3, ?4, ?5)", &s->insert);
	if (r == 0)
		r = state_prepare(st, "UPDATE extent_run SET nr = ?3 WHERE pool_id = ?1 AND le = ?2",
				  &s->set_nr);
	if (r == 0)
		r = state_prepare(st, "DELETE FROM extent_run WHERE pool_id = ?1 AND le = ?2",
				  &s->del);
	return r;
}

/* One run found by stmt (before or at) for le: 1 and *out, 0 if there is none. */
static int run_find(struct state *st, sqlite3_stmt *stmt, int64_t id, int64_t le, struct run *out)
{
	int rc, r = 0;

	sqlite3_bind_int64(stmt, 1, id);
	sqlite3_bind_int64(stmt, 2, le);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->le = sqlite3_column_int64(stmt, 0);
		out->nr = sqlite3_column_int64(stmt, 1);
		out->dev = sqlite3_column_int64(stmt, 2);
		out->pe = sqlite3_column_int64(stmt, 3);
		r = 1;
	} else if (rc != SQLITE_DONE) {
		r = state_fail(st, rc);
	}
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	return r;
}

/* set_nr (nr, never 0) or del (nr 0) on the run that starts at le. */
static int run_key(struct state *st, sqlite3_stmt *stmt, int64_t id, int64_t le, int64_t nr)
{
	sqlite3_bind_int64(stmt, 1, id);
	sqlite3_bind_int64(stmt, 2, le);
	if (nr)
		sqlite3_bind_int64(stmt, 3, nr);
	return state_step_done(st, stmt);
}

/*
 * Give extent x the location loc in the stored runs, which hold the map as
 * it was before: cut x out of the run that holds it, then store x alone or
 * joined to the run that ends just before it and the one that starts just
 * after it, when they continue it. Only the rows next to x are read, so this
 * costs a few index seeks whatever the size of the pool, and maximal runs
 * stay maximal.
 */
static int map_save_le(struct state *st, struct map_stmts *s, int64_t id, int64_t x,
		       struct extmap_loc loc)
{
	struct run cur, left, right, mine = { .le = x, .nr = 1, .dev = loc.dev, .pe = loc.pe };
	int found, have_left = 0, r;

	found = run_find(st, s->before, id, x, &cur);
	if (found < 0)
		return found;
	if (found && cur.le + cur.nr > x) {
		if (cur.dev == loc.dev && cur.pe + (x - cur.le) == loc.pe)
			return 0;
		if (x > cur.le) {
			left = cur;
			left.nr = x - cur.le;
			have_left = 1;
			r = run_key(st, s->set_nr, id, cur.le, left.nr);
		} else {
			r = run_key(st, s->del, id, cur.le, 0);
		}
		if (r == 0 && x + 1 < cur.le + cur.nr) {
			right = (struct run){ .le = x + 1, .nr = cur.le + cur.nr - x - 1,
					      .dev = cur.dev, .pe = cur.pe + (x + 1 - cur.le) };
			r = run_insert(st, s->insert, id, &right);
		}
		if (r < 0)
			return r;
	} else if (found) {
		left = cur;
		have_left = 1;
	}
	if (loc.dev == EXTMAP_NO_DEV)
		return 0; /* unmapped: no row */
	if (!have_left && x > 0) {
		have_left = run_find(st, s->before, id, x - 1, &left);
		if (have_left < 0)
			return have_left;
	}
	if (have_left && !(left.le + left.nr == x && left.dev == mine.dev &&
			   left.pe + left.nr == mine.pe))
		have_left = 0;
	if (have_left)
		mine = (struct run){ .le = left.le, .nr = left.nr + 1, .dev = left.dev, .pe = left.pe };
	found = run_find(st, s->at, id, x + 1, &right);
	if (found < 0)
		return found;
	if (found && right.dev == mine.dev && right.pe == (int64_t)loc.pe + 1) {
		r = run_key(st, s->del, id, right.le, 0);
		if (r < 0)
			return r;
		mine.nr += right.nr;
	}
	if (have_left)
		return run_key(st, s->set_nr, id, mine.le, mine.nr);
	return run_insert(st, s->insert, id, &mine);
}

int state_map_save_les(struct state *st, const struct state_pool *p, const uint32_t *les,
		       size_t nr)
{
	struct map_stmts s = { NULL };
	int r = map_stmts_prepare(st, &s);

	for (size_t i = 0; r == 0 && i < nr; i++)
		r = map_save_le(st, &s, p->id, les[i], extmap_get(&p->map, les[i]));
	map_stmts_finalize(&s);
	return r;
}

/* Why run v cannot be part of p's map, or NULL; prev_end is where the last run ended. */
static const char *run_invalid(const struct state_pool *p, const struct run *v, int64_t prev_end)
{
	/* Each bound before a sum, so that no sum of stored values can overflow. */
	if (v->nr < 1)
		return "it is empty";
	if (v->le < 0)
		return "it starts before the volume's first extent";
	if (v->le < prev_end)
		return "it overlaps the run before it";
	if (v->le > p->map.nr_logical || v->nr > p->map.nr_logical - v->le)
		return "it ends past the volume's last extent";
	if (v->dev < 0 || v->dev >= p->map.nr_devs)
		return "its device is not the pool's";
	if (v->pe < 0 || v->pe > p->map.nr_pe[v->dev] || v->nr > p->map.nr_pe[v->dev] - v->pe)
		return "it ends past its device's last extent";
	return NULL;
}

int state_map_load(struct state *st, struct state_pool *p)
{
	sqlite3_stmt *stmt = NULL;
	int64_t prev_end = 0;
	const char *why = NULL;
	struct run v = { 0 };
	int r, rc;

	r = state_prepare(st, "SELECT le, nr, dev, pe FROM extent_run WHERE pool_id = ?1 ORDER BY le",
			  &stmt);
	if (r < 0)
		return r;
	sqlite3_bind_int64(stmt, 1, p->id);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		v.le = sqlite3_column_int64(stmt, 0);
		v.nr = sqlite3_column_int64(stmt, 1);
		v.dev = sqlite3_column_int64(stmt, 2);
		v.pe = sqlite3_column_int64(stmt, 3);
		why = run_invalid(p, &v, prev_end);
		if (why)
			goto bad;
		r = extmap_map_run(&p->map, (uint32_t)v.le, (unsigned)v.dev, (uint32_t)v.pe,
				   (uint32_t)v.nr);
		if (r == -ENOMEM)
			goto out;
		if (r < 0) {
			/* In range and after the run before: only a pe used twice is left. */
			why = "one of its physical extents is mapped twice";
			goto bad;
		}
		prev_end = v.le + v.nr;
	}
	if (rc != SQLITE_DONE)
		r = state_fail(st, rc);
	goto out;
bad:
	snprintf(st->error, sizeof(st->error),
		 "pool %s: extent map run le=%lld nr=%lld dev=%lld pe=%lld invalid: %s",
		 p->meta.name, (long long)v.le, (long long)v.nr, (long long)v.dev, (long long)v.pe, why);
	r = -EUCLEAN;
out:
	sqlite3_finalize(stmt);
	return r;
}
