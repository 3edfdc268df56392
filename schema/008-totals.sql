-- SPDX-License-Identifier: GPL-2.0-or-later
-- Totals kept as rows change, so that reading them (each metrics scrape)
-- costs a row, not the history: a pool on schedule auto records a run and
-- a minute of moves up to twice a minute, and a year of that is a million
-- rows, counted in 0.5 s at every scrape before this migration. With the
-- totals the run history can be kept short (tierd keeps the newest runs of
-- a pool, state_runs_prune) without losing the counts.
CREATE TABLE run_total (
	pool_id INTEGER NOT NULL REFERENCES pool(id) ON DELETE CASCADE,
	trigger_kind TEXT NOT NULL,
	result TEXT NOT NULL,
	n INTEGER NOT NULL,
	PRIMARY KEY (pool_id, trigger_kind, result)
) WITHOUT ROWID;

INSERT INTO run_total (pool_id, trigger_kind, result, n)
	SELECT pool_id, trigger_kind, result, count(*) FROM run
	WHERE result != 'running' GROUP BY pool_id, trigger_kind, result;

-- A run counts once, when it ends (or if it is stored ended).
CREATE TRIGGER run_ended AFTER UPDATE OF result ON run
	WHEN OLD.result = 'running' AND NEW.result != 'running'
BEGIN
	INSERT INTO run_total (pool_id, trigger_kind, result, n)
		VALUES (NEW.pool_id, NEW.trigger_kind, NEW.result, 1)
		ON CONFLICT (pool_id, trigger_kind, result) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER run_stored_ended AFTER INSERT ON run
	WHEN NEW.result != 'running'
BEGIN
	INSERT INTO run_total (pool_id, trigger_kind, result, n)
		VALUES (NEW.pool_id, NEW.trigger_kind, NEW.result, 1)
		ON CONFLICT (pool_id, trigger_kind, result) DO UPDATE SET n = n + 1;
END;

CREATE TABLE moves_total (
	pool_id INTEGER PRIMARY KEY REFERENCES pool(id) ON DELETE CASCADE,
	promoted_extents INTEGER NOT NULL,
	demoted_extents INTEGER NOT NULL,
	promoted_bytes INTEGER NOT NULL,
	demoted_bytes INTEGER NOT NULL,
	failed INTEGER NOT NULL
);

INSERT INTO moves_total (pool_id, promoted_extents, demoted_extents, promoted_bytes,
			 demoted_bytes, failed)
	SELECT pool_id, sum(promoted_extents), sum(demoted_extents), sum(promoted_bytes),
		sum(demoted_bytes), sum(failed) FROM moves GROUP BY pool_id;

-- A minute's row is added to (state_moves_add) or new: the totals take the difference.
CREATE TRIGGER moves_added AFTER INSERT ON moves
BEGIN
	INSERT INTO moves_total (pool_id, promoted_extents, demoted_extents, promoted_bytes,
				 demoted_bytes, failed)
		VALUES (NEW.pool_id, NEW.promoted_extents, NEW.demoted_extents,
			NEW.promoted_bytes, NEW.demoted_bytes, NEW.failed)
		ON CONFLICT (pool_id) DO UPDATE SET
			promoted_extents = promoted_extents + excluded.promoted_extents,
			demoted_extents = demoted_extents + excluded.demoted_extents,
			promoted_bytes = promoted_bytes + excluded.promoted_bytes,
			demoted_bytes = demoted_bytes + excluded.demoted_bytes,
			failed = failed + excluded.failed;
END;

CREATE TRIGGER moves_grown AFTER UPDATE ON moves
BEGIN
	UPDATE moves_total SET
		promoted_extents = promoted_extents + NEW.promoted_extents - OLD.promoted_extents,
		demoted_extents = demoted_extents + NEW.demoted_extents - OLD.demoted_extents,
		promoted_bytes = promoted_bytes + NEW.promoted_bytes - OLD.promoted_bytes,
		demoted_bytes = demoted_bytes + NEW.demoted_bytes - OLD.demoted_bytes,
		failed = failed + NEW.failed - OLD.failed
	WHERE pool_id = NEW.pool_id;
END;
