// Package farm runs phonepilot's tasks across many hosts that share one
// PostgreSQL database, on River (github.com/riverqueue/river): a Worker on
// each host registers its devices with their labels, heartbeats, and runs
// the tasks queued for them through the task service (task.Service.
// RunQueued: the same recorder, statuses and events as a single process);
// a Front (any number, all equal) stores a task and its job in one
// transaction, hands cancels and decisions to the worker that runs a task,
// and wakes its event streams from PostgreSQL's LISTEN/NOTIFY.
//
// A named device's tasks go to that device's River queue, which only the
// worker that owns the device lists. A task for "any" device with labels
// waits in one shared queue that nobody lists; a worker with a free device
// whose labels match moves the oldest such job into that device's queue
// (FOR UPDATE SKIP LOCKED, so two workers never take the same one). River's
// per-queue worker limit is per client, so a per-device lease row, renewed
// by the heartbeat, is what keeps two tasks off one phone across hosts; a
// lease that is not renewed expires and any worker ends its task as
// interrupted (or queues it again, Config.RetryInterrupted).
package farm

import (
	"context"
	"crypto/sha1"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// AnyDevice is the device of a task that any free device whose labels match
// may run.
const AnyDevice = "any"

// anyQueue is the River queue where tasks for any device wait; no client
// lists it, workers move its jobs into their devices' queues.
const anyQueue = "farm-any"

// Notification channels.
const (
	chanTask    = "phonepilot_task"     // payload: a task ID whose row or events were written (triggers)
	chanCommand = "phonepilot_cmd"      // payload: the worker name that has a command to carry out
	chanDone    = "phonepilot_cmd_done" // payload: the command ID carried out
	chanAny     = "phonepilot_any"      // a task for any device was queued
)

// jobArgs is a task's River job. Device is the device it runs on: the one
// it names, or, for an "any" task, the one a worker moved it to (empty
// until then).
type jobArgs struct {
	TaskID string            `json:"task_id"`
	Device string            `json:"device"`
	Any    bool              `json:"any,omitempty"`
	Labels map[string]string `json:"labels"`
}

// Kind is River's name for a task's job.
func (jobArgs) Kind() string { return "phonepilot_task" }

// QueueName is the River queue of a device. River's queue names allow only
// lower-case letters, digits, '-' and '_' (and 64 characters), and ADB
// serials are anything ("192.168.1.5:5555", upper case), so the name is a
// hash of the device's; the device's own name stays in the job's args.
func QueueName(device string) string {
	sum := sha1.Sum([]byte(device))
	return "dev-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:10]))
}

// Labels limits.
const (
	MaxLabels     = 32
	maxLabelBytes = 128
)

var labelKey = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,63}$`)

// ErrBadLabels is wrapped by CheckLabels' errors.
var ErrBadLabels = errors.New("bad labels")

// CheckLabels says what is wrong with a set of labels, if anything.
func CheckLabels(l map[string]string) error {
	if len(l) > MaxLabels {
		return fmt.Errorf("%w: %d labels, at most %d", ErrBadLabels, len(l), MaxLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(l)) {
		switch v := l[k]; {
		case !labelKey.MatchString(k):
			return fmt.Errorf("%w: key %q: 1-64 letters, digits, '.', '_', '/' or '-', starting with a letter or digit", ErrBadLabels, k)
		case len(v) > maxLabelBytes:
			return fmt.Errorf("%w: %s: value longer than %d bytes", ErrBadLabels, k, maxLabelBytes)
		}
	}
	return nil
}

// Matches reports whether a device with labels have may take a task that
// asks for want: every wanted label has the same value.
func Matches(want, have map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func labelsJSON(l map[string]string) []byte {
	if l == nil {
		l = map[string]string{}
	}
	b, _ := json.Marshal(l)
	return b
}

// OpenPool connects to PostgreSQL and brings River's tables up to date
// (rivermigrate, under an advisory lock so that hosts starting at once take
// turns). phonepilot's own tables come from storage/postgres.Open.
func OpenPool(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	if dsn == "" {
		return nil, errors.New("farm: empty connection string")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("farm: %w", err)
	}
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("farm: connect: %w", err)
	}
	if err := migrateRiver(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// riverMigrateLock is the advisory lock key of River's migrations.
const riverMigrateLock = 0x70686f6e65 // "phone"

func migrateRiver(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("farm: connect: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(riverMigrateLock)); err != nil {
		return fmt.Errorf("farm: river migrations lock: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(riverMigrateLock))
	}()
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("farm: river migrations: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("farm: river migrations: %w", err)
	}
	return nil
}
