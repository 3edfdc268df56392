/* state: tierd's SQLite database (pools, devices, extent maps). */
#ifndef TIERD_STATE_H
#define TIERD_STATE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "extmap.h"
#include "heat.h"
#include "metadata.h"

struct state;

/* A pool as the database holds it: the same content as the on-device copy,
 * plus where each device was last seen and whether it should be active. */
struct state_pool {
	int64_t id;
	struct metadata_pool meta;
	struct extmap map;
	char paths[METADATA_MAX_DEVS][PATH_MAX];
	int want_active;
};

/* Creates dir (0700) and tierd.db in it, applies pending migrations; on
 * failure err says why. */
int state_open(struct state **out, const char *dir, char *err, size_t err_len);
void state_close(struct state *st);
/* SQLite's message for the last failure, for the caller's log. */
const char *state_last_error(const struct state *st);

/* Pools, each filled completely; free with state_pool_destroy() + free(). */
int state_pool_load_all(struct state *st, struct state_pool ***pools, size_t *nr);
void state_pool_destroy(struct state_pool *p);

/* New pool: sets p->id. */
int state_pool_insert(struct state *st, struct state_pool *p);
/* Rewrite the pool's row, devices and whole map in one transaction. */
int state_pool_save(struct state *st, const struct state_pool *p);
/* The pool's generation and the locations of the extents les[] (a migration's commit). */
int state_pool_save_extents(struct state *st, const struct state_pool *p, const uint32_t *les,
			    size_t nr);
int state_pool_set_want_active(struct state *st, int64_t id, int want_active);
int state_pool_set_path(struct state *st, int64_t id, unsigned dev, const char *path);
int state_pool_delete(struct state *st, int64_t id);

/* ---- heat and I/O history (docs/heat.md) ---- */

/* Extents per stored heat row; a flush step stores whole rows. */
#define STATE_HEAT_CHUNK 16384u

/* Load the stored heat into t (sized to the pool's extents; rows past it ignored). */
int state_heat_load(struct state *st, int64_t id, struct heat_table *t);
/* Store extents [from, to) of t, from a multiple of STATE_HEAT_CHUNK, and t's
 * sample time, in one transaction. */
int state_heat_save(struct state *st, int64_t id, const struct heat_table *t, uint32_t from,
		    uint32_t to);

struct state_tier_io {
	uint64_t reads, writes, read_bytes, write_bytes;
};

/* Add to a tier's row of one minute. */
int state_tier_io_add(struct state *st, int64_t id, int64_t minute, const char *tier,
		      const struct state_tier_io *io);
/* Everything a tier served, minute and hourly rows together. */
int state_tier_io_total(struct state *st, int64_t id, const char *tier, struct state_tier_io *out);
/* Fold minute rows before `before` into hourly rows. */
int state_tier_io_compact(struct state *st, int64_t before_minute);

#endif
