/* SPDX-License-Identifier: GPL-2.0-or-later */
/* jobview: the protocol's job object (docs/protocol.md). */
#include "jobview.h"

#include <math.h>
#include <time.h>

#include "isotime.h"
#include "metadata.h"
#include "tiering.h"

static void add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static const char *tier_of(int tier)
{
	return tier < 0 ? "?" : metadata_tier_name((enum metadata_tier)tier);
}

static json_object *limits_json(const struct job_limits *l)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "rate_bytes_per_second",
			       l->rate ? json_object_new_uint64(l->rate) : NULL);
	json_object_object_add(o, "io_awareness", json_object_new_string(tiering_io_name(l->io)));
	json_object_object_add(o, "window_ends_at", isotime_json(l->deadline));
	return o;
}

static json_object *batch_json(const struct job_report *j)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < j->nr_batch; i++) {
		const struct job_report_move *m = &j->batch[i];
		json_object *o = json_object_new_object();

		add_u64(o, "extent", m->le);
		json_object_object_add(o, "piece",
				       m->piece >= 0 ? json_object_new_uint64((uint64_t)m->piece) : NULL);
		json_object_object_add(o, "from", json_object_new_string(tier_of(m->from)));
		json_object_object_add(o, "to", json_object_new_string(tier_of((int)m->to)));
		json_object_array_add(a, o);
	}
	return a;
}

json_object *jobview_json(const struct pool *p, const struct job_report *j,
			  const struct job_end *end)
{
	json_object *o = json_object_new_object();
	int64_t now = time(NULL);

	json_object_object_add(o, "pool", json_object_new_string(pool_name(p)));
	json_object_object_add(o, "kind", json_object_new_string(job_kind_name(j->kind)));
	json_object_object_add(o, "what", json_object_new_string(j->what));
	json_object_object_add(o, "started_at", isotime_json(j->started_at));
	add_u64(o, "elapsed_seconds", now > j->started_at ? (uint64_t)(now - j->started_at) : 0);
	json_object_object_add(o, "units", json_object_new_string(j->pieces ? "pieces" : "extents"));
	add_u64(o, "done_extents", j->done);
	add_u64(o, "total_extents", j->total);
	add_u64(o, "moved_extents", j->moved);
	add_u64(o, "failed_extents", j->failed);
	add_u64(o, "done_bytes", j->done_bytes);
	add_u64(o, "total_bytes", j->total_bytes);
	/* Whole bytes: a fraction of a byte per second tells nobody anything. */
	add_u64(o, "rate_bytes_per_second", (uint64_t)llround(j->rate));
	json_object_object_add(o, "eta_seconds",
			       j->eta >= 0 && !end ? json_object_new_int64(j->eta) : NULL);
	json_object_object_add(o, "paused", json_object_new_boolean(j->paused));
	json_object_object_add(o, "aborting", json_object_new_boolean(j->aborting && !end));
	json_object_object_add(o, "waiting",
			       j->waiting[0] && !end ? json_object_new_string(j->waiting) : NULL);
	json_object_object_add(o, "limits", limits_json(&j->limits));
	/* The extent being copied now: the batch's first. */
	json_object_object_add(o, "extent", j->nr_batch ? json_object_new_uint64(j->batch[0].le) :
							 NULL);
	json_object_object_add(o, "from", j->nr_batch ?
				  json_object_new_string(tier_of(j->batch[0].from)) : NULL);
	json_object_object_add(o, "to", j->nr_batch ?
				  json_object_new_string(tier_of((int)j->batch[0].to)) : NULL);
	json_object_object_add(o, "batch", batch_json(j));
	add_u64(o, "batch_copied_regions", j->batch_regions_copied);
	add_u64(o, "batch_regions", j->batch_regions);
	json_object_object_add(o, "result", json_object_new_string(end ? job_result_name(end->result) :
									"running"));
	json_object_object_add(o, "message", end && end->message[0] ?
				  json_object_new_string(end->message) : NULL);
	return o;
}
