/* SPDX-License-Identifier: GPL-2.0-or-later */
/* registry: the daemon's pools, loaded from the state, found by name or uuid. */
#include "pool-internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

struct pool *pool_new(void)
{
	struct pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	for (unsigned i = 0; i < METADATA_MAX_DEVS; i++)
		p->fd[i] = -1;
	return p;
}

void pool_known_drop(struct pool *p)
{
	struct pool_known *k = &p->known;

	slotsum_destroy(&k->sum);
	for (unsigned i = 0; i < METADATA_MAX_DEVS; i++)
		for (unsigned s = 0; s < 2; s++)
			slotsum_set_free(&k->differs[i][s]);
	*k = (struct pool_known){ 0 };
}

/* Closed devices may change under us: what their slots hold is known no more. */
void pool_close_devices(struct pool *p)
{
	for (unsigned i = 0; i < METADATA_MAX_DEVS; i++) {
		if (p->fd[i] >= 0)
			close(p->fd[i]);
		p->fd[i] = -1;
	}
	pool_known_drop(p);
}

void pool_free(struct pool *p)
{
	if (!p)
		return;
	pool_drop_leftover(p);
	pool_close_devices(p);
	state_pool_destroy(&p->sp);
	pool_heat_stop(p);
	heat_table_destroy(&p->heat);
	free(p->sample);
	free(p);
}

void pools_link(struct pools *ps, struct pool *p)
{
	p->ps = ps;
	p->next = ps->list;
	ps->list = p;
}

void pools_unlink(struct pools *ps, struct pool *p)
{
	for (struct pool **i = &ps->list; *i; i = &(*i)->next) {
		if (*i == p) {
			*i = p->next;
			return;
		}
	}
}

void pools_set_forget_hook(struct pools *ps, pools_forget_fn fn, void *ctx)
{
	ps->forget = fn;
	ps->forget_ctx = ctx;
}

struct pool *pools_find(struct pools *ps, const char *name)
{
	for (struct pool *p = ps->list; p; p = p->next)
		if (strcmp(p->sp.meta.name, name) == 0)
			return p;
	return NULL;
}

const char *pool_name(const struct pool *p)
{
	return p->sp.meta.name;
}

int pool_fail(const struct pool *p, int r, char *err, size_t err_len, const char *fmt, ...)
{
	char sentence[POOL_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sentence, sizeof(sentence), fmt, ap);
	va_end(ap);
	errbuf_set(err, err_len, "pool %s: %s", p->sp.meta.name, sentence);
	return r;
}

const char *pool_error_sentence(const struct pool *p, const char *err)
{
	size_t n = strlen(p->sp.meta.name);

	if (!strncmp(err, "pool ", 5) && !strncmp(err + 5, p->sp.meta.name, n) &&
	    !strncmp(err + 5 + n, ": ", 2))
		return err + 5 + n + 2;
	return err;
}

struct pool *pools_find_uuid(struct pools *ps, const uint8_t uuid[16])
{
	for (struct pool *p = ps->list; p; p = p->next)
		if (memcmp(p->sp.meta.uuid, uuid, 16) == 0)
			return p;
	return NULL;
}

int pools_open(struct pools **out, struct state *st, const struct heat_params *heat, char *err,
	       size_t err_len)
{
	struct state_pool **loaded = NULL;
	struct pools *ps;
	size_t nr = 0;
	int r;

	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	ps->state = st;
	ps->heat = *heat;
	ps->piece_bytes = POOL_PIECE_BYTES;
	r = state_pool_load_all(st, &loaded, &nr);
	if (r < 0) {
		free(ps);
		return errbuf_fail(r, err, err_len, "cannot load pools: %s", state_last_error(st));
	}
	for (size_t i = 0; i < nr; i++) {
		struct pool *p = pool_new();

		if (!p) {
			state_pool_destroy(loaded[i]);
		} else {
			p->sp = *loaded[i];
			pools_link(ps, p);
			/* Heat survives restarts; what cannot be read starts cold. */
			if (heat_table_init(&p->heat, p->sp.map.nr_logical) == 0 &&
			    state_heat_load(st, p->sp.id, &p->heat, &ps->heat) < 0)
				log_pool_warn(p->sp.meta.name, "stored heat unreadable, starting"
					      " cold: %s", state_last_error(st));
		}
		free(loaded[i]);
	}
	free(loaded);
	*out = ps;
	return 0;
}

void pools_close(struct pools *ps)
{
	if (!ps)
		return;
	while (ps->list) {
		struct pool *p = ps->list;

		ps->list = p->next;
		pool_free(p);
	}
	free(ps);
}

void pool_dm_uuid(const struct pool *p, char out[64])
{
	char uuid[37];

	metadata_uuid_format(p->sp.meta.uuid, uuid);
	snprintf(out, 64, "TIERD-%s", uuid);
}

void pools_set_heat_params(struct pools *ps, const struct heat_params *params)
{
	ps->heat = *params;
}

void pools_set_heat_budget(struct pools *ps, uint64_t bytes)
{
	ps->heat_budget = bytes;
}

void pools_set_verify(struct pools *ps, bool verify)
{
	ps->verify = verify;
}

void pools_set_piece_copy(struct pools *ps, enum pool_piece_copy how)
{
	ps->piece_copy = how;
}

void pools_set_piece_heat(struct pools *ps, bool on)
{
	ps->piece_heat = on;
}

void pools_set_piece_size(struct pools *ps, uint64_t bytes)
{
	ps->piece_bytes = bytes;
}

void pools_set_table_targets(struct pools *ps, uint32_t max)
{
	ps->table_targets = max;
}

uint32_t pool_table_targets_max(const struct pool *p)
{
	return p->ps->table_targets;
}

int pools_for_each(struct pools *ps, int (*fn)(struct pool *p, void *ctx), void *ctx)
{
	int r = 0;

	for (struct pool *p = ps->list; p; p = p->next)
		if (fn(p, ctx) < 0)
			r = -EIO;
	return r;
}

/* ---- for tiering runs (tiering.c) ---- */

int pool_ssd_dev(const struct pool *p)
{
	for (unsigned i = 0; i < p->sp.meta.nr_devs; i++)
		if (p->sp.meta.devs[i].tier == METADATA_TIER_SSD)
			return (int)i;
	return -1;
}

int64_t pool_state_id(const struct pool *p)
{
	return p->sp.id;
}

uint64_t pool_extent_size(const struct pool *p)
{
	return p->sp.meta.extent_size;
}

uint32_t pool_nr_extents(const struct pool *p)
{
	return p->sp.map.nr_logical;
}

bool pool_is_active(const struct pool *p)
{
	return p->active;
}

