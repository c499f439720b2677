-- The page assistant: a conversation tied to a page of Lens (NULL for the chat page's
-- conversations), and the page as it was last shown to the model (JSON).
ALTER TABLE chats ADD COLUMN page_url TEXT;
ALTER TABLE chats ADD COLUMN page_context TEXT;
CREATE INDEX chats_user_page ON chats(user_id, page_url);
