package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"phonepilot/internal/clock"
	"phonepilot/lifecycle"
	"phonepilot/storage"
)

// DefaultOwner is "host:pid" of this process.
func DefaultOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return host + ":" + strconv.Itoa(os.Getpid())
}

// ProcessGone says whether the process a task's owner ("host:pid") names
// has died. Only a process on this machine can be checked; one on another
// machine (sharing a PostgreSQL database) is assumed alive and left to
// clean up after itself when it restarts. An owner that is not host:pid
// (written before owners existed) is gone.
func ProcessGone(owner string) bool {
	host, pidText, ok := strings.Cut(owner, ":")
	if !ok {
		return true
	}
	if me, err := os.Hostname(); err == nil && host != me {
		return false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return true
	}
	if pid == os.Getpid() {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// RecoverStore is what Recover needs of a store.
type RecoverStore interface {
	ListTasks(ctx context.Context, q storage.Query) (storage.Page, error)
	MarkInterrupted(ctx context.Context, owners []string, reason string, at time.Time) ([]string, error)
	AppendEvent(ctx context.Context, e storage.Event) (storage.Event, error)
}

// interruptedReason is the reason of a task whose process died or stopped
// (the same words for a crash found at start and a shutdown).
const interruptedReason = "phonepilot stopped while the task was running"

// Recover ends the tasks that processes now gone left running or waiting:
// they become interrupted (cause interrupted) with a final status event.
// Every command that opens the store calls it, so a `run` killed with -9
// is not shown as running by the next `tasks`. self is this process's
// owner name (never gone); gone nil means ProcessGone. It returns the IDs
// it ended.
func Recover(ctx context.Context, store RecoverStore, self string, gone func(string) bool, clk clock.Clock, log *slog.Logger) ([]string, error) {
	if gone == nil {
		gone = ProcessGone
	}
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var ids []string
	_, err := recoverWith(ctx, store, self, gone, clk, log, func(id string) { ids = append(ids, id) })
	return ids, err
}

// recoverWith is Recover; it returns what it found out about each owner
// and calls notify for each task it ended.
func recoverWith(ctx context.Context, store RecoverStore, self string, gone func(string) bool, clk clock.Clock,
	log *slog.Logger, notify func(string)) (map[string]bool, error) {
	var active []storage.Task
	for _, st := range lifecycle.Statuses {
		if !st.Active() {
			continue
		}
		ts, err := allTasks(ctx, store, st)
		if err != nil {
			return nil, err
		}
		active = append(active, ts...)
	}
	known := map[string]bool{}
	var owners []string
	for _, t := range active {
		if _, seen := known[t.Owner]; seen || t.Owner == self {
			continue
		}
		known[t.Owner] = gone(t.Owner)
		if known[t.Owner] {
			owners = append(owners, t.Owner)
		}
	}
	ids, err := store.MarkInterrupted(ctx, owners, interruptedReason, clk.Now())
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		log.Warn("task interrupted: the process running it is gone", "task", id)
		if _, err := store.AppendEvent(ctx, statusEvent(id, lifecycle.Interrupted, lifecycle.CauseInterrupted, interruptedReason, clk.Now())); err != nil {
			log.Error("record interrupted status", "task", id, "err", err)
		}
		notify(id)
	}
	return known, nil
}

// FindStore is what Find needs of a store.
type FindStore interface {
	Task(ctx context.Context, id string) (storage.Task, error)
	FindTasks(ctx context.Context, prefix string, limit int) ([]storage.Task, error)
}

// Find returns the task whose ID is id, or else the one task whose ID
// starts with it. No match wraps storage.ErrNotFound; several wrap
// ErrAmbiguous and name them (up to ten).
func Find(ctx context.Context, store FindStore, id string) (storage.Task, error) {
	t, err := store.Task(ctx, id)
	if err == nil || !errors.Is(err, storage.ErrNotFound) {
		return t, err
	}
	const show = 10
	ts, err := store.FindTasks(ctx, strings.ToLower(id), show+1)
	if err != nil {
		return storage.Task{}, err
	}
	switch len(ts) {
	case 0:
		return storage.Task{}, fmt.Errorf("no task %q: %w", id, storage.ErrNotFound)
	case 1:
		return store.Task(ctx, ts[0].ID)
	}
	count := fmt.Sprint(len(ts))
	if len(ts) > show {
		ts, count = ts[:show], fmt.Sprintf("more than %d", show)
	}
	names := make([]string, len(ts))
	for i, c := range ts {
		names[i] = c.ID
	}
	return storage.Task{}, fmt.Errorf("%q matches %s tasks: %s (give more characters): %w", id, count, strings.Join(names, ", "), ErrAmbiguous)
}
