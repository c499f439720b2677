-- Answers' event streams open, per replica and person: the per-person limit holds across
-- replicas (a replica not heard from no longer counts).
CREATE TABLE open_streams (
    replica  TEXT NOT NULL,
    user_id  BIGINT NOT NULL,
    open     BIGINT NOT NULL,
    PRIMARY KEY (replica, user_id)
);
