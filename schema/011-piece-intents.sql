-- SPDX-License-Identifier: GPL-2.0-or-later
-- Step 1 of the commit protocol for pieces of extents (docs/migration.md):
-- a row per piece whose copy is under way. A place is (dev, pe, slot): slot
-- of the piece container at dev:pe, or, at home, the piece's own place in
-- its extent's home extent (slot is then the piece's index). The commit of
-- a batch of pieces deletes the pool's rows in its transaction; rows found
-- at activation belong to a batch a stop or crash cut short, and the pieces
-- the devices' newest slot carries say whether it had committed.
CREATE TABLE piece_migration (
	pool_id INTEGER NOT NULL REFERENCES pool(id) ON DELETE CASCADE,
	le INTEGER NOT NULL,
	idx INTEGER NOT NULL,
	src_dev INTEGER NOT NULL,
	src_pe INTEGER NOT NULL,
	src_slot INTEGER NOT NULL,
	dst_dev INTEGER NOT NULL,
	dst_pe INTEGER NOT NULL,
	dst_slot INTEGER NOT NULL,
	started INTEGER NOT NULL,
	PRIMARY KEY (pool_id, le, idx)
) WITHOUT ROWID;
