-- +goose Up
CREATE TABLE tasks (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT    NOT NULL UNIQUE,
    goal             TEXT    NOT NULL,
    device           TEXT    NOT NULL,
    planner          TEXT    NOT NULL,
    max_steps        INTEGER NOT NULL DEFAULT 0,
    status           TEXT    NOT NULL,
    reason           TEXT    NOT NULL DEFAULT '',
    created_us       INTEGER NOT NULL,
    started_us       INTEGER,
    finished_us      INTEGER,
    input_tokens     INTEGER NOT NULL DEFAULT 0,
    output_tokens    INTEGER NOT NULL DEFAULT 0,
    model_latency_ns INTEGER NOT NULL DEFAULT 0,
    config           TEXT    NOT NULL DEFAULT '{}',
    last_event       INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX tasks_status_seq ON tasks (status, seq);

CREATE TABLE steps (
    task_id          TEXT    NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    number           INTEGER NOT NULL,
    intent           TEXT    NOT NULL,
    tool             TEXT    NOT NULL,
    args             TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    reason           TEXT    NOT NULL DEFAULT '',
    attempts         TEXT    NOT NULL,
    before_fp        TEXT    NOT NULL DEFAULT '',
    after_fp         TEXT    NOT NULL DEFAULT '',
    changed          INTEGER NOT NULL DEFAULT 0,
    started_us       INTEGER NOT NULL,
    duration_ns      INTEGER NOT NULL,
    input_tokens     INTEGER NOT NULL DEFAULT 0,
    output_tokens    INTEGER NOT NULL DEFAULT 0,
    model_latency_ns INTEGER NOT NULL DEFAULT 0,
    scene            TEXT    NOT NULL DEFAULT 'null',
    PRIMARY KEY (task_id, number)
);

CREATE TABLE events (
    task_id TEXT    NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    type    TEXT    NOT NULL,
    step    INTEGER NOT NULL DEFAULT 0,
    time_us INTEGER NOT NULL,
    data    TEXT    NOT NULL DEFAULT '{}',
    PRIMARY KEY (task_id, seq)
);

-- +goose Down
DROP TABLE events;
DROP TABLE steps;
DROP TABLE tasks;
