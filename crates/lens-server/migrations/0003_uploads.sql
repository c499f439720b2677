-- Files the person uploads. Bound to a conversation by the first message that carries
-- them; the bytes are in the vault (<data>/uploads/<user>/<id>), encrypted.
CREATE TABLE uploads (
    id          TEXT PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    chat_id     TEXT REFERENCES chats(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    size        INTEGER NOT NULL,
    mime        TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX uploads_user ON uploads(user_id);
CREATE INDEX uploads_chat ON uploads(chat_id);

-- The attachments a person's message carried: JSON [{id, name, size}].
ALTER TABLE messages ADD COLUMN attachments TEXT NOT NULL DEFAULT '[]';
