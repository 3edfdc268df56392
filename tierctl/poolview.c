/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "member.h"
#include "poolview.h"
#include "size.h"
#include "table.h"
#include "tierview.h"
#include "array.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


/* Text for people shows "-" for what tierd left out, as the tables do. */
static const char *poolview_string(struct json_object *obj, const char *key)
{
	const char *s = member_string(obj, key);

	return s ? s : "-";
}

/* A byte count as "4.0 MiB", or "-". */
static const char *poolview_size(struct json_object *obj, const char *key,
				 char buf[SIZE_FORMAT_MAX])
{
	uint64_t v;

	return member_uint(obj, key, &v) < 0 ? "-" : size_format(v, buf, SIZE_FORMAT_MAX);
}

/* A count, or "-". */
static const char *poolview_count(struct json_object *obj, const char *key,
				  char buf[SIZE_FORMAT_MAX])
{
	uint64_t v;

	if (member_uint(obj, key, &v) < 0)
		return "-";
	snprintf(buf, SIZE_FORMAT_MAX, "%" PRIu64, v);
	return buf;
}

static struct json_object *poolview_tiers(struct json_object *pool)
{
	struct json_object *tiers = member_get(pool, "tiers");

	return json_object_is_type(tiers, json_type_array) ? tiers : NULL;
}

/* The pool's tier of that class ("ssd", "hdd"), or NULL. */
static struct json_object *poolview_tier(struct json_object *pool, const char *class)
{
	struct json_object *tiers = poolview_tiers(pool);
	size_t n = tiers ? json_object_array_length(tiers) : 0;

	for (size_t i = 0; i < n; i++) {
		struct json_object *tier = json_object_array_get_idx(tiers, i);

		if (!strcmp(poolview_string(tier, "class"), class))
			return tier;
	}
	return NULL;
}

int poolview_print_list(FILE *out, struct json_object *pools)
{
	static const struct table_column columns[] = {
		{ "Name", "name", TABLE_STRING },
		{ "State", "state", TABLE_STRING },
		{ "Volume", "size_bytes", TABLE_BYTES },
		{ "SSD usable", "ssd_usable_bytes", TABLE_BYTES },
		{ "HDD usable", "hdd_usable_bytes", TABLE_BYTES },
		{ "Extent size", "extent_size_bytes", TABLE_BYTES },
	};
	size_t n = json_object_array_length(pools);
	struct table *t;
	int r;

	r = table_new(columns, ARRAY_SIZE(columns), &t);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		struct json_object *pool = json_object_array_get_idx(pools, i);

		table_add_members(t, pool, 3);
		table_add_json(t, member_get(poolview_tier(pool, "ssd"), "usable_bytes"));
		table_add_json(t, member_get(poolview_tier(pool, "hdd"), "usable_bytes"));
		table_add_members(t, pool, 1);
	}
	r = table_print(t, out);
	table_free(t);
	return r;
}

/*
 * "on: 46 areas x 328 B = 14.7 KiB of kernel memory for dm-stats (budget 64.0 MiB),
 * 1.5 KiB in tierd";
 * in zones, "on in zones of 32.0 GiB (24 of 528 at extent resolution, up to 24): ...";
 * "...; pieces watched in 16 windows of an extent (16 watching)" with piece heat;
 * or why it is off.
 */
