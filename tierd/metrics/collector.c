/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "collector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "job.h"
#include "log.h"
#include "metadata.h"

enum {
	C_BUILD_INFO,
	C_POOL_ACTIVE,
	C_POOL_MIGRATING,
	C_POOL_PAUSED,
	C_POOL_SIZE,
	C_TIER_SIZE,
	C_TIER_EXTENTS,
	C_TIER_USED,
	C_IO_READS,
	C_IO_WRITES,
	C_IO_READ_BYTES,
	C_IO_WRITTEN_BYTES,
	C_MIGRATED_EXTENTS,
	C_MIGRATED_BYTES,
	C_MIGRATION_FAILURES,
	C_RUNS,
	C_HEAT_KERNEL,
	C_POOL_INFO,
	C_HEAT_ENABLED,
	C_TABLE_TARGETS,
	C_TABLE_TARGETS_MAX,
	C_PIECES,
	C_PIECE_CONTAINERS,
	C_LAST_RUN_START,
	C_LAST_RUN_END,
	C_LAST_RUN_DURATION,
	C_LAST_RUN_RESULT,
	C_NEXT_RUN,
	C_JOB_DONE,
	C_JOB_TOTAL,
	C_NR
};

static const struct metrics_def collector_defs[C_NR] = {
	[C_BUILD_INFO] = { "tierd_build_info", METRICS_GAUGE,
			   "The daemon's version, as a label; the value is always 1." },
	[C_POOL_ACTIVE] = { "tierd_pool_active", METRICS_GAUGE,
			    "1 while the pool's volume /dev/mapper/POOL exists, else 0." },
	[C_POOL_MIGRATING] = { "tierd_pool_migrating", METRICS_GAUGE,
			       "1 while a tiering run, an extent move or an SSD detach is under"
			       " way on the pool, else 0." },
	[C_POOL_PAUSED] = { "tierd_pool_tiering_paused", METRICS_GAUGE,
			    "1 while tiering is paused on the pool, else 0." },
	[C_POOL_SIZE] = { "tierd_pool_size_bytes", METRICS_GAUGE, "Size of the pool's volume." },
	[C_TIER_SIZE] = { "tierd_tier_size_bytes", METRICS_GAUGE,
			  "Capacity of the tier's devices in whole extents, the extents kept"
			  " free for migration included." },
	[C_TIER_EXTENTS] = { "tierd_tier_extents", METRICS_GAUGE,
			     "Extents on the tier's devices, the extents kept free for"
			     " migration included." },
	[C_TIER_USED] = { "tierd_tier_used_extents", METRICS_GAUGE,
			  "Extents of the tier that hold data of the volume." },
	[C_IO_READS] = { "tierd_pool_io_reads_total", METRICS_COUNTER,
			 "Reads of the volume that the tier served, as dm-stats counted them." },
	[C_IO_WRITES] = { "tierd_pool_io_writes_total", METRICS_COUNTER,
			  "Writes to the volume that the tier served, as dm-stats counted them." },
	[C_IO_READ_BYTES] = { "tierd_pool_io_read_bytes_total", METRICS_COUNTER,
			      "Bytes read from the volume that the tier served." },
	[C_IO_WRITTEN_BYTES] = { "tierd_pool_io_written_bytes_total", METRICS_COUNTER,
				 "Bytes written to the volume that the tier served." },
	[C_MIGRATED_EXTENTS] = { "tierd_migrated_extents_total", METRICS_COUNTER,
				 "Extents moved between tiers: promote to the SSD tier, demote to"
				 " the HDD tier." },
	[C_MIGRATED_BYTES] = { "tierd_migrated_bytes_total", METRICS_COUNTER,
			       "Bytes moved between tiers: promote to the SSD tier, demote to the"
			       " HDD tier." },
	[C_MIGRATION_FAILURES] = { "tierd_migration_failures_total", METRICS_COUNTER,
				   "Extent moves that failed; the extent stayed where it was." },
	[C_RUNS] = { "tierd_runs_total", METRICS_COUNTER, "Finished tiering runs." },
	[C_HEAT_KERNEL] = { "tierd_heat_kernel_bytes", METRICS_GAUGE,
			    "Kernel memory the pool's dm-stats region holds (0 while heat is"
			    " off)." },
	[C_POOL_INFO] = { "tierd_pool_info", METRICS_GAUGE,
			  "The pool's UUID, its volume's device-mapper name and its kernel device"
			  " (dm-MINOR, as node_exporter's device label; empty while inactive), as"
			  " labels; the value is always 1." },
	[C_HEAT_ENABLED] = { "tierd_heat_enabled", METRICS_GAUGE,
			     "1 while tierd tracks the pool's heat through dm-stats, else 0." },
	[C_TABLE_TARGETS] = { "tierd_table_targets", METRICS_GAUGE,
			      "Linear targets in the table of the pool's volume." },
	[C_PIECES] = { "tierd_pieces", METRICS_GAUGE,
		       "Pieces of split extents out of their extents, in piece containers." },
	[C_PIECE_CONTAINERS] = { "tierd_piece_containers", METRICS_GAUGE,
				 "Extents of the pool's devices given over to pieces of split extents." },
	[C_TABLE_TARGETS_MAX] = { "tierd_table_targets_max", METRICS_GAUGE,
				  "The most targets a move may leave the volume's table (the"
				  " table-targets setting); no sample when there is no limit." },
	[C_LAST_RUN_START] = { "tierd_last_run_start_timestamp_seconds", METRICS_GAUGE,
			       "Unix time the pool's last finished tiering run started." },
	[C_LAST_RUN_END] = { "tierd_last_run_end_timestamp_seconds", METRICS_GAUGE,
			     "Unix time the pool's last finished tiering run ended." },
	[C_LAST_RUN_DURATION] = { "tierd_last_run_duration_seconds", METRICS_GAUGE,
				  "How long the pool's last finished tiering run took." },
	[C_LAST_RUN_RESULT] = { "tierd_last_run_result", METRICS_GAUGE,
				"1 for the result of the pool's last finished tiering run, 0 for"
				" the others." },
	[C_NEXT_RUN] = { "tierd_next_run_timestamp_seconds", METRICS_GAUGE,
			 "Unix time the pool's schedule starts its next run; no sample when"
			 " none is due." },
	[C_JOB_DONE] = { "tierd_job_done_bytes", METRICS_GAUGE,
			 "Bytes the pool's running job (a run, an extent move, a detach) has"
			 " done, the batch in flight by how far its copy got; no sample while it"
			 " runs none." },
	[C_JOB_TOTAL] = { "tierd_job_total_bytes", METRICS_GAUGE,
			  "Bytes the pool's running job moves in all; no sample while it runs"
			  " none." },
};

