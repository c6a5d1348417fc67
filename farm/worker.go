package farm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"phonepilot/device"
	"phonepilot/lifecycle"
	"phonepilot/storage"
	"phonepilot/storage/postgres"
	"phonepilot/task"
)

// Offer is a device a worker's host has now, with its labels.
type Offer struct {
	Name   string // sim:NAME or adb:SERIAL
	Labels map[string]string
}

// Devices is what a worker runs tasks on (cmd wires simulated phones and
// the phones the adb server sees).
type Devices interface {
	// Scan lists the devices attached now. It is called at every
	// heartbeat: a phone plugged in is offered, one unplugged goes
	// offline.
	Scan(ctx context.Context) ([]Offer, error)
	// Open opens a device for one task; release is called when it ends.
	Open(ctx context.Context, name string) (dev device.Device, release func(), err error)
}

// WorkerConfig tunes a Worker.
type WorkerConfig struct {
	// Name is the worker's name in the farm (unique; the host name when
	// empty). A worker started again with the same name takes its devices
	// back.
	Name string
	// Host is shown beside its devices (os.Hostname when empty: cmd sets it).
	Host string
	// Heartbeat is how often the worker says it is alive, renews its
	// leases, looks for hot-plugged phones and for expired leases (2 s
	// when zero).
	Heartbeat time.Duration
	// Lease is how long a device lease lasts without a heartbeat: a worker
	// silent for that long is taken for dead and its tasks are ended (10 s
	// when zero; at least 3 heartbeats).
	Lease time.Duration
	// RetryInterrupted queues again the tasks of a dead worker instead of
	// ending them interrupted. Off by default: a half-done purchase must
	// not run twice.
	RetryInterrupted bool
	// JobTimeout is the longest a task may run, waits for a person
	// included (River's JobTimeout; 1 h when zero).
	JobTimeout time.Duration
	// Reset, when set, is called before each task on its device (home
	// screen, the task's app force-stopped); last is the task the device
	// ran before in this process (its FinalScene says which app it left in
	// front), nil after a start. A reset that fails fails the task (cause
	// device_gone): it would start where the last one left off.
	Reset func(ctx context.Context, dev device.Device, next storage.Task, last *storage.Task) error
	// Logger receives the worker's lines.
	Logger *slog.Logger
}

