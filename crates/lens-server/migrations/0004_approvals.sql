-- Questions put to the person before a step runs, and their answers (once, by the owner).
CREATE TABLE approvals (
    id          TEXT PRIMARY KEY,
    chat_id     TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    answer_id   TEXT NOT NULL,
    step_id     TEXT NOT NULL,
    question    TEXT NOT NULL,
    -- NULL while undecided; 1 approved, 0 declined.
    approved    INTEGER,
    created_at  INTEGER NOT NULL
);
CREATE INDEX approvals_chat ON approvals(chat_id);

-- Set once text the person did not write entered the conversation (an attachment, a
-- networked run's output, a page's text): networked runs then ask first.
ALTER TABLE chats ADD COLUMN outside_text INTEGER NOT NULL DEFAULT 0;