const struct metrics_def *collector_families(size_t *nr)
{
	*nr = C_NR;
	return collector_defs;
}

struct collector_pass {
	struct collector *c;
	struct metrics *m;
};

struct collector_runs {
	uint64_t n[TIERING_TRIGGER_NR][TIERING_RESULT_NR];
};

static int count_runs(const char *trigger, const char *result, uint64_t n, void *ctx)
{
	struct collector_runs *runs = ctx;
	enum tiering_trigger t;
	enum tiering_result r;

	/* The schema allows no other value; a newer one would only go uncounted. */
	if (tiering_trigger_parse(trigger, &t) == 0 && tiering_result_parse(result, &r) == 0)
		runs->n[t][r] += n;
	return 0;
}

static int collect_tier(struct collector_pass *pass, struct pool *p, enum metadata_tier tier,
			const struct pool_tier_report *report, const struct state_tier_io pending[2])
{
	const char *class = metadata_tier_name(tier);
	struct metrics_label l[2] = { { "pool", pool_name(p) }, { "tier", class } };
	struct state_tier_io io;
	int r;

	metrics_add(pass->m, C_TIER_SIZE, l, 2, report->size_bytes);
	metrics_add(pass->m, C_TIER_EXTENTS, l, 2, report->total_extents);
	metrics_add(pass->m, C_TIER_USED, l, 2, report->used_extents);
	/* Stored minutes plus what the samples since the last flush counted: a
	 * flush moves I/O from one to the other, so the sum only ever grows. */
	r = state_tier_io_total(pass->c->state, pool_state_id(p), class, &io);
	if (r < 0)
		return r;
	metrics_add(pass->m, C_IO_READS, l, 2, io.reads + pending[tier].reads);
	metrics_add(pass->m, C_IO_WRITES, l, 2, io.writes + pending[tier].writes);
	metrics_add(pass->m, C_IO_READ_BYTES, l, 2, io.read_bytes + pending[tier].read_bytes);
	metrics_add(pass->m, C_IO_WRITTEN_BYTES, l, 2, io.write_bytes + pending[tier].write_bytes);
	return 0;
}

