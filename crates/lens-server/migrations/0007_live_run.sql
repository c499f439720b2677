-- The running step's output so far (JSON, bounded), so a crash mid-run leaves it.
ALTER TABLE messages ADD COLUMN live_run TEXT;
