-- An answer as the model saw it: its rounds of text and tool calls and the results it
-- was given (JSON), so later questions send the model its own earlier runs.
ALTER TABLE messages ADD COLUMN turns TEXT;
