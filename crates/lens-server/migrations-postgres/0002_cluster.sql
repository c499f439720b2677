-- Several replicas on one database: each says it is alive, leases say who does what
-- once (the routines), and an answer names the replica writing it, so another can mark
-- it interrupted when that replica dies.
CREATE TABLE replicas (
    id          TEXT PRIMARY KEY,
    host        TEXT NOT NULL,
    addr        TEXT NOT NULL,
    started_at  BIGINT NOT NULL,
    seen_at     BIGINT NOT NULL
);

CREATE TABLE leases (
    name        TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    expires_at  BIGINT NOT NULL
);

ALTER TABLE messages ADD COLUMN replica TEXT;

-- An answer's events, for followers on another replica than the one writing it:
-- written as they come (each batch signalled on `lens_events`), read by position,
-- forgotten a while after the answer ends.
CREATE TABLE answer_events (
    answer_id   TEXT NOT NULL,
    seq         BIGINT NOT NULL,
    event       TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (answer_id, seq)
);

-- Login attempts counted in fixed windows (auth/rate_limit.rs), shared by every replica.
CREATE TABLE login_counts (
    key           TEXT PRIMARY KEY,
    count         BIGINT NOT NULL,
    window_start  BIGINT NOT NULL
);
