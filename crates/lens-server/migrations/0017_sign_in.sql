-- Single sign-on. An identity is a person as the provider knows them, (issuer, subject),
-- tied to the Lens account their first sign-in made; `groups` is the provider's list as of
-- their last sign-in. A sign-in attempt is kept from the redirect to the provider until the
-- browser comes back (once: taking it deletes it). A session keeps the ID token it was opened
-- with, for the provider's sign-out.
CREATE TABLE identities (
    issuer       TEXT NOT NULL,
    subject      TEXT NOT NULL,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    groups       TEXT NOT NULL DEFAULT '[]',
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX identities_user ON identities(user_id);

CREATE TABLE sign_in_attempts (
    state_hash    TEXT PRIMARY KEY,
    browser_hash  TEXT NOT NULL,
    nonce         TEXT NOT NULL,
    pkce_verifier TEXT NOT NULL,
    created_at    INTEGER NOT NULL
);

ALTER TABLE sessions ADD COLUMN id_token TEXT;
