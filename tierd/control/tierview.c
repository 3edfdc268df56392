/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tierview: the protocol's JSON of the tiering reports (docs/protocol.md). */
#include "tierview.h"

#include "isotime.h"
#include "metadata.h"
#include "poolview.h"
#include "rpc.h"

static void add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static void add_string(json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, json_object_new_string(s));
}

/* JSON null for "": the protocol's "there is none". */
static void add_string_or_null(json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, s[0] ? json_object_new_string(s) : NULL);
}

/* The share of all, null without any. */
static json_object *fraction_json(uint64_t part, uint64_t all)
{
	return all ? rpc_json_number((double)part / (double)all) : NULL;
}

static const char *tier_name(bool ssd)
{
	return ssd ? "ssd" : "hdd";
}

static json_object *policy_json(const struct tiering_policy_report *r)
{
	const struct policy *pol = &r->policy;
	json_object *o = json_object_new_object();

	add_string(o, "name", pol->name);
	add_string(o, "description", pol->description);
	add_string_or_null(o, "path", r->path);
	add_string(o, "promote", policy_promote_name(pol->promote));
	add_string(o, "demote", policy_demote_name(pol->demote));
	json_object_object_add(o, "ssd_headroom_share", rpc_json_number(pol->ssd_headroom));
	json_object_object_add(o, "hysteresis", rpc_json_number(pol->hysteresis));
	add_u64(o, "min_residency_seconds", pol->min_residency_s);
	json_object_object_add(o, "min_heat", rpc_json_number(pol->min_heat));
	return o;
}

json_object *tierview_policies_json(const struct tiering_policies_report *r)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < r->nr; i++)
		json_object_array_add(a, policy_json(&r->v[i]));
	return a;
}

json_object *tierview_schedule_json(const struct tiering_schedule_report *r)
{
	json_object *o = json_object_new_object();

	add_string(o, "spec", r->spec);
	add_string_or_null(o, "window", r->window);
	add_u64(o, "max_bytes", r->max_bytes);
	add_u64(o, "rate_bytes_per_second", r->rate);
	add_string(o, "io_awareness", tiering_io_name(r->io_awareness));
	add_string(o, "policy", r->policy);
	json_object_object_add(o, "paused", json_object_new_boolean(r->paused));
	json_object_object_add(o, "running", json_object_new_boolean(r->running));
	json_object_object_add(o, "next_run_at", isotime_json(r->next_run));
	return o;
}

json_object *tierview_pins_json(const struct tiering_pins_report *r)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < r->nr; i++) {
		const struct state_pin *pin = &r->pins[i];
		json_object *o = json_object_new_object();

		add_u64(o, "first_extent", pin->first);
		add_u64(o, "extents", pin->nr);
		add_u64(o, "offset_bytes", pin->first * r->extent_size);
		add_u64(o, "size_bytes", pin->nr * r->extent_size);
		add_string(o, "tier", tier_name(pin->ssd));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *table_json(const struct tiering_plan_report *r)
{
	json_object *o = json_object_new_object();

	add_u64(o, "targets", r->table.targets);
	json_object_object_add(o, "max_targets", r->table.max_targets ?
				json_object_new_int64(r->table.max_targets) : NULL);
	add_u64(o, "passed_over_extents", r->table_passed_over);
	return o;
}

json_object *tierview_plan_json(const struct tiering_plan_report *r)
{
	json_object *o = json_object_new_object(), *moves = json_object_new_array();

	add_string(o, "policy", r->policy);
	add_u64(o, "planned_extents", r->moves_total);
	add_u64(o, "promoted_extents", r->promote_extents);
	add_u64(o, "demoted_extents", r->demote_extents);
	add_u64(o, "promoted_bytes", r->promote_bytes);
	add_u64(o, "demoted_bytes", r->demote_bytes);
	json_object_object_add(o, "ssd_io_share_before", rpc_json_number(r->ssd_share_before));
	json_object_object_add(o, "ssd_io_share_after", rpc_json_number(r->ssd_share_after));
	json_object_object_add(o, "table", table_json(r));
	add_u64(o, "pieces_home", r->pieces_home);
	add_u64(o, "pieces_out", r->pieces_out);
	json_object_object_add(o, "piece_bytes", r->piece_bytes ?
				json_object_new_int64((int64_t)r->piece_bytes) : NULL);
	for (size_t i = 0; i < r->nr_moves; i++) {
		const struct tiering_plan_move *mv = &r->moves[i];
		json_object *m = json_object_new_object();

		add_u64(m, "extent", mv->extent);
		if (mv->piece >= 0)
			add_u64(m, "piece", (uint64_t)mv->piece);
		add_u64(m, "offset_bytes", mv->offset);
		json_object_object_add(m, "heat", rpc_json_number(mv->heat));
		add_string(m, "to", tier_name(mv->to_ssd));
		json_object_array_add(moves, m);
	}
	json_object_object_add(o, "moves", moves);
	return o;
}

json_object *tierview_run_json(const struct state_run *run)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_int64(run->id));
	add_string(o, "trigger", run->trigger);
	add_string(o, "policy", run->policy);
	json_object_object_add(o, "started_at", isotime_json(run->started));
	json_object_object_add(o, "ended_at", isotime_json(run->finished));
	/* Null while the run goes on: the time so far is not its duration. */
	json_object_object_add(o, "duration_seconds", run->started > 0 && run->finished > 0 ?
			       json_object_new_int64(run->finished > run->started ?
						     run->finished - run->started : 0) : NULL);
	add_u64(o, "planned_extents", run->planned_extents);
	add_u64(o, "promoted_extents", run->moved.promoted_extents);
	add_u64(o, "demoted_extents", run->moved.demoted_extents);
	add_u64(o, "promoted_bytes", run->moved.promoted_bytes);
	add_u64(o, "demoted_bytes", run->moved.demoted_bytes);
	add_u64(o, "moved_bytes", run->moved.promoted_bytes + run->moved.demoted_bytes);
	add_u64(o, "failed_extents", run->moved.failed);
	add_u64(o, "planned_pieces", run->planned_pieces);
	add_u64(o, "promoted_pieces", run->moved.promoted_pieces);
	add_u64(o, "demoted_pieces", run->moved.demoted_pieces);
	add_u64(o, "moved_pieces", run->moved.promoted_pieces + run->moved.demoted_pieces);
	add_string(o, "result", run->result);
	add_string_or_null(o, "message", run->message);
	return o;
}

