-- The model that wrote an answer and the tokens it cost (JSON), when the provider said.
ALTER TABLE messages ADD COLUMN model TEXT;
ALTER TABLE messages ADD COLUMN usage TEXT;