static void collect_moves(struct collector_pass *pass, struct pool *p,
			  const struct state_moves *moved, const struct collector_runs *runs)
{
	struct metrics_label l[3] = { { "pool", pool_name(p) } };

	l[1].name = "direction";
	l[1].value = "promote";
	metrics_add(pass->m, C_MIGRATED_EXTENTS, l, 2, moved->promoted_extents);
	metrics_add(pass->m, C_MIGRATED_BYTES, l, 2, moved->promoted_bytes);
	l[1].value = "demote";
	metrics_add(pass->m, C_MIGRATED_EXTENTS, l, 2, moved->demoted_extents);
	metrics_add(pass->m, C_MIGRATED_BYTES, l, 2, moved->demoted_bytes);
	metrics_add(pass->m, C_MIGRATION_FAILURES, l, 1, moved->failed);
	/*
	 * Every pair a finished run can have (not running), zeros too: a rate
	 * needs the series before its first run.
	 */
	l[1].name = "trigger";
	l[2].name = "result";
	for (int t = 0; t < TIERING_TRIGGER_NR; t++) {
		for (int r = TIERING_DONE; r < TIERING_RESULT_NR; r++) {
			l[1].value = tiering_trigger_name((enum tiering_trigger)t);
			l[2].value = tiering_result_name((enum tiering_result)r);
			metrics_add(pass->m, C_RUNS, l, 3, runs->n[t][r]);
		}
	}
}

static void collect_info(struct collector_pass *pass, const struct pool_report *report)
{
	char uuid[37], device[24] = "";
	struct metrics_label l[4] = {
		{ "pool", report->name }, { "uuid", uuid }, { "dm_name", report->name },
		{ "device", device },
	};

	metadata_uuid_format(report->uuid, uuid);
	/* Major 0 is no device-mapper device: the volume's numbers are not known. */
	if (report->active && report->dm_major)
		snprintf(device, sizeof(device), "dm-%u", report->dm_minor);
	metrics_add(pass->m, C_POOL_INFO, l, 4, 1);
}

/* The newest finished run (the newest may still be running) and the next one due. */
static int collect_schedule(struct collector_pass *pass, struct pool *p,
			    const struct tiering_schedule_report *sched, bool has_sched)
{
	struct metrics_label l[2] = { { "pool", pool_name(p) }, { "result", NULL } };
	struct state_run *runs = NULL, *last = NULL;
	size_t nr = 0;
	int r;

	if (has_sched && sched->next_run > 0)
		metrics_add(pass->m, C_NEXT_RUN, l, 1, (uint64_t)sched->next_run);
	r = state_runs_list(pass->c->state, pool_state_id(p), 2, &runs, &nr);
	if (r < 0)
		return r;
	for (size_t i = 0; i < nr && !last; i++) {
		if (runs[i].finished > 0 && strcmp(runs[i].result, "running"))
			last = &runs[i];
	}
	if (last) {
		metrics_add(pass->m, C_LAST_RUN_START, l, 1, (uint64_t)last->started);
		metrics_add(pass->m, C_LAST_RUN_END, l, 1, (uint64_t)last->finished);
		/* A clock stepped back during the run would make it negative. */
		metrics_add(pass->m, C_LAST_RUN_DURATION, l, 1,
			    last->finished > last->started ?
				    (uint64_t)(last->finished - last->started) : 0);
		for (int res = TIERING_DONE; res < TIERING_RESULT_NR; res++) {
			l[1].value = tiering_result_name((enum tiering_result)res);
			metrics_add(pass->m, C_LAST_RUN_RESULT, l, 2,
				    !strcmp(last->result, l[1].value));
		}
	}
	free(runs);
	return 0;
}