json_object *tierview_runs_json(const struct tiering_runs_report *r)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < r->nr; i++)
		json_object_array_add(a, tierview_run_json(&r->runs[i]));
	return a;
}

static uint64_t ios(const struct state_tier_io *io)
{
	return io->reads + io->writes;
}

/* The share of the I/Os that the SSD tier served (extents and pieces), null without any. */
static json_object *ssd_fraction_json(const struct state_tier_io io[2])
{
	return fraction_json(ios(&io[METADATA_TIER_SSD]), ios(&io[0]) + ios(&io[1]));
}

static json_object *interval_json(const struct state_interval *h, uint32_t seconds)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "started_at", isotime_json(h->start));
	add_u64(o, "duration_seconds", seconds);
	add_u64(o, "reads", h->io[0].reads + h->io[1].reads);
	add_u64(o, "writes", h->io[0].writes + h->io[1].writes);
	json_object_object_add(o, "ssd_io_share", ssd_fraction_json(h->io));
	add_u64(o, "promoted_bytes", h->moved.promoted_bytes);
	add_u64(o, "demoted_bytes", h->moved.demoted_bytes);
	return o;
}

json_object *tierview_stats_json(const struct pool *p, const struct tiering_stats_report *r)
{
	json_object *o = json_object_new_object(), *io, *mig, *sched;

	add_string(o, "name", pool_name(p));
	add_u64(o, "extent_size_bytes", r->extent_size);
	add_string(o, "state", r->schedule.paused ? "paused" : r->migrating ? "migrating" : "idle");
	json_object_object_add(o, "tiers", poolview_tiers_json(p));
	io = json_object_new_object();
	add_u64(io, "window_seconds", r->window_seconds);
	add_u64(io, "reads", r->io[0].reads + r->io[1].reads);
	add_u64(io, "writes", r->io[0].writes + r->io[1].writes);
	json_object_object_add(io, "ssd_io_share", ssd_fraction_json(r->io));
	json_object_object_add(o, "io", io);
	mig = json_object_new_object();
	add_u64(mig, "promoted_extents", r->moved.promoted_extents);
	add_u64(mig, "demoted_extents", r->moved.demoted_extents);
	add_u64(mig, "promoted_bytes", r->moved.promoted_bytes);
	add_u64(mig, "demoted_bytes", r->moved.demoted_bytes);
	add_u64(mig, "failed_extents", r->moved.failed);
	json_object_object_add(o, "migration", mig);
	json_object_object_add(o, "last_run",
			       r->has_last_run ? tierview_run_json(&r->last_run) : NULL);
	sched = json_object_new_object();
	add_string(sched, "spec", r->schedule.spec);
	json_object_object_add(sched, "next_run_at", isotime_json(r->schedule.next_run));
	json_object_object_add(o, "schedule", sched);
	if (r->nr_history) {
		json_object *a = json_object_new_array();

		for (size_t i = 0; i < r->nr_history; i++)
			json_object_array_add(a, interval_json(&r->history[i], r->step_seconds));
		json_object_object_add(o, "history", a);
	}
	return o;
}
