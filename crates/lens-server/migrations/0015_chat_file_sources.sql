-- Where a shared file came from in the workspace, and which version of it (its size and
-- when it last changed, "size:modified_ms"), so sharing the same file again answers with
-- that share and the workspace browser shows it. NULL for files shared before, images
-- and logs.
ALTER TABLE chat_files ADD COLUMN source_path TEXT;
ALTER TABLE chat_files ADD COLUMN source_version TEXT;
