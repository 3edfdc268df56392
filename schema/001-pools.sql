-- SPDX-License-Identifier: GPL-2.0-or-later
-- Pools, their devices and the extent map. The devices carry the same
-- information in their own metadata (see docs/pools.md); `generation` says
-- which copy is newer after a crash between the two writes.
CREATE TABLE pool (
	id INTEGER PRIMARY KEY,
	uuid TEXT NOT NULL UNIQUE,
	name TEXT NOT NULL UNIQUE,
	extent_size INTEGER NOT NULL,
	flags INTEGER NOT NULL,
	created INTEGER NOT NULL,
	generation INTEGER NOT NULL,
	nr_logical INTEGER NOT NULL,
	-- 0 after `pool deactivate`: the pool stays inactive across restarts.
	want_active INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE device (
	pool_id INTEGER NOT NULL REFERENCES pool(id) ON DELETE CASCADE,
	idx INTEGER NOT NULL,
	uuid TEXT NOT NULL UNIQUE,
	tier TEXT NOT NULL CHECK (tier IN ('hdd', 'ssd')),
	-- Where the device was last found; devices are identified by uuid.
	path TEXT NOT NULL,
	size_bytes INTEGER NOT NULL,
	logical_block_size INTEGER NOT NULL,
	data_start INTEGER NOT NULL,
	nr_pe INTEGER NOT NULL,
	reserve_pe INTEGER NOT NULL,
	PRIMARY KEY (pool_id, idx)
);

CREATE TABLE extent (
	pool_id INTEGER NOT NULL REFERENCES pool(id) ON DELETE CASCADE,
	le INTEGER NOT NULL,
	dev INTEGER NOT NULL,
	pe INTEGER NOT NULL,
	PRIMARY KEY (pool_id, le)
) WITHOUT ROWID;
