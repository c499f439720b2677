-- The audit trail: who signed in, changed a setting, shared a file or ran code. No
-- foreign keys: an entry outlives the account and the conversation it names. Entries are
-- never changed (the trigger refuses); only the retention removes old ones. `once_key`
-- keeps an entry that is written again (a run's ending, saved with each save of its
-- answer) to one row.
CREATE TABLE audit (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    at        INTEGER NOT NULL,
    action    TEXT NOT NULL,
    actor_id  INTEGER,
    actor     TEXT,
    client    TEXT,
    chat_id   TEXT,
    target    TEXT,
    detail    TEXT NOT NULL DEFAULT '{}',
    once_key  TEXT UNIQUE
);
CREATE INDEX audit_at ON audit(at);
CREATE INDEX audit_action ON audit(action, id);
CREATE INDEX audit_actor ON audit(actor COLLATE NOCASE, id);

CREATE TRIGGER audit_append_only BEFORE UPDATE ON audit
BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;
