package farm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"phonepilot/storage"
	"phonepilot/storage/postgres"
	"phonepilot/task"
)

// Front is a farm's front end (`phonepilot serve --db postgres://…`): the
// task.Queue of its task service. Any number of fronts may serve the same
// farm; none of them runs tasks.
type Front struct {
	pool   *pgxpool.Pool
	store  *postgres.Store
	river  *river.Client[pgx.Tx]
	log    *slog.Logger
	notify func(taskID string)

	// CommandTimeout bounds how long a cancel or a decision waits for the
	// worker that runs the task to carry it out.
	CommandTimeout time.Duration

	mu    sync.Mutex
	waits map[int64]chan struct{} // commands waiting to be carried out
}

var _ task.Queue = (*Front)(nil)

// NewFront builds a front over an open pool and store. notify is called
// with the ID of each task some process wrote (the task service's Notify,
// set later with SetNotify when the service is built after the front).
func NewFront(pool *pgxpool.Pool, store *postgres.Store, log *slog.Logger) (*Front, error) {
	if pool == nil || store == nil {
		return nil, errors.New("farm: a pool and a store are required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: log.With("part", "river")})
	if err != nil {
		return nil, fmt.Errorf("farm: river client: %w", err)
	}
	return &Front{pool: pool, store: store, river: rc, log: log, notify: func(string) {},
		CommandTimeout: 10 * time.Second, waits: map[int64]chan struct{}{}}, nil
}

// SetNotify sets what is told of tasks written elsewhere.
func (f *Front) SetNotify(fn func(taskID string)) { f.notify = fn }

// Run listens for the farm's notifications until ctx ends: writes of a
// task by any process wake its watches here; carried out commands wake
// their waiters.
func (f *Front) Run(ctx context.Context) {
	go f.reapEvery(ctx, time.Second)
	listen(ctx, f.pool, f.log, []string{chanTask, chanDone}, func(ch, payload string) {
		switch ch {
		case chanTask:
			f.notify(payload)
		case chanDone:
			id, err := strconv.ParseInt(payload, 10, 64)
			if err != nil {
				return
			}
			f.mu.Lock()
			if w, ok := f.waits[id]; ok {
				close(w)
				delete(f.waits, id)
			}
			f.mu.Unlock()
		}
	}, func() {
		// Reconnected: whatever was missed is found by the waiters' and
		// watches' own backstop reads.
		f.mu.Lock()
		for id, w := range f.waits {
			close(w)
			delete(f.waits, id)
		}
		f.mu.Unlock()
	})
}

// reapEvery ends dead workers' tasks every d, so that a farm whose
// workers all died still does.
func (f *Front) reapEvery(ctx context.Context, d time.Duration) {
	r := &reaper{pool: f.pool, store: f.store, river: f.river, log: f.log}
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := r.reap(ctx); err != nil && ctx.Err() == nil {
			f.log.Warn("farm: reap leases", "err", err)
		}
	}
}

// Create stores the task and its River job in one transaction. A task for
// a named device goes to that device's queue; one for "any" waits in the
// shared queue until a worker with a free matching device takes it.
func (f *Front) Create(ctx context.Context, t storage.Task, labels map[string]string) (storage.Task, error) {
	if err := CheckLabels(labels); err != nil {
		return storage.Task{}, err
	}
	if len(labels) > 0 && t.Device != AnyDevice {
		return storage.Task{}, fmt.Errorf("%w: labels go with device %q; a named device is that device", ErrBadLabels, AnyDevice)
	}
	tx, err := f.pool.Begin(ctx)
	if err != nil {
		return storage.Task{}, fmt.Errorf("farm: submit: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if t.Device == AnyDevice {
		if err := routable(ctx, tx, labels); err != nil {
			return storage.Task{}, err
		}
	}
	t, err = f.store.CreateTaskTx(ctx, tx, t)
	if err != nil {
		return storage.Task{}, err
	}
	args := jobArgs{TaskID: t.ID, Device: t.Device, Labels: labels}
	queue := QueueName(t.Device)
	if t.Device == AnyDevice {
		args.Device, args.Any, queue = "", true, anyQueue
		if args.Labels == nil {
			args.Labels = map[string]string{}
		}
	}
	if _, err := f.river.InsertTx(ctx, tx, args, &river.InsertOpts{Queue: queue, MaxAttempts: maxAttempts}); err != nil {
		return storage.Task{}, fmt.Errorf("farm: queue the task: %w", err)
	}
	if args.Any {
		if _, err := tx.Exec(ctx, "SELECT pg_notify($1, $2)", chanAny, t.ID); err != nil {
			return storage.Task{}, fmt.Errorf("farm: submit: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return storage.Task{}, fmt.Errorf("farm: submit: %w", err)
	}
	return f.store.Task(ctx, t.ID)
}

// routable refuses an "any" task that no device of the farm, online or
// offline, could take: queued, it would wait forever. One whose labels only
// offline devices have is accepted: it waits for one to come back. The
// refusal wraps task.ErrUnroutable and says what labels the farm has.
func routable(ctx context.Context, tx pgx.Tx, want map[string]string) error {
	var ok bool
	err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM farm_devices WHERE labels @> $1::jsonb)", labelsJSON(want)).Scan(&ok)
	if err != nil {
		return fmt.Errorf("farm: submit: match labels: %w", err)
	}
	if ok {
		return nil
	}
	have, err := farmLabels(ctx, tx)
	if err != nil {
		return err
	}
	if len(want) == 0 {
		return fmt.Errorf("%w: the farm has no devices yet (no worker registered one; see GET /v1/devices)", task.ErrUnroutable)
	}
	if have == "" {
		have = "none (the farm has no devices yet)"
	}
	return fmt.Errorf("%w: no device of the farm, online or offline, has the labels %s; the farm's devices have %s",
		task.ErrUnroutable, labelList(want), have)
}

// maxLabelValues is how many values of one label a refusal lists.
const maxLabelValues = 12

// farmLabels summarises the labels of the farm's devices: each key with
// the values some device has ("kind=adb|sim locale=en|zh").
func farmLabels(ctx context.Context, tx pgx.Tx) (string, error) {
	rows, err := tx.Query(ctx, `SELECT l.key, array_agg(DISTINCT l.value ORDER BY l.value)
		FROM farm_devices d, jsonb_each_text(d.labels) l GROUP BY l.key ORDER BY l.key`)
	if err != nil {
		return "", fmt.Errorf("farm: submit: list labels: %w", err)
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var (
			k  string
			vs []string
		)
		if err := rows.Scan(&k, &vs); err != nil {
			return "", fmt.Errorf("farm: submit: list labels: %w", err)
		}
		if len(vs) > maxLabelValues {
			vs = append(vs[:maxLabelValues], "…")
		}
		parts = append(parts, k+"="+strings.Join(vs, "|"))
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("farm: submit: list labels: %w", err)
	}
	return strings.Join(parts, " "), nil
}

// labelList writes labels as k=v, sorted by key.
func labelList(l map[string]string) string {
	parts := make([]string, 0, len(l))
	for _, k := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, k+"="+l[k])
	}
	return strings.Join(parts, " ")
}

// maxAttempts of a task's job: a job is only retried when a worker's Work
// failed before the task started (a task runs at most once: its status
// moves from queued to running exactly once).
const maxAttempts = 5

// Command hands c to the worker that holds the task's device lease, and
// waits until it was carried out there.
func (f *Front) Command(ctx context.Context, id string, c task.Command) error {
	ctx, cancel := context.WithTimeout(ctx, f.CommandTimeout)
	defer cancel()
	var worker string
	err := f.pool.QueryRow(ctx, "SELECT worker FROM farm_leases WHERE task_id = $1", id).Scan(&worker)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("task %s runs on no worker of the farm now (its worker stopped heart-beating?): %w", id, task.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("farm: %s task %s: %w", c.Kind, id, err)
	}
	var cmdID int64
	err = f.pool.QueryRow(ctx, `WITH c AS (INSERT INTO farm_commands (task_id, worker, kind, by_whom, note, answer)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id) SELECT id FROM c, pg_notify($7, $2)`,
		id, worker, string(c.Kind), c.By, c.Note, c.Text, chanCommand).Scan(&cmdID)
	if err != nil {
		return fmt.Errorf("farm: %s task %s: %w", c.Kind, id, err)
	}
	for {
		f.mu.Lock()
		w, ok := f.waits[cmdID]
		if !ok {
			w = make(chan struct{})
			f.waits[cmdID] = w
		}
		f.mu.Unlock()
		var (
			done, conflict bool
			msg            string
		)
		err := f.pool.QueryRow(ctx, "SELECT done, conflict, error FROM farm_commands WHERE id = $1", cmdID).Scan(&done, &conflict, &msg)
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("farm: %s task %s: %w", c.Kind, id, err)
		}
		if done {
			f.mu.Lock()
			delete(f.waits, cmdID)
			f.mu.Unlock()
			switch {
			case conflict:
				return fmt.Errorf("%s: %w", msg, task.ErrConflict)
			case msg != "":
				return fmt.Errorf("worker %s: %s", worker, msg)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			f.mu.Lock()
			delete(f.waits, cmdID)
			f.mu.Unlock()
			return fmt.Errorf("farm: %s task %s: worker %s did not answer: %w", c.Kind, id, worker, ctx.Err())
		case <-w:
		case <-time.After(time.Second): // backstop for a lost notification
		}
	}
}

// DeviceState is where a farm device is.
type DeviceState string

// Device states.
const (
	StateIdle    DeviceState = "idle"
	StateBusy    DeviceState = "busy"
	StateOffline DeviceState = "offline"
)

// Device is one device of the farm as GET /v1/devices shows it.
type Device struct {
	Name      string            `json:"name"`
	Worker    string            `json:"worker"`
	Host      string            `json:"host"`
	Labels    map[string]string `json:"labels"`
	State     DeviceState       `json:"state"`
	Task      string            `json:"task,omitempty"` // the task holding its lease
	Heartbeat time.Time         `json:"heartbeat"`      // its worker's last heartbeat
}

// Devices lists every device of the farm, by name. A device is offline
// when its worker no longer sees it or stopped heart-beating (for longer
// than its lease), busy while a task holds its lease, idle otherwise.
func (f *Front) Devices(ctx context.Context) ([]Device, error) {
	return listDevices(ctx, f.pool, "")
}

// Device returns one device of the farm; ok is false when no worker ever
// offered it.
func (f *Front) Device(ctx context.Context, name string) (Device, bool, error) {
	ds, err := listDevices(ctx, f.pool, name)
	if err != nil || len(ds) == 0 {
		return Device{}, false, err
	}
	return ds[0], true, nil
}

func listDevices(ctx context.Context, pool *pgxpool.Pool, only string) ([]Device, error) {
	rows, err := pool.Query(ctx, `SELECT d.name, d.worker, d.host, d.labels, d.online, w.heartbeat,
		w.heartbeat > now() - make_interval(secs => w.lease_ms / 1000.0) AS alive,
		COALESCE(l.task_id, '') FROM farm_devices d JOIN farm_workers w ON w.name = d.worker
		LEFT JOIN farm_leases l ON l.device = d.name AND l.expires > now()
		WHERE $1 = '' OR d.name = $1 ORDER BY d.name`, only)
	if err != nil {
		return nil, fmt.Errorf("farm: list devices: %w", err)
	}
	defer rows.Close()
	out := []Device{}
	for rows.Next() {
		var (
			d             Device
			online, alive bool
		)
		if err := rows.Scan(&d.Name, &d.Worker, &d.Host, &d.Labels, &online, &d.Heartbeat, &alive, &d.Task); err != nil {
			return nil, fmt.Errorf("farm: list devices: %w", err)
		}
		switch {
		case !online || !alive:
			d.State = StateOffline
		case d.Task != "":
			d.State = StateBusy
		default:
			d.State = StateIdle
		}
		if d.Labels == nil {
			d.Labels = map[string]string{}
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("farm: list devices: %w", err)
	}
	return out, nil
}
