-- SPDX-License-Identifier: GPL-2.0-or-later
-- A run stopped by `tierctl job abort` ends 'aborted'. SQLite cannot change
-- a CHECK constraint in place: the table is rebuilt with the new word, its
-- rows and ids kept. Nothing references run, so the rebuild breaks no key.
CREATE TABLE run_new (
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
					       'interrupted', 'aborted')),
	message TEXT
);
INSERT INTO run_new SELECT id, pool_id, trigger_kind, policy, started, finished,
	planned_extents, promoted_extents, demoted_extents, promoted_bytes, demoted_bytes, failed,
	result, message FROM run;
DROP TABLE run;
ALTER TABLE run_new RENAME TO run;
CREATE INDEX run_by_pool ON run (pool_id, started);
