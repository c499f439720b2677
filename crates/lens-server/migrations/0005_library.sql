-- The person's library: namespaces holding documents (imports land here). The bytes
-- are in the library vault (<data>/library/<user>/<id>), encrypted.
CREATE TABLE namespaces (
    id          TEXT PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (user_id, name)
);

CREATE TABLE documents (
    id            TEXT PRIMARY KEY,
    namespace_id  TEXT NOT NULL REFERENCES namespaces(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    size          INTEGER NOT NULL,
    mime          TEXT NOT NULL,
    created_at    INTEGER NOT NULL
);
CREATE INDEX documents_namespace ON documents(namespace_id);