func (c *WorkerConfig) defaults() error {
	if c.Name == "" {
		return errors.New("farm: a worker needs a name")
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 2 * time.Second
	}
	if c.Lease <= 0 {
		c.Lease = 10 * time.Second
	}
	if c.Lease < 3*c.Heartbeat {
		return fmt.Errorf("farm: the lease (%s) must last at least 3 heartbeats (%s)", c.Lease, c.Heartbeat)
	}
	if c.JobTimeout <= 0 {
		c.JobTimeout = time.Hour
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Worker runs a host's share of the farm.
type Worker struct {
	cfg     WorkerConfig
	pool    *pgxpool.Pool
	store   *postgres.Store
	svc     *task.Service
	devices Devices
	log     *slog.Logger
	river   *river.Client[pgx.Tx]

	// id names this run of the worker in its leases and commands
	// ("name@host:pid"): a worker killed and started again at once is
	// another holder, so its predecessor's leases are not renewed by it.
	id       string
	healthy  atomic.Bool   // the last heartbeat reached the database in time
	claimNow chan struct{} // look for "any" tasks now

	mu       sync.Mutex
	devs     map[string]*workerDevice
	running  map[string]runningTask // by task ID
	inFlight map[int64]bool         // commands being carried out
}

// runningTask is a task this worker runs.
type runningTask struct {
	stop   context.CancelCauseFunc
	leased time.Time // when its lease was taken
}

type workerDevice struct {
	Offer
	queue  string
	online bool
	lock   chan struct{} // one task at a time in this process
	last   *storage.Task // the task it ran last (under lock)
}

// errLeaseLost ends a task whose lease this worker could not renew.
var errLeaseLost = errors.New("the worker lost its device lease (not renewed in time: the database was out of reach, or the worker too slow)")

// NewWorker builds a worker. svc runs its tasks (RunQueued); it must not be
// Started (the farm recovers, not the service).
func NewWorker(cfg WorkerConfig, pool *pgxpool.Pool, store *postgres.Store, svc *task.Service, devices Devices) (*Worker, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if pool == nil || store == nil || svc == nil || devices == nil {
		return nil, errors.New("farm: a worker needs a pool, a store, a task service and devices")
	}
	return &Worker{cfg: cfg, id: cfg.Name + "@" + svc.Owner(), pool: pool, store: store, svc: svc, devices: devices, log: cfg.Logger,
		claimNow: make(chan struct{}, 1), devs: map[string]*workerDevice{},
		running: map[string]runningTask{}, inFlight: map[int64]bool{}}, nil
}

// Run registers the worker and its devices and works until ctx ends; then
// its running tasks end interrupted, its devices go offline and its leases
// are let go.
func (w *Worker) Run(ctx context.Context) error {
	if err := w.register(ctx); err != nil {
		return err
	}
	offers, err := w.devices.Scan(ctx)
	if err != nil {
		return fmt.Errorf("farm: list devices: %w", err)
	}
	queues := map[string]river.QueueConfig{
		// A queue of its own, so that the client starts with no device.
		"worker-" + QueueName(w.cfg.Name)[4:]: {MaxWorkers: 1},
	}
	w.mu.Lock()
	for _, o := range offers {
		d := w.addDeviceLocked(o)
		queues[d.queue] = river.QueueConfig{MaxWorkers: 1}
	}
	w.mu.Unlock()
	if err := w.saveDevices(ctx); err != nil {
		return err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(w.work))
	rc, err := river.NewClient(riverpgxv5.New(w.pool), &river.Config{
		ID:                   "phonepilot-" + QueueName(w.cfg.Name)[4:] + "-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36),
		Queues:               queues,
		Workers:              workers,
		JobTimeout:           w.cfg.JobTimeout,
		RescueStuckJobsAfter: w.cfg.JobTimeout + time.Hour,
		MaxAttempts:          maxAttempts,
		FetchPollInterval:    max(w.cfg.Heartbeat, 100*time.Millisecond),
		FetchCooldown:        10 * time.Millisecond,
		Logger:               w.log.With("part", "river"),
	})
	if err != nil {
		return fmt.Errorf("farm: river client: %w", err)
	}
	w.river = rc
	if err := rc.Start(ctx); err != nil {
		return fmt.Errorf("farm: river start: %w", err)
	}
	w.healthy.Store(true)
	if _, err := w.reaper().reap(ctx); err != nil {
		w.log.Warn("farm: reap leases", "err", err)
	}
	w.log.Info("farm worker started", "id", w.id, "devices", len(offers), "heartbeat", w.cfg.Heartbeat, "lease", w.cfg.Lease)

	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		listen(ctx, w.pool, w.log, []string{chanCommand, chanAny}, func(ch, payload string) {
			switch {
			case ch == chanCommand && payload == w.id:
				w.commands(ctx)
			case ch == chanAny:
				w.kick()
			}
		}, func() { w.commands(ctx); w.kick() })
	}()
	go func() { defer wg.Done(); w.heartbeats(ctx) }()
	go func() { defer wg.Done(); w.claims(ctx) }()
	<-ctx.Done()

	// Stopping: River cancels the running jobs' contexts, so their tasks
	// end interrupted through the service; then the devices go offline.
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := rc.StopAndCancel(sctx); err != nil {
		w.log.Warn("farm: river stop", "err", err)
	}
	wg.Wait()
	_, _ = w.pool.Exec(sctx, "UPDATE farm_devices SET online = false WHERE worker = $1", w.cfg.Name)
	_, _ = w.pool.Exec(sctx, "DELETE FROM farm_leases WHERE worker = $1", w.id)
	w.log.Info("farm worker stopped", "worker", w.cfg.Name)
	return nil
}

func (w *Worker) reaper() *reaper {
	return &reaper{pool: w.pool, store: w.store, river: w.river, log: w.log, kick: w.kick}
}

func (w *Worker) kick() {
	select {
	case w.claimNow <- struct{}{}:
	default:
	}
}

func (w *Worker) register(ctx context.Context) error {
	_, err := w.pool.Exec(ctx, `INSERT INTO farm_workers (name, host, owner, started, heartbeat, lease_ms, retry)
		VALUES ($1, $2, $3, now(), now(), $4, $5)
		ON CONFLICT (name) DO UPDATE SET host = excluded.host, owner = excluded.owner, started = now(), heartbeat = now(),
		lease_ms = excluded.lease_ms, retry = excluded.retry`,
		w.cfg.Name, w.cfg.Host, w.svc.Owner(), w.cfg.Lease.Milliseconds(), w.cfg.RetryInterrupted)
	if err != nil {
		return fmt.Errorf("farm: register worker %s: %w", w.cfg.Name, err)
	}
	// A predecessor of the same name (killed, started again at once by
	// systemd) is dead: its leases expire now rather than after the lease.
	_, err = w.pool.Exec(ctx, `UPDATE farm_leases SET expires = now() - interval '1 millisecond'
		WHERE split_part(worker, '@', 1) = $1 AND worker <> $2`, w.cfg.Name, w.id)
	if err != nil {
		return fmt.Errorf("farm: register worker %s: %w", w.cfg.Name, err)
	}
	return nil
}

func (w *Worker) addDeviceLocked(o Offer) *workerDevice {
	d, ok := w.devs[o.Name]
	if !ok {
		d = &workerDevice{queue: QueueName(o.Name), lock: make(chan struct{}, 1)}
		w.devs[o.Name] = d
	}
	d.Offer, d.online = o, true
	return d
}

// saveDevices writes the devices this worker has and their state.
func (w *Worker) saveDevices(ctx context.Context) error {
	w.mu.Lock()
	devs := make([]workerDevice, 0, len(w.devs))
	for _, d := range w.devs {
		devs = append(devs, *d)
	}
	w.mu.Unlock()
	batch := &pgx.Batch{}
	for _, d := range devs {
		batch.Queue(`INSERT INTO farm_devices (name, worker, host, queue, labels, online, seen) VALUES ($1, $2, $3, $4, $5, $6, now())
			ON CONFLICT (name) DO UPDATE SET worker = excluded.worker, host = excluded.host, queue = excluded.queue,
			labels = excluded.labels, online = excluded.online, seen = CASE WHEN excluded.online THEN now() ELSE farm_devices.seen END`,
			d.Name, w.cfg.Name, w.cfg.Host, d.queue, labelsJSON(d.Labels), d.online)
	}
	if err := w.pool.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("farm: save devices: %w", err)
	}
	return nil
}

