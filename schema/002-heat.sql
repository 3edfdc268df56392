-- SPDX-License-Identifier: GPL-2.0-or-later
-- Heat per extent (docs/heat.md), flushed periodically and at shutdown, and
-- the I/O each tier served, per minute.
-- A row holds `nr` extents from `first_le` (a multiple of the chunk size), 24
-- bytes each, little-endian: heat (IEEE float), 4 zero bytes, reads (u64),
-- writes (u64). A row per extent would make a million-extent flush take
-- seconds (docs/heat.md).
CREATE TABLE heat (
	pool_id INTEGER NOT NULL REFERENCES pool(id) ON DELETE CASCADE,
	first_le INTEGER NOT NULL,
	nr INTEGER NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (pool_id, first_le)
) WITHOUT ROWID;

-- When the stored heat was sampled (unix ns), so a restart decays it by the
-- time that passed.
CREATE TABLE heat_sampled (
	pool_id INTEGER PRIMARY KEY REFERENCES pool(id) ON DELETE CASCADE,
	sampled_ns INTEGER NOT NULL
);

-- minute: unix time / 60. Rows older than the retention are folded into
-- tier_io_hourly (hour: unix time / 3600).
CREATE TABLE tier_io (
	pool_id INTEGER NOT NULL REFERENCES pool(id) ON DELETE CASCADE,
	minute INTEGER NOT NULL,
	tier TEXT NOT NULL CHECK (tier IN ('hdd', 'ssd')),
	reads INTEGER NOT NULL,
	writes INTEGER NOT NULL,
	read_bytes INTEGER NOT NULL,
	write_bytes INTEGER NOT NULL,
	PRIMARY KEY (pool_id, minute, tier)
) WITHOUT ROWID;

CREATE TABLE tier_io_hourly (
	pool_id INTEGER NOT NULL REFERENCES pool(id) ON DELETE CASCADE,
	hour INTEGER NOT NULL,
	tier TEXT NOT NULL CHECK (tier IN ('hdd', 'ssd')),
	reads INTEGER NOT NULL,
	writes INTEGER NOT NULL,
	read_bytes INTEGER NOT NULL,
	write_bytes INTEGER NOT NULL,
	PRIMARY KEY (pool_id, hour, tier)
) WITHOUT ROWID;
