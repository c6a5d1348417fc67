-- +goose Up
-- How long a task waited for a person (waiting_approval, waiting_user), in
-- ns, the waits that ended; and when the wait under way began (NULL while
-- the task is not waiting). Its time (started to finished) includes them.
ALTER TABLE tasks ADD COLUMN waited_ns  INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN waiting_us INTEGER;

-- +goose Down
ALTER TABLE tasks DROP COLUMN waiting_us;
ALTER TABLE tasks DROP COLUMN waited_ns;
