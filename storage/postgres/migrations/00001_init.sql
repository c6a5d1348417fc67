-- +goose Up
CREATE TABLE tasks (
    seq              BIGSERIAL PRIMARY KEY,
    id               TEXT    NOT NULL UNIQUE,
    goal             TEXT    NOT NULL,
    device           TEXT    NOT NULL,
    planner          TEXT    NOT NULL,
    max_steps        INTEGER NOT NULL DEFAULT 0,
    status           TEXT    NOT NULL,
    reason           TEXT    NOT NULL DEFAULT '',
    created_us       BIGINT  NOT NULL,
    started_us       BIGINT,
    finished_us      BIGINT,
    input_tokens     BIGINT  NOT NULL DEFAULT 0,
    output_tokens    BIGINT  NOT NULL DEFAULT 0,
    model_latency_ns BIGINT  NOT NULL DEFAULT 0,
    config           JSONB   NOT NULL DEFAULT '{}',
    last_event       BIGINT  NOT NULL DEFAULT 0
);
CREATE INDEX tasks_status_seq ON tasks (status, seq);

CREATE TABLE steps (
    task_id          TEXT    NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    number           INTEGER NOT NULL,
    intent           TEXT    NOT NULL,
    tool             TEXT    NOT NULL,
    args             JSON    NOT NULL,
    status           TEXT    NOT NULL,
    reason           TEXT    NOT NULL DEFAULT '',
    attempts         JSON    NOT NULL,
    before_fp        TEXT    NOT NULL DEFAULT '',
    after_fp         TEXT    NOT NULL DEFAULT '',
    changed          BOOLEAN NOT NULL DEFAULT FALSE,
    started_us       BIGINT  NOT NULL,
    duration_ns      BIGINT  NOT NULL,
    input_tokens     BIGINT  NOT NULL DEFAULT 0,
    output_tokens    BIGINT  NOT NULL DEFAULT 0,
    model_latency_ns BIGINT  NOT NULL DEFAULT 0,
    scene            JSON    NOT NULL DEFAULT 'null',
    PRIMARY KEY (task_id, number)
);

CREATE TABLE events (
    task_id TEXT   NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq     BIGINT NOT NULL,
    type    TEXT   NOT NULL,
    step    INTEGER NOT NULL DEFAULT 0,
    time_us BIGINT NOT NULL,
    data    JSON   NOT NULL DEFAULT '{}',
    PRIMARY KEY (task_id, seq)
);

-- +goose Down
DROP TABLE events;
DROP TABLE steps;
DROP TABLE tasks;
