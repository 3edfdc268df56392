-- SPDX-License-Identifier: GPL-2.0-or-later
-- How the heat of each split extent divides among its pieces (lib/pieceheat.h),
-- so that a restart does not forget why its pieces are out: without it the
-- first I/O after a restart made the pieces out that it missed look cold,
-- and the next run brought them home. Only extents with pieces out have a
-- row; the rest learn their weights again as they did. `data` holds a record
-- per piece with weight, 6 bytes, little-endian: the piece (u16) and its
-- weight (IEEE float) at sampled_ns (unix ns), which a load decays from.
CREATE TABLE piece_heat (
	pool_id INTEGER NOT NULL REFERENCES pool(id) ON DELETE CASCADE,
	le INTEGER NOT NULL,
	pieces_per_extent INTEGER NOT NULL,
	sampled_ns INTEGER NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (pool_id, le)
) WITHOUT ROWID;
