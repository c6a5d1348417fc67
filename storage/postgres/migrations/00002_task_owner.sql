-- +goose Up
-- The process running a task ("host:pid"), so that a restarted server ends
-- only the tasks its own dead predecessor left running, not those another
-- process sharing the database is running right now.
ALTER TABLE tasks ADD COLUMN owner TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE tasks DROP COLUMN owner;
