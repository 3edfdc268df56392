-- SPDX-License-Identifier: GPL-2.0-or-later
-- Pieces of split extents (docs/design.md, "Placement finer than an
-- extent"), as a version 2 metadata slot carries them: the piece size of
-- the pool (pieces per extent; 0 while it has no container), its piece
-- containers, each a physical extent given over to pieces and numbered as
-- the slot numbers them, and the pieces out, each in a slot of one of them.
-- A pool without containers has no row here.
ALTER TABLE pool ADD COLUMN pieces_per_extent INTEGER NOT NULL DEFAULT 0;

CREATE TABLE piece_container (
	pool_id INTEGER NOT NULL REFERENCES pool(id) ON DELETE CASCADE,
	idx INTEGER NOT NULL CHECK (idx >= 0),
	dev INTEGER NOT NULL,
	pe INTEGER NOT NULL,
	PRIMARY KEY (pool_id, idx)
) WITHOUT ROWID;

CREATE TABLE piece (
	pool_id INTEGER NOT NULL REFERENCES pool(id) ON DELETE CASCADE,
	le INTEGER NOT NULL,
	idx INTEGER NOT NULL,
	container INTEGER NOT NULL,
	slot INTEGER NOT NULL,
	PRIMARY KEY (pool_id, le, idx)
) WITHOUT ROWID;
