#include "config.h"

#include "collector.h"

#include <errno.h>
#include <string.h>

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
};

/* Every trigger and result a finished run can have (docs/protocol.md, runs.list). */
static const char *const collector_triggers[] = { "on-demand", "schedule", "auto" };
static const char *const collector_results[] = { "done", "partial", "failed", "cancelled",
						 "interrupted" };

#define NR_TRIGGERS (sizeof(collector_triggers) / sizeof(collector_triggers[0]))
#define NR_RESULTS (sizeof(collector_results) / sizeof(collector_results[0]))

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
	uint64_t n[NR_TRIGGERS][NR_RESULTS];
};

static int find_word(const char *const *list, size_t nr, const char *word)
{
	for (size_t i = 0; word && i < nr; i++) {
		if (!strcmp(list[i], word))
			return (int)i;
	}
	return -1;
}

static int count_runs(const char *trigger, const char *result, uint64_t n, void *ctx)
{
	struct collector_runs *runs = ctx;
	int t = find_word(collector_triggers, NR_TRIGGERS, trigger);
	int r = find_word(collector_results, NR_RESULTS, result);

	/* The schema allows no other value; a newer one would only go uncounted. */
	if (t >= 0 && r >= 0)
		runs->n[t][r] += n;
	return 0;
}

static uint64_t member_u64(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_uint64(v) : 0;
}

static const char *member_str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static int collect_tier(struct collector_pass *pass, struct pool *p, json_object *tier,
			const struct state_tier_io pending[2])
{
	const char *class = member_str(tier, "class");
	struct metrics_label l[2] = { { "pool", pool_name(p) }, { "tier", class } };
	struct state_tier_io io;
	int r, t;

	if (!class)
		return 0;
	t = strcmp(class, "ssd") ? METADATA_TIER_HDD : METADATA_TIER_SSD;
	metrics_add(pass->m, C_TIER_SIZE, l, 2, member_u64(tier, "size_bytes"));
	metrics_add(pass->m, C_TIER_EXTENTS, l, 2, member_u64(tier, "total_extents"));
	metrics_add(pass->m, C_TIER_USED, l, 2, member_u64(tier, "used_extents"));
	/* Stored minutes plus what the samples since the last flush counted: a
	 * flush moves I/O from one to the other, so the sum only ever grows. */
	r = state_tier_io_total(pass->c->state, pool_state_id(p), class, &io);
	if (r < 0)
		return r;
	metrics_add(pass->m, C_IO_READS, l, 2, io.reads + pending[t].reads);
	metrics_add(pass->m, C_IO_WRITES, l, 2, io.writes + pending[t].writes);
	metrics_add(pass->m, C_IO_READ_BYTES, l, 2, io.read_bytes + pending[t].read_bytes);
	metrics_add(pass->m, C_IO_WRITTEN_BYTES, l, 2, io.write_bytes + pending[t].write_bytes);
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
	/* Every pair, zeros too: a rate needs the series before its first run. */
	l[1].name = "trigger";
	l[2].name = "result";
	for (size_t t = 0; t < NR_TRIGGERS; t++) {
		for (size_t r = 0; r < NR_RESULTS; r++) {
			l[1].value = collector_triggers[t];
			l[2].value = collector_results[r];
			metrics_add(pass->m, C_RUNS, l, 3, runs->n[t][r]);
		}
	}
}

static int collect_pool(struct pool *p, void *ctx)
{
	struct collector_pass *pass = ctx;
	struct state *st = pass->c->state;
	struct metrics_label l[1] = { { "pool", pool_name(p) } };
	json_object *o = pool_to_json(p), *sched = tiering_schedule_json(pass->c->tierings, p);
	json_object *tiers, *heat, *paused = NULL;
	struct state_tier_io pending[2];
	struct collector_runs runs = { 0 };
	struct state_moves moved;
	int r;

	if (!o) {
		r = -ENOMEM;
		log_warn("metrics of pool %s: out of memory", pool_name(p));
		goto out;
	}
	r = state_moves_total(st, pool_state_id(p), &moved);
	if (r == 0)
		r = state_runs_count(st, pool_state_id(p), count_runs, &runs);
	if (r < 0) {
		log_warn("metrics of pool %s: cannot read its moves and runs: %s", pool_name(p),
			 state_last_error(st));
		goto out;
	}
	metrics_add(pass->m, C_POOL_ACTIVE, l, 1, pool_is_active(p));
	metrics_add(pass->m, C_POOL_MIGRATING, l, 1, *pool_busy(p) != '\0');
	if (sched)
		json_object_object_get_ex(sched, "paused", &paused);
	metrics_add(pass->m, C_POOL_PAUSED, l, 1, json_object_get_boolean(paused));
	metrics_add(pass->m, C_POOL_SIZE, l, 1, member_u64(o, "size_bytes"));
	metrics_add(pass->m, C_HEAT_KERNEL, l, 1,
		    json_object_object_get_ex(o, "heat", &heat) ? member_u64(heat, "kernel_bytes") : 0);
	pool_io_pending(p, pending);
	if (json_object_object_get_ex(o, "tiers", &tiers)) {
		for (size_t i = 0; r == 0 && i < json_object_array_length(tiers); i++)
			r = collect_tier(pass, p, json_object_array_get_idx(tiers, i), pending);
		if (r < 0) {
			log_warn("metrics of pool %s: cannot read its I/O totals: %s", pool_name(p),
				 state_last_error(st));
			goto out;
		}
	}
	collect_moves(pass, p, &moved, &runs);
out:
	json_object_put(sched);
	json_object_put(o);
	return r;
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