static void collect_job(struct collector_pass *pass, struct pool *p)
{
	struct metrics_label l[1] = { { "pool", pool_name(p) } };
	struct job_report job;

	if (job_get_report(p, &job) < 0)
		return;
	/* The job object's own bytes (control/jobview.c), so that both tell one story. */
	metrics_add(pass->m, C_JOB_DONE, l, 1, job.done_bytes);
	metrics_add(pass->m, C_JOB_TOTAL, l, 1, job.total_bytes);
}

static int collect_pool(struct pool *p, void *ctx)
{
	struct collector_pass *pass = ctx;
	struct state *st = pass->c->state;
	struct metrics_label l[1] = { { "pool", pool_name(p) } };
	/* The SSD's series first, as pool show lists the tiers. */
	static const enum metadata_tier order[] = { METADATA_TIER_SSD, METADATA_TIER_HDD };
	struct tiering_schedule_report sched;
	bool has_sched = tiering_report_schedule(pass->c->tierings, p, &sched) == 0;
	bool paused = has_sched && sched.paused;
	struct state_tier_io pending[2];
	struct collector_runs runs = { 0 };
	struct state_moves moved;
	struct pool_report report;
	int r;

	pool_get_report(p, &report);
	r = state_moves_total(st, pool_state_id(p), &moved);
	if (r == 0)
		r = state_runs_count(st, pool_state_id(p), count_runs, &runs);
	if (r == 0)
		r = collect_schedule(pass, p, &sched, has_sched);
	if (r < 0) {
		log_warn("metrics of pool %s: cannot read its moves and runs: %s", pool_name(p),
			 state_last_error(st));
		return r;
	}
	metrics_add(pass->m, C_POOL_ACTIVE, l, 1, report.active);
	metrics_add(pass->m, C_POOL_MIGRATING, l, 1, report.job_what != NULL);
	metrics_add(pass->m, C_POOL_PAUSED, l, 1, paused);
	metrics_add(pass->m, C_POOL_SIZE, l, 1, (uint64_t)report.extents * report.extent_size);
	metrics_add(pass->m, C_HEAT_KERNEL, l, 1, report.heat.kernel_bytes);
	metrics_add(pass->m, C_HEAT_ENABLED, l, 1, report.heat.enabled);
	metrics_add(pass->m, C_TABLE_TARGETS, l, 1, pool_table_targets(p));
	metrics_add(pass->m, C_PIECES, l, 1, report.pieces.pieces);
	metrics_add(pass->m, C_PIECE_CONTAINERS, l, 1, report.pieces.containers);
	if (report.max_table_targets)
		metrics_add(pass->m, C_TABLE_TARGETS_MAX, l, 1, report.max_table_targets);
	collect_info(pass, &report);
	collect_job(pass, p);
	pool_io_pending(p, pending);
	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		if (!report.tiers[order[i]].present)
			continue;
		r = collect_tier(pass, p, order[i], &report.tiers[order[i]], pending);
		if (r < 0) {
			log_warn("metrics of pool %s: cannot read its I/O totals: %s", pool_name(p),
				 state_last_error(st));
			return r;
		}
	}
	collect_moves(pass, p, &moved, &runs);
	return 0;
}

int collector_render(void *ctx, char **text, size_t *len)
{
	struct collector_pass pass = { .c = ctx };
	struct metrics_label version = { "version", TIERD_VERSION };
	int r;

	r = metrics_new(&pass.m, collector_defs, C_NR);
	if (r < 0) {
		log_warn("metrics: cannot start the exposition: %s", strerror(-r));
		return r;
	}
	metrics_add(pass.m, C_BUILD_INFO, &version, 1, 1);
	r = pools_for_each(pass.c->pools, collect_pool, &pass);
	if (r == 0) {
		r = metrics_render(pass.m, text, len);
		if (r < 0)
			log_warn("metrics: cannot build the exposition: %s", strerror(-r));
	}
	metrics_free(pass.m);
	return r;
}