static char *poolview_heat(struct json_object *pool)
{
	struct json_object *heat = member_get(pool, "heat"), *v;
	char used[SIZE_FORMAT_MAX], bound[SIZE_FORMAT_MAX], areas[SIZE_FORMAT_MAX];
	char per_area[SIZE_FORMAT_MAX], zone[SIZE_FORMAT_MAX], zones[SIZE_FORMAT_MAX];
	char fine[SIZE_FORMAT_MAX], max_fine[SIZE_FORMAT_MAX], table[SIZE_FORMAT_MAX];
	char windows[SIZE_FORMAT_MAX], busy[SIZE_FORMAT_MAX];
	char *text = NULL, *how = NULL, *pieces = NULL;
	uint64_t nr_max_fine = 0, nr_windows = 0;

	if (!heat)
		return strdup("-");
	v = member_get(heat, "enabled");
	if (!v || !json_object_get_boolean(v)) {
		v = member_get(heat, "reason");
		return strdup(v ? json_object_get_string(v) : "off (pool inactive)");
	}
	if (member_uint(heat, "max_fine_zones", &nr_max_fine) == 0 && nr_max_fine > 0) {
		if (asprintf(&how, " in zones of %s (%s of %s at extent resolution, up to %s)",
			     poolview_size(heat, "zone_bytes", zone),
			     poolview_count(heat, "fine_zones", fine),
			     poolview_count(heat, "zones", zones),
			     poolview_count(heat, "max_fine_zones", max_fine)) < 0)
			return NULL;
	}
	if (member_uint(heat, "piece_windows", &nr_windows) == 0 && nr_windows > 0) {
		if (asprintf(&pieces, "; pieces watched in %s windows of an extent (%s watching)",
			     poolview_count(heat, "piece_windows", windows),
			     poolview_count(heat, "piece_windows_busy", busy)) < 0)
			pieces = NULL;
	} else if (member_uint(heat, "piece_areas", &nr_windows) == 0 && nr_windows > 0) {
		pieces = strdup("; pieces watched over the whole volume");
	}
	if (asprintf(&text, "on%s: %s areas x %s = %s of kernel memory for dm-stats (budget %s),"
		     " %s in tierd%s", how ? how : "", poolview_count(heat, "areas", areas),
		     poolview_size(heat, "area_kernel_bytes", per_area),
		     poolview_size(heat, "kernel_bytes", used),
		     poolview_size(heat, "kernel_limit_bytes", bound),
		     poolview_size(heat, "table_bytes", table), pieces ? pieces : "") < 0)
		text = NULL;
	free(how);
	free(pieces);
	return text;
}

/* "every 1h in 22:00-06:00, policy auto, paused": the schedule in a line, or "-". */
static char *poolview_tiering(struct json_object *schedule)
{
	const char *window = member_string(schedule, "window");
	struct json_object *paused = member_get(schedule, "paused");
	char *text = NULL;

	if (!schedule)
		return strdup("-");
	if (asprintf(&text, "%s%s%s, policy %s%s", poolview_string(schedule, "spec"),
		     window && *window ? " in " : "", window && *window ? window : "",
		     poolview_string(schedule, "policy"),
		     paused && json_object_get_boolean(paused) ? ", paused" : "") < 0)
		return NULL;
	return text;
}

/* "5 pieces of 16.0 KiB (80.0 KiB) out of 3 split extents, in 1 container", or "none". */
static char *poolview_pieces(struct json_object *pool)
{
	struct json_object *pieces = member_get(pool, "pieces");
	char n[SIZE_FORMAT_MAX], each[SIZE_FORMAT_MAX], bytes[SIZE_FORMAT_MAX];
	char split[SIZE_FORMAT_MAX], containers[SIZE_FORMAT_MAX];
	uint64_t nr_containers = 0;
	char *text = NULL;

	if (!pieces || member_uint(pieces, "containers", &nr_containers) < 0 || !nr_containers)
		return strdup("none");
	if (asprintf(&text, "%s pieces of %s (%s) out of %s split extents, in %s containers",
		     poolview_count(pieces, "pieces", n), poolview_size(pieces, "piece_bytes", each),
		     poolview_size(pieces, "bytes", bytes),
		     poolview_count(pieces, "split_extents", split),
		     poolview_count(pieces, "containers", containers)) < 0)
		return NULL;
	return text;
}