// heartbeats runs one heartbeat every Heartbeat until ctx ends.
func (w *Worker) heartbeats(ctx context.Context) {
	t := time.NewTicker(w.cfg.Heartbeat)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A loaded database or host may take longer than a heartbeat to
		// answer; what counts is reaching it within the lease.
		hctx, cancel := context.WithTimeout(ctx, w.cfg.Lease/2)
		err := w.heartbeat(hctx)
		cancel()
		switch {
		case err == nil:
			if !w.healthy.Load() {
				w.log.Info("farm: the database is back; taking work again", "worker", w.cfg.Name)
			}
			w.healthy.Store(true)
			last = time.Now()
		case ctx.Err() != nil:
			return
		default:
			if w.healthy.Load() {
				w.log.Warn("farm: heartbeat failed; taking no work until the database answers", "worker", w.cfg.Name, "err", err)
			}
			w.healthy.Store(false)
			if time.Since(last) > w.cfg.Lease {
				// Another worker ends these tasks once the leases expire;
				// driving the phone on would be a ghost run.
				w.stopAll(errLeaseLost)
			}
		}
	}
}

// heartbeat says the worker is alive, renews its leases (a task whose lease
// is gone is stopped), offers hot-plugged devices, and ends the tasks of
// workers whose leases expired.
func (w *Worker) heartbeat(ctx context.Context) error {
	if _, err := w.pool.Exec(ctx, "UPDATE farm_workers SET heartbeat = now(), lease_ms = $2 WHERE name = $1", w.cfg.Name, w.cfg.Lease.Milliseconds()); err != nil {
		return err
	}
	// A lease row that is still this worker's is renewed even if it just
	// expired: nobody reaped or took it over yet (both delete or rewrite
	// the row under its lock), so the phone is still ours.
	began := time.Now()
	rows, err := w.pool.Query(ctx, `UPDATE farm_leases SET expires = now() + make_interval(secs => $2 / 1000.0)
		WHERE worker = $1 RETURNING task_id`, w.id, w.cfg.Lease.Milliseconds())
	if err != nil {
		return err
	}
	held := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		held[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	w.mu.Lock()
	for id, rt := range w.running {
		// A lease taken after the renewal began is not in held yet.
		if !held[id] && rt.leased.Before(began) {
			w.log.Warn("farm: a running task lost its lease; stopping it", "task", id)
			rt.stop(errLeaseLost)
		}
	}
	w.mu.Unlock()
	if err := w.rescan(ctx); err != nil {
		w.log.Warn("farm: list devices", "err", err)
	}
	if _, err := w.reaper().reap(ctx); err != nil {
		w.log.Warn("farm: reap leases", "err", err) // the next heartbeat tries again
	}
	w.kick()
	return nil
}

// rescan offers hot-plugged devices and marks unplugged ones offline.
func (w *Worker) rescan(ctx context.Context) error {
	offers, err := w.devices.Scan(ctx)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var added, gone []string
	w.mu.Lock()
	for _, o := range offers {
		seen[o.Name] = true
		d, ok := w.devs[o.Name]
		if !ok || !d.online {
			added = append(added, o.Name)
		}
		w.addDeviceLocked(o)
	}
	for name, d := range w.devs {
		if !seen[name] && d.online {
			d.online = false
			gone = append(gone, name)
		}
	}
	w.mu.Unlock()
	for _, name := range added {
		err := w.river.Queues().Add(QueueName(name), river.QueueConfig{MaxWorkers: 1})
		if err != nil && !errors.As(err, new(*river.QueueAlreadyAddedError)) {
			w.log.Warn("farm: offer device", "device", name, "err", err)
			continue
		}
		w.log.Info("farm: device offered", "device", name)
	}
	for _, name := range gone {
		w.log.Info("farm: device gone; offline until it is back", "device", name)
	}
	return w.saveDevices(ctx)
}

// stopAll stops every running task of this worker.
func (w *Worker) stopAll(why error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, rt := range w.running {
		rt.stop(why)
	}
}

// claims moves "any" tasks into the queues of this worker's free devices
// whose labels match, oldest first, whenever kicked.
func (w *Worker) claims(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.claimNow:
		}
		if !w.healthy.Load() {
			continue
		}
		w.mu.Lock()
		var free []workerDevice
		for _, d := range w.devs {
			if d.online && len(d.lock) == 0 {
				free = append(free, *d)
			}
		}
		w.mu.Unlock()
		slices.SortFunc(free, func(a, b workerDevice) int { return strings.Compare(a.Name, b.Name) })
		for _, d := range free {
			if err := w.claim(ctx, d); err != nil && ctx.Err() == nil {
				w.log.Warn("farm: take a task for any device", "device", d.Name, "err", err)
			}
		}
	}
}

