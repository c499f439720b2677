-- What an API token may do (space-separated scopes: chat, approve, admin) and until when.
-- Tokens made before scopes keep what they did, short of deciding approvals: `chat`, and
-- `admin` where their person is an admin.
ALTER TABLE api_tokens ADD COLUMN scopes TEXT NOT NULL DEFAULT 'chat';
ALTER TABLE api_tokens ADD COLUMN expires_at INTEGER;
UPDATE api_tokens SET scopes = 'chat admin' WHERE user_id IN (SELECT id FROM users WHERE is_admin = 1);
