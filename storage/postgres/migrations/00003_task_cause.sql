-- +goose Up
-- Why a task ended, typed (lifecycle.Cause), beside the reason in words;
-- and the screen after its last action (compact Scene JSON, never pixels).
ALTER TABLE tasks ADD COLUMN cause TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN final_scene JSON NOT NULL DEFAULT 'null';
-- Tasks that ended before causes existed: the two causes that follow from
-- the status alone.
UPDATE tasks SET cause = 'interrupted' WHERE status = 'interrupted';
UPDATE tasks SET cause = 'cancelled' WHERE status = 'cancelled';

-- +goose Down
ALTER TABLE tasks DROP COLUMN final_scene;
ALTER TABLE tasks DROP COLUMN cause;
