-- Groups and what their people may do. `rules` is a `lens_types::GroupRules` as JSON, read
-- whole at each check. A person's groups are `everyone`, those an admin made them a member of
-- (`group_members`), and those the identity provider named at their last sign-in
-- (`identities.groups`), matched by name.
CREATE TABLE groups (
    name       TEXT PRIMARY KEY,
    rules      TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE group_members (
    group_name TEXT NOT NULL REFERENCES groups(name) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    PRIMARY KEY (group_name, user_id)
);
CREATE INDEX group_members_user ON group_members(user_id);
