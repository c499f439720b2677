-- Files that left a sandbox: shared by the model or the person, images a run made, and
-- full run logs. The bytes are in the vault (<data>/chat-files/<chat>/<id>), encrypted.
CREATE TABLE chat_files (
    id          TEXT PRIMARY KEY,
    chat_id     TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    size        INTEGER NOT NULL,
    mime        TEXT NOT NULL,
    -- 'shared' counts against the per-conversation limit; 'image' and 'log' do not.
    kind        TEXT NOT NULL CHECK (kind IN ('shared', 'image', 'log')),
    created_at  INTEGER NOT NULL
);
CREATE INDEX chat_files_chat ON chat_files(chat_id);
