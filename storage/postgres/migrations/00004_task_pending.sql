-- +goose Up
-- The decision a waiting task waits for (storage.Pending as JSON): set
-- while it is waiting_approval or waiting_user, 'null' otherwise.
ALTER TABLE tasks ADD COLUMN pending JSON NOT NULL DEFAULT 'null';

-- +goose Down
ALTER TABLE tasks DROP COLUMN pending;
