-- +goose Up
-- The parts of a task's and a step's input tokens that the provider read
-- from and wrote to its prompt cache, and whether any of its figures were
-- counted by phonepilot rather than reported by the provider (plan.Usage).
ALTER TABLE tasks ADD COLUMN cache_read_tokens  BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN cache_read_tokens  BIGINT NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN tokens_estimated BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE steps ADD COLUMN tokens_estimated BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE steps DROP COLUMN tokens_estimated;
ALTER TABLE tasks DROP COLUMN tokens_estimated;
ALTER TABLE steps DROP COLUMN cache_write_tokens;
ALTER TABLE steps DROP COLUMN cache_read_tokens;
ALTER TABLE tasks DROP COLUMN cache_write_tokens;
ALTER TABLE tasks DROP COLUMN cache_read_tokens;
