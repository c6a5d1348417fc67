-- +goose Up
-- The device farm (package farm): workers, their devices, the per-device
-- leases that keep two tasks off one phone across hosts, and the commands
-- (cancel, approve, deny, answer) a front hands to the worker that runs a
-- task. Times are the database's (now()), so that hosts with skewed clocks
-- agree on when a lease expired.
CREATE TABLE farm_workers (
    name       TEXT        PRIMARY KEY,
    host       TEXT        NOT NULL,
    owner      TEXT        NOT NULL,
    started    TIMESTAMPTZ NOT NULL,
    heartbeat  TIMESTAMPTZ NOT NULL,
    lease_ms   BIGINT      NOT NULL,
    -- the worker's retry_interrupted: what becomes of its tasks if it dies
    retry      BOOLEAN     NOT NULL DEFAULT FALSE
);

CREATE TABLE farm_devices (
    name      TEXT        PRIMARY KEY,
    worker    TEXT        NOT NULL,
    host      TEXT        NOT NULL,
    queue     TEXT        NOT NULL,
    labels    JSONB       NOT NULL DEFAULT '{}',
    online    BOOLEAN     NOT NULL,
    seen      TIMESTAMPTZ NOT NULL
);

CREATE TABLE farm_leases (
    device    TEXT        PRIMARY KEY,
    worker    TEXT        NOT NULL,
    task_id   TEXT        NOT NULL,
    job_id    BIGINT      NOT NULL,
    acquired  TIMESTAMPTZ NOT NULL,
    expires   TIMESTAMPTZ NOT NULL
);
CREATE INDEX farm_leases_task ON farm_leases (task_id);

CREATE TABLE farm_commands (
    id        BIGSERIAL   PRIMARY KEY,
    task_id   TEXT        NOT NULL,
    worker    TEXT        NOT NULL,
    kind      TEXT        NOT NULL,
    by_whom   TEXT        NOT NULL DEFAULT '',
    note      TEXT        NOT NULL DEFAULT '',
    answer    TEXT        NOT NULL DEFAULT '',
    created   TIMESTAMPTZ NOT NULL DEFAULT now(),
    done      BOOLEAN     NOT NULL DEFAULT FALSE,
    conflict  BOOLEAN     NOT NULL DEFAULT FALSE,
    error     TEXT        NOT NULL DEFAULT ''
);
CREATE INDEX farm_commands_pending ON farm_commands (worker) WHERE NOT done;

-- Every write of a task's events or row wakes the fronts that LISTEN, so
-- their event streams follow a task that runs on another host at once.
-- +goose StatementBegin
CREATE FUNCTION phonepilot_event_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('phonepilot_task', NEW.task_id);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION phonepilot_task_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('phonepilot_task', NEW.id);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION phonepilot_event_notify();
CREATE TRIGGER tasks_notify AFTER UPDATE ON tasks FOR EACH ROW EXECUTE FUNCTION phonepilot_task_notify();

-- +goose Down
DROP TRIGGER tasks_notify ON tasks;
DROP TRIGGER events_notify ON events;
DROP FUNCTION phonepilot_task_notify();
DROP FUNCTION phonepilot_event_notify();
DROP TABLE farm_commands;
DROP TABLE farm_leases;
DROP TABLE farm_devices;
DROP TABLE farm_workers;