static int poolview_print_fields(FILE *out, struct json_object *pool)
{
	static const struct table_column columns[] = {
		{ "Pool", "name", TABLE_STRING },
		{ "UUID", "uuid", TABLE_STRING },
		{ "State", "state", TABLE_STRING },
		{ "Volume size", "volume", TABLE_STRING },
		{ "SSD grows volume", "ssd_grows_volume", TABLE_BOOL },
		{ "Metadata generation", "metadata_generation", TABLE_UINT },
		{ "Table", "table", TABLE_STRING },
		{ "Heat", "heat", TABLE_STRING },
		{ "Pieces", "pieces", TABLE_STRING },
		{ "Tiering", "schedule", TABLE_STRING },
		{ "Next run", "next_run_at", TABLE_STRING },
	};
	char size[SIZE_FORMAT_MAX], extents[SIZE_FORMAT_MAX], extent[SIZE_FORMAT_MAX];
	char targets[SIZE_FORMAT_MAX], max_targets[SIZE_FORMAT_MAX];
	char *state = NULL, *size_text = NULL, *heat_text = NULL, *tiering = NULL;
	char *table_text = NULL, *pieces_text = NULL;
	struct json_object *table = member_get(pool, "table");
	char next[TIERVIEW_TEXT_MAX];
	const char *dm_device = poolview_string(pool, "dm_device");
	struct table *t = NULL;
	int r = -ENOMEM;

	/* The volume's path belongs with the state that makes it exist. */
	if (strcmp(poolview_string(pool, "state"), "active") || !strcmp(dm_device, "-")) {
		const char *why = member_string(pool, "inactive_reason");

		if (why && asprintf(&state, "%s: %s", poolview_string(pool, "state"), why) < 0)
			state = NULL;
		else if (!why)
			state = strdup(poolview_string(pool, "state"));
	} else if (asprintf(&state, "active (%s)%s", dm_device,
			    member_bool(pool, "degraded") ? ", degraded: a device is missing" : "") <
		   0) {
		state = NULL;
	}
	if (asprintf(&size_text, "%s (%s extents of %s)", poolview_size(pool, "size_bytes", size),
		     poolview_count(pool, "total_extents", extents),
		     poolview_size(pool, "extent_size_bytes", extent)) < 0)
		size_text = NULL;
	/* "112 linear targets (limit 65536)" */
	if (asprintf(&table_text, "%s linear targets (limit %s)",
		     poolview_count(table, "targets", targets),
		     member_get(table, "max_targets") ?
			     poolview_count(table, "max_targets", max_targets) : "none") < 0)
		table_text = NULL;
	heat_text = poolview_heat(pool);
	pieces_text = poolview_pieces(pool);
	tiering = poolview_tiering(member_get(pool, "schedule"));
	if (!state || !size_text || !table_text || !heat_text || !pieces_text || !tiering)
		goto out;

	r = table_new(columns, ARRAY_SIZE(columns), &t);
	if (r < 0)
		goto out;
	table_add_members(t, pool, 2);
	table_add_string(t, state);
	table_add_string(t, size_text);
	table_add_members(t, pool, 2);
	table_add_string(t, table_text);
	table_add_string(t, heat_text);
	table_add_string(t, pieces_text);
	table_add_string(t, tiering);
	table_add_string(t, member_get(pool, "schedule") ?
			    tierview_next_run(member_get(pool, "schedule"), next) : NULL);
	r = table_print_fields(t, out);
out:
	table_free(t);
	free(tiering);
	free(heat_text);
	free(pieces_text);
	free(table_text);
	free(size_text);
	free(state);
	return r;
}

/* A degraded pool's lost ranges, as byte ranges of the volume. */
static int poolview_print_lost(FILE *out, struct json_object *pool)
{
	struct json_object *ranges = member_get(pool, "lost_ranges");
	size_t n = json_object_is_type(ranges, json_type_array) ? json_object_array_length(ranges) : 0;
	char size[SIZE_FORMAT_MAX];
	uint64_t lost = 0;

	if (member_string(pool, "moves_refused"))
		fprintf(out, "\nMoves are refused until tierd restarts: the metadata could not be"
			" written (%s).\n", member_string(pool, "moves_refused"));
	if (!member_bool(pool, "degraded"))
		return ferror(out) ? -EIO : 0;
	member_uint(pool, "lost_bytes", &lost);
	fprintf(out, "\nDegraded: %s of the volume lived on the missing device%s\n",
		size_format(lost, size, sizeof(size)),
		n ? "; these byte ranges fail every read and write:" : "; nothing is lost.");
	for (size_t i = 0; i < n; i++) {
		struct json_object *range = json_object_array_get_idx(ranges, i);
		uint64_t off = 0, len = 0;

		member_uint(range, "offset_bytes", &off);
		member_uint(range, "size_bytes", &len);
		fprintf(out, "  %" PRIu64 "-%" PRIu64 " (%s)\n", off, off + len - 1,
			size_format(len, size, sizeof(size)));
	}
	if (n == 64)
		fprintf(out, "  (the first 64 ranges; --json lists the same)\n");
	return ferror(out) ? -EIO : 0;
}

