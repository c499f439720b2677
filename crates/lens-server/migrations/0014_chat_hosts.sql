-- The hosts a conversation's owner allowed its sandbox to reach (a JSON list), besides
-- the admin's list, where the admin lets people allow hosts.
ALTER TABLE chats ADD COLUMN allowed_hosts TEXT NOT NULL DEFAULT '[]';
