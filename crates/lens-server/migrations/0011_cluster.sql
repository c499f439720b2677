-- Several replicas on one database: each says it is alive, leases say who does what
-- once (the routines), and an answer names the replica writing it, so another can mark
-- it interrupted when that replica dies. One machine has one row in `replicas`.
CREATE TABLE replicas (
    id          TEXT PRIMARY KEY,
    host        TEXT NOT NULL,
    addr        TEXT NOT NULL,
    started_at  INTEGER NOT NULL,
    seen_at     INTEGER NOT NULL
);

CREATE TABLE leases (
    name        TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    expires_at  INTEGER NOT NULL
);

ALTER TABLE messages ADD COLUMN replica TEXT;

-- An answer's events, for followers on another replica than the one writing it:
-- written as they come, read by position, forgotten a while after the answer ends.
CREATE TABLE answer_events (
    answer_id   TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    event       TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (answer_id, seq)
);

-- Login attempts counted in fixed windows (auth/rate_limit.rs), shared by every replica.
CREATE TABLE login_counts (
    key           TEXT PRIMARY KEY,
    count         INTEGER NOT NULL,
    window_start  INTEGER NOT NULL
);
