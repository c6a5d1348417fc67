package farm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"phonepilot/lifecycle"
	"phonepilot/storage"
	"phonepilot/storage/postgres"
	"phonepilot/task"
)

// reaper ends the tasks of dead workers. Every worker runs it at each
// heartbeat and every front once a second, so a farm whose workers all died
// still ends their tasks; SKIP LOCKED and the conditional delete make
// exactly one of them take each expired lease.
type reaper struct {
	pool  *pgxpool.Pool
	store *postgres.Store
	river *river.Client[pgx.Tx]
	log   *slog.Logger
	kick  func() // a task was queued again
}

// reapReason is the reason of a task whose worker died.
func reapReason(worker, dev string) string {
	return fmt.Sprintf("worker %s stopped heart-beating; its lease on %s expired", worker, dev)
}

// reap takes the expired leases and ends (or queues again) their tasks. It
// returns how many it took.
func (r *reaper) reap(ctx context.Context) (int, error) {
	type expired struct {
		dev, worker, id string
		job             int64
		retry, queued   bool
		args            []byte
	}
	var found []expired
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `WITH gone AS (DELETE FROM farm_leases WHERE device IN (
			SELECT device FROM farm_leases WHERE expires < now() FOR UPDATE SKIP LOCKED)
			RETURNING device, worker, task_id, job_id)
			SELECT g.device, g.worker, g.task_id, g.job_id, COALESCE(w.retry, false)
			FROM gone g LEFT JOIN farm_workers w ON w.name = split_part(g.worker, '@', 1)`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var e expired
			if err := rows.Scan(&e.dev, &e.worker, &e.id, &e.job, &e.retry); err != nil {
				rows.Close()
				return err
			}
			found = append(found, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for i, e := range found {
			var status string
			err := tx.QueryRow(ctx, "SELECT status FROM tasks WHERE id = $1", e.id).Scan(&status)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			if lifecycle.Status(status) == lifecycle.Queued {
				// The worker died after taking the lease, before the task
				// started: the job is given back, the task runs later.
				found[i].queued = true
				if _, err := tx.Exec(ctx, `UPDATE river_job SET state = 'available', scheduled_at = now()
					WHERE id = $1 AND state = 'running'`, e.job); err != nil {
					return err
				}
				continue
			}
			// The dead worker's job row: nobody will finish it, and River's
			// rescuer must not run it again behind the farm's back.
			err = tx.QueryRow(ctx, "DELETE FROM river_job WHERE id = $1 RETURNING args", e.job).Scan(&found[i].args)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("farm: reap leases: %w", err)
	}
	for _, e := range found {
		if e.queued {
			r.log.Warn("farm: a dead worker's job given back: its task had not started", "task", e.id, "dead_worker", e.worker)
			continue
		}
		r.endOrRequeue(ctx, e.id, e.worker, e.dev, e.retry, e.args)
	}
	if err := r.rescue(ctx); err != nil {
		return len(found), err
	}
	if err := r.failDiscarded(ctx); err != nil {
		return len(found), err
	}
	return len(found), nil
}

// discardedReason is the reason of a task whose job River gave up on.
func discardedReason(attempts int, last string) string {
	if last == "" {
		last = "no error recorded"
	}
	return fmt.Sprintf("the farm could not start the task: its job failed %d times before the task started (last: %s); nothing ran on the phone, it is safe to submit again",
		attempts, last)
}

// failDiscarded ends the tasks whose job River discarded: a worker's Work
// failed maxAttempts times before the task started (the database erring
// under it), so River will never run the job again and the task would stay
// queued forever. It fails with cause interrupted, not step_failed: no step
// ran; like a task whose process died, the farm, not the task, could not
// carry it. The conditional change from queued makes exactly one reaper
// end each.
func (r *reaper) failDiscarded(ctx context.Context) error {
	rows, err := r.pool.Query(ctx, `SELECT t.id, j.attempt, COALESCE(j.errors[array_length(j.errors, 1)]->>'error', '')
		FROM river_job j JOIN tasks t ON t.id = j.args->>'task_id'
		WHERE j.state = 'discarded' AND j.kind = 'phonepilot_task' AND t.status = 'queued'
		ORDER BY j.id LIMIT 100`)
	if err != nil {
		return fmt.Errorf("farm: find discarded jobs: %w", err)
	}
	type discarded struct {
		id       string
		attempts int
		last     string
	}
	var found []discarded
	for rows.Next() {
		var d discarded
		if err := rows.Scan(&d.id, &d.attempts, &d.last); err != nil {
			rows.Close()
			return fmt.Errorf("farm: find discarded jobs: %w", err)
		}
		found = append(found, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("farm: find discarded jobs: %w", err)
	}
	for _, d := range found {
		now := time.Now()
		reason := discardedReason(d.attempts, d.last)
		_, err := r.store.UpdateStatus(ctx, d.id, storage.Change{From: []lifecycle.Status{lifecycle.Queued}, To: lifecycle.Failed,
			Cause: lifecycle.CauseInterrupted, Reason: reason, At: now})
		if errors.As(err, new(*storage.ConflictError)) {
			continue // cancelled meanwhile, or another reaper ended it
		}
		if err != nil {
			return fmt.Errorf("farm: fail a task River gave up on: %w", err)
		}
		appendStatus(ctx, r.store, r.log, d.id, lifecycle.Failed, lifecycle.CauseInterrupted, reason, now)
		r.log.Error("farm: task failed: its job failed before it started, River gave up", "task", d.id, "attempts", d.attempts, "last_error", d.last)
	}
	return nil
}

// rescue gives back the jobs of tasks that never started because their
// worker died between River handing it the job and it taking the lease (the
// job is River's "running", the task still queued, nobody holds a lease for
// it): they become available again, in their device's queue. The lease and
// the task's conditional start keep a slow but live worker from running
// one twice. And "any" tasks moved into the queue of a device that went
// offline go back to the shared queue, for another device to take.
func (r *reaper) rescue(ctx context.Context) error {
	_, err := r.pool.Exec(ctx, `UPDATE river_job j SET state = 'available', scheduled_at = now()
		WHERE j.state = 'running' AND j.kind = 'phonepilot_task'
		AND j.attempted_at < now() - (SELECT make_interval(secs => COALESCE(max(lease_ms), 10000) / 1000.0) FROM farm_workers)
		AND EXISTS (SELECT 1 FROM tasks t WHERE t.id = j.args->>'task_id' AND t.status = 'queued')
		AND NOT EXISTS (SELECT 1 FROM farm_leases l WHERE l.task_id = j.args->>'task_id')`)
	if err != nil {
		return fmt.Errorf("farm: rescue jobs: %w", err)
	}
	_, err = r.pool.Exec(ctx, `WITH moved AS (UPDATE river_job j SET queue = $1, args = jsonb_set(j.args, '{device}', '""')
		WHERE j.state = 'available' AND j.kind = 'phonepilot_task' AND (j.args->>'any')::boolean
		AND j.queue IN (SELECT d.queue FROM farm_devices d JOIN farm_workers w ON w.name = d.worker
			WHERE NOT d.online OR w.heartbeat < now() - make_interval(secs => w.lease_ms / 1000.0))
		RETURNING j.args->>'task_id' AS id)
		UPDATE tasks SET device = $2 FROM moved WHERE tasks.id = moved.id AND tasks.status = 'queued'`, anyQueue, AnyDevice)
	if err != nil {
		return fmt.Errorf("farm: rescue jobs: %w", err)
	}
	// Carried-out commands are kept an hour, for whoever looks into one.
	if _, err := r.pool.Exec(ctx, "DELETE FROM farm_commands WHERE done AND created < now() - interval '1 hour'"); err != nil {
		return fmt.Errorf("farm: forget old commands: %w", err)
	}
	return nil
}

// endOrRequeue ends a dead worker's task as interrupted, or queues it
// again when that worker had retry_interrupted on.
func (r *reaper) endOrRequeue(ctx context.Context, id, worker, dev string, retry bool, args []byte) {
	now := time.Now()
	reason := reapReason(worker, dev)
	active := lifecycle.ActiveStatuses()
	var a jobArgs
	if retry && json.Unmarshal(args, &a) == nil && a.TaskID == id {
		reason += "; queued again (retry_interrupted)"
		if _, err := r.store.UpdateStatus(ctx, id, storage.Change{From: active, To: lifecycle.Queued, Reason: reason, At: now}); err != nil {
			if !errors.As(err, new(*storage.ConflictError)) {
				r.log.Warn("farm: queue a dead worker's task again", "task", id, "err", err)
			}
			return
		}
		queue := QueueName(a.Device)
		if a.Any {
			a.Device, queue = "", anyQueue
			if _, err := r.pool.Exec(ctx, "UPDATE tasks SET device = $2 WHERE id = $1", id, AnyDevice); err != nil {
				r.log.Warn("farm: queue a dead worker's task again", "task", id, "err", err)
			}
		}
		if _, err := r.river.Insert(ctx, a, &river.InsertOpts{Queue: queue, MaxAttempts: maxAttempts}); err != nil {
			r.log.Error("farm: queue a dead worker's task again", "task", id, "err", err)
		}
		appendStatus(ctx, r.store, r.log, id, lifecycle.Queued, lifecycle.CauseNone, reason, now)
		r.log.Warn("farm: task queued again: its worker died", "task", id, "dead_worker", worker, "device", dev)
		if r.kick != nil {
			r.kick()
		}
		return
	}
	_, err := r.store.UpdateStatus(ctx, id, storage.Change{From: active, To: lifecycle.Interrupted,
		Cause: lifecycle.CauseInterrupted, Reason: reason, At: now})
	if errors.As(err, new(*storage.ConflictError)) {
		r.finishRecord(ctx, id)
		return
	}
	if err != nil {
		r.log.Error("farm: interrupt a dead worker's task", "task", id, "err", err)
		return
	}
	appendStatus(ctx, r.store, r.log, id, lifecycle.Interrupted, lifecycle.CauseInterrupted, reason, now)
	r.log.Warn("farm: task interrupted: its worker died", "task", id, "dead_worker", worker, "device", dev)
}

// finishRecord gives a task that ended, but whose worker died between
// writing its end and its final status event, that event: a stream of it
// then ends, and its record says when it ended.
func (r *reaper) finishRecord(ctx context.Context, id string) {
	t, err := r.store.Task(ctx, id)
	if err != nil || !t.Status.Terminal() || t.Finished == nil {
		return
	}
	evs, err := r.store.Events(ctx, id, 0, 0)
	if err != nil {
		return
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type != lifecycle.EventStatus {
			continue
		}
		var d task.StatusData
		if json.Unmarshal(evs[i].Data, &d) == nil && d.Status.Terminal() {
			return
		}
		break
	}
	appendStatus(ctx, r.store, r.log, id, t.Status, t.Cause, t.Reason, *t.Finished)
}

// appendStatus records a status event the farm wrote itself.
func appendStatus(ctx context.Context, store *postgres.Store, log *slog.Logger, id string, st lifecycle.Status, cause lifecycle.Cause, reason string, at time.Time) {
	data, _ := json.Marshal(task.StatusData{Status: st, Cause: cause, Reason: reason})
	if _, err := store.AppendEvent(ctx, storage.Event{TaskID: id, Type: lifecycle.EventStatus, Time: at, Data: data}); err != nil {
		log.Error("farm: record status", "task", id, "err", err)
	}
}