// claim moves the oldest "any" job that d's labels match into d's queue,
// when d's queue has nothing waiting or running.
func (w *Worker) claim(ctx context.Context, d workerDevice) error {
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		var taskID string
		err := tx.QueryRow(ctx, `WITH c AS (
			SELECT id FROM river_job WHERE queue = $1 AND state = 'available' AND (args->'labels') <@ $2::jsonb
			AND NOT EXISTS (SELECT 1 FROM river_job b WHERE b.queue = $3 AND b.state IN ('available', 'running'))
			AND NOT EXISTS (SELECT 1 FROM farm_leases l WHERE l.device = $4 AND l.expires > now())
			ORDER BY priority, scheduled_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
			UPDATE river_job j SET queue = $3, args = jsonb_set(j.args, '{device}', to_jsonb($4::text))
			FROM c WHERE j.id = c.id RETURNING j.args->>'task_id'`,
			anyQueue, labelsJSON(d.Labels), d.queue, d.Name).Scan(&taskID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE tasks SET device = $2 WHERE id = $1 AND status = 'queued'", taskID, d.Name); err != nil {
			return err
		}
		// River's producers wake on this, as on an insert.
		_, err = tx.Exec(ctx, `SELECT pg_notify(current_schema() || '.river_insert', json_build_object('queue', $1::text)::text)`, d.queue)
		return err
	})
}

// work is River's Work for a task's job: it takes the device (this
// process's lock, then the farm's lease) and runs the task through the
// task service.
func (w *Worker) work(ctx context.Context, job *river.Job[jobArgs]) error {
	a := job.Args
	if !w.healthy.Load() {
		return river.JobSnooze(w.cfg.Heartbeat)
	}
	t, err := w.store.Task(ctx, a.TaskID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if t.Status != lifecycle.Queued {
		return nil // cancelled before it started
	}
	w.mu.Lock()
	d := w.devs[a.Device]
	w.mu.Unlock()
	if d == nil || !d.online {
		// The phone went away after the job was fetched: wait for it.
		return river.JobSnooze(w.cfg.Heartbeat)
	}
	select {
	case d.lock <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-d.lock; w.kick() }()
	leased := time.Now()
	held, err := w.lease(ctx, d.Name, t.ID, job.ID)
	if err != nil {
		return err
	}
	if !held {
		// Another host holds this phone (two workers offer the same
		// device): the lease, not River, decides.
		w.log.Warn("farm: device leased by another worker; waiting", "device", d.Name, "task", t.ID)
		return river.JobSnooze(w.cfg.Heartbeat)
	}
	defer func() {
		_, err := w.pool.Exec(context.WithoutCancel(ctx), "DELETE FROM farm_leases WHERE device = $1 AND task_id = $2 AND worker = $3", d.Name, t.ID, w.id)
		if err != nil {
			w.log.Warn("farm: release lease (it expires by itself)", "device", d.Name, "err", err)
		}
	}()
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	w.mu.Lock()
	w.running[t.ID] = runningTask{stop: stop, leased: leased}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.running, t.ID)
		w.mu.Unlock()
	}()
	dev, release, err := w.devices.Open(runCtx, d.Name)
	if err == nil && w.cfg.Reset != nil {
		if rerr := w.cfg.Reset(runCtx, dev, t, d.last); rerr != nil {
			release()
			err = fmt.Errorf("reset before the task: %w", rerr)
		}
	}
	if err != nil {
		w.failStart(ctx, t.ID, d.Name, err)
		return nil
	}
	defer release()
	final, res, err := w.svc.RunQueued(runCtx, t.ID, d.Name, dev)
	if err != nil && !errors.As(err, new(*storage.ConflictError)) {
		w.log.Error("farm: run task", "task", t.ID, "err", err)
	}
	if err == nil {
		d.last = &final
	}
	w.log.Debug("farm: task done", "task", t.ID, "device", d.Name, "status", res.Status)
	return nil
}

