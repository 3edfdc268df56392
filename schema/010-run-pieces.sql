-- SPDX-License-Identifier: GPL-2.0-or-later
-- What a run that places pieces moved besides whole extents: the pieces it
-- planned, sent out to the SSD tier and brought home. Their bytes were
-- always in promoted_bytes and demoted_bytes; runs stored before this
-- migration count 0 pieces. The per-minute history (moves) keeps bytes only.
ALTER TABLE run ADD COLUMN planned_pieces INTEGER NOT NULL DEFAULT 0;
ALTER TABLE run ADD COLUMN promoted_pieces INTEGER NOT NULL DEFAULT 0;
ALTER TABLE run ADD COLUMN demoted_pieces INTEGER NOT NULL DEFAULT 0;
