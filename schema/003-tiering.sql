-- SPDX-License-Identifier: GPL-2.0-or-later
-- Tiering: each pool's policy and schedule, its pins, the runs, what moved
-- per minute, and the intents of the moves in flight (docs/migration.md).
-- From this version the 4 bytes after the heat in a `heat` record hold the
-- unix time of the extent's last move (0: never), for the minimum residency.

-- One row per pool once anything was set; a missing row means the defaults.
CREATE TABLE tiering (
	pool_id INTEGER PRIMARY KEY REFERENCES pool(id) ON DELETE CASCADE,
	policy TEXT NOT NULL,
	spec TEXT NOT NULL,
	-- "" when runs may start at any time
	run_window TEXT NOT NULL,
	max_bytes INTEGER NOT NULL,
	-- bytes per second, 0: no cap
	rate INTEGER NOT NULL,
	io_awareness TEXT NOT NULL CHECK (io_awareness IN ('off', 'throttled', 'idle')),
	paused INTEGER NOT NULL
);

-- Extents [first_le, first_le + nr) stay on `tier` whatever the policy says.
CREATE TABLE pin (
	pool_id INTEGER NOT NULL REFERENCES pool(id) ON DELETE CASCADE,
	first_le INTEGER NOT NULL,
	nr INTEGER NOT NULL,
	tier TEXT NOT NULL CHECK (tier IN ('hdd', 'ssd')),
	PRIMARY KEY (pool_id, first_le)
) WITHOUT ROWID;

-- Times are unix seconds. A run still 'running' when tierd starts was cut
-- short by a crash or a stop and becomes 'interrupted'.
CREATE TABLE run (
	id INTEGER PRIMARY KEY,
	pool_id INTEGER NOT NULL REFERENCES pool(id) ON DELETE CASCADE,
	trigger_kind TEXT NOT NULL CHECK (trigger_kind IN ('schedule', 'on-demand', 'auto')),
	policy TEXT NOT NULL,
	started INTEGER NOT NULL,
	finished INTEGER,
	planned_extents INTEGER NOT NULL,
	promoted_extents INTEGER NOT NULL DEFAULT 0,
	demoted_extents INTEGER NOT NULL DEFAULT 0,
	promoted_bytes INTEGER NOT NULL DEFAULT 0,
	demoted_bytes INTEGER NOT NULL DEFAULT 0,
	failed INTEGER NOT NULL DEFAULT 0,
	result TEXT NOT NULL CHECK (result IN ('running', 'done', 'partial', 'failed', 'cancelled',
					       'interrupted')),
	message TEXT
);
CREATE INDEX run_by_pool ON run (pool_id, started);

-- Everything that moved, by any run or command, per minute (unix time / 60).
CREATE TABLE moves (
	pool_id INTEGER NOT NULL REFERENCES pool(id) ON DELETE CASCADE,
	minute INTEGER NOT NULL,
	promoted_extents INTEGER NOT NULL,
	demoted_extents INTEGER NOT NULL,
	promoted_bytes INTEGER NOT NULL,
	demoted_bytes INTEGER NOT NULL,
	failed INTEGER NOT NULL,
	PRIMARY KEY (pool_id, minute)
) WITHOUT ROWID;

-- Step 1 of the commit protocol: a row per extent whose copy is under way.
-- The commit that remaps the extent deletes its row in the same transaction;
-- rows found at start belong to moves that never committed (rolled back:
-- the source stayed authoritative).
CREATE TABLE migration (
	pool_id INTEGER NOT NULL REFERENCES pool(id) ON DELETE CASCADE,
	le INTEGER NOT NULL,
	src_dev INTEGER NOT NULL,
	src_pe INTEGER NOT NULL,
	dst_dev INTEGER NOT NULL,
	dst_pe INTEGER NOT NULL,
	started INTEGER NOT NULL,
	PRIMARY KEY (pool_id, le)
) WITHOUT ROWID;