// failStart fails a task whose device could not be opened or reset.
func (w *Worker) failStart(ctx context.Context, id, dev string, cause error) {
	now := time.Now()
	reason := fmt.Sprintf("device %s: %v", dev, cause)
	if _, err := w.store.UpdateStatus(ctx, id, storage.Change{From: []lifecycle.Status{lifecycle.Queued}, To: lifecycle.Failed,
		Cause: lifecycle.CauseDeviceGone, Reason: reason, At: now, Owner: w.svc.Owner()}); err != nil {
		w.log.Warn("farm: fail task", "task", id, "err", err)
		return
	}
	appendStatus(ctx, w.store, w.log, id, lifecycle.Failed, lifecycle.CauseDeviceGone, reason, now)
}

// lease takes the device's lease for the task: a row no live worker holds
// (none, or expired). It reports whether it got it.
func (w *Worker) lease(ctx context.Context, dev, taskID string, job int64) (bool, error) {
	tag, err := w.pool.Exec(ctx, `INSERT INTO farm_leases (device, worker, task_id, job_id, acquired, expires)
		VALUES ($1, $2, $3, $4, now(), now() + make_interval(secs => $5 / 1000.0))
		ON CONFLICT (device) DO UPDATE SET worker = excluded.worker, task_id = excluded.task_id, job_id = excluded.job_id,
		acquired = excluded.acquired, expires = excluded.expires WHERE farm_leases.expires < now()`,
		dev, w.id, taskID, job, w.cfg.Lease.Milliseconds())
	if err != nil {
		return false, fmt.Errorf("farm: lease %s: %w", dev, err)
	}
	return tag.RowsAffected() == 1, nil
}

// commands carries out the commands fronts left for this worker.
func (w *Worker) commands(ctx context.Context) {
	rows, err := w.pool.Query(ctx, `SELECT id, task_id, kind, by_whom, note, answer FROM farm_commands WHERE worker = $1 AND NOT done ORDER BY id`, w.id)
	if err != nil {
		w.log.Warn("farm: read commands", "err", err)
		return
	}
	type cmd struct {
		id   int64
		task string
		c    task.Command
	}
	var todo []cmd
	for rows.Next() {
		var c cmd
		var kind string
		if err := rows.Scan(&c.id, &c.task, &kind, &c.c.By, &c.c.Note, &c.c.Text); err != nil {
			break
		}
		c.c.Kind = task.CommandKind(kind)
		todo = append(todo, c)
	}
	rows.Close()
	for _, c := range todo {
		w.mu.Lock()
		busy := w.inFlight[c.id]
		w.inFlight[c.id] = true
		w.mu.Unlock()
		if busy {
			continue
		}
		go func() {
			defer func() {
				w.mu.Lock()
				delete(w.inFlight, c.id)
				w.mu.Unlock()
			}()
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			err := w.svc.Apply(actx, c.task, c.c)
			msg, conflict := "", false
			if err != nil {
				msg = err.Error()
				conflict = errors.Is(err, task.ErrConflict) || errors.As(err, new(*storage.ConflictError)) || errors.Is(err, storage.ErrNotFound)
			}
			_, err = w.pool.Exec(actx, `WITH u AS (UPDATE farm_commands SET done = true, conflict = $2, error = $3 WHERE id = $1)
				SELECT pg_notify($4, $1::text)`, c.id, conflict, msg, chanDone)
			if err != nil {
				w.log.Warn("farm: answer command", "command", c.id, "err", err)
			}
		}()
	}
}