/* The running job in a line, pointing at the command that tells more. */
static int poolview_print_job(FILE *out, struct json_object *pool)
{
	struct json_object *job = member_get(pool, "job");
	char done[SIZE_FORMAT_MAX], total[SIZE_FORMAT_MAX];
	uint64_t db = 0, tb = 0;

	if (!json_object_is_type(job, json_type_object))
		return 0;
	member_uint(job, "done_bytes", &db);
	member_uint(job, "total_bytes", &tb);
	fprintf(out, "\nRunning: %s, %s of %s done; 'tierctl job show %s' for more\n",
		poolview_string(job, "what"), size_format(db, done, sizeof(done)),
		size_format(tb, total, sizeof(total)), poolview_string(pool, "name"));
	return ferror(out) ? -EIO : 0;
}

int poolview_print_show(FILE *out, struct json_object *pool)
{
	static const struct table_column columns[] = {
		{ "Tier", "tier", TABLE_STRING },
		{ "Device", "path", TABLE_STRING },
		{ "Device size", "size_bytes", TABLE_BYTES },
		{ "Extents", "total_extents", TABLE_UINT },
		{ "Used", "used_extents", TABLE_UINT },
		{ "Free", "free_extents", TABLE_UINT },
		{ "Reserved", "reserved_extents", TABLE_UINT },
	};
	struct json_object *tiers = poolview_tiers(pool), *pins;
	size_t n_tiers = tiers ? json_object_array_length(tiers) : 0;
	struct table *t;
	int r;

	r = poolview_print_fields(out, pool);
	if (r < 0)
		return r;
	r = table_new(columns, ARRAY_SIZE(columns), &t);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n_tiers; i++) {
		struct json_object *tier = json_object_array_get_idx(tiers, i);
		struct json_object *devices = member_get(tier, "devices");
		size_t n_devices = json_object_is_type(devices, json_type_array) ?
					   json_object_array_length(devices) : 0;

		for (size_t d = 0; d < n_devices; d++) {
			table_add_json(t, member_get(tier, "name"));
			table_add_members(t, json_object_array_get_idx(devices, d),
					  ARRAY_SIZE(columns) - 1);
		}
	}
	table_gap(out);
	r = table_print(t, out);
	table_free(t);
	if (r < 0)
		return r;
	r = poolview_print_lost(out, pool);
	if (r == 0)
		r = poolview_print_job(out, pool);
	if (r < 0)
		return r;
	pins = member_get(pool, "pins");
	if (!json_object_is_type(pins, json_type_array) || !json_object_array_length(pins))
		return 0;
	table_gap(out);
	return tierview_print_pins(out, pins);
}

int poolview_print_change(FILE *out, const char *before, struct json_object *pool,
			  const char *after)
{
	struct json_object *ssd = poolview_tier(pool, "ssd"), *hdd = poolview_tier(pool, "hdd");
	char size[SIZE_FORMAT_MAX], ssd_size[SIZE_FORMAT_MAX], hdd_size[SIZE_FORMAT_MAX];
	const char *state = poolview_string(pool, "state");

	fprintf(out, "%s %s: %s, %s", before, poolview_string(pool, "name"),
		strcmp(state, "active") ? state : poolview_string(pool, "dm_device"),
		poolview_size(pool, "size_bytes", size));
	/* Usable sizes, reserves left out, so that what is added up adds up to the volume. */
	poolview_size(ssd, "usable_bytes", ssd_size);
	poolview_size(hdd, "usable_bytes", hdd_size);
	if (ssd && member_bool(pool, "ssd_grows_volume"))
		fprintf(out, " (SSD %s + HDD %s)", ssd_size, hdd_size);
	else if (ssd)
		fprintf(out, " (HDD %s; SSD %s for hot extents, not counted)", hdd_size, ssd_size);
	else
		fprintf(out, " (HDD %s)", hdd_size);
	fprintf(out, "%s\n", after ? after : "");
	return ferror(out) ? -EIO : 0;
}
