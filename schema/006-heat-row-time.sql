-- SPDX-License-Identifier: GPL-2.0-or-later
-- Heat rows are written only when their extents had I/O or moved since the
-- last flush, not every row at every flush: a 16 TiB pool's idle flush
-- rewrote its whole table each minute. So each row says when its heat was
-- sampled (unix ns), and a load decays it from then; NULL, in rows written
-- before this migration, means heat_sampled's time, as it did then.
ALTER TABLE heat ADD COLUMN sampled_ns INTEGER;
