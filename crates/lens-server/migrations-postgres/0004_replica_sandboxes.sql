-- What each replica's sandboxes hold (a JSON count, in all and per person), said with
-- its heartbeat: replicas sharing one capacity count each other's against the limits.
ALTER TABLE replicas ADD COLUMN sandboxes TEXT NOT NULL DEFAULT '{}';
