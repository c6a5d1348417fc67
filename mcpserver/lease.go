package mcpserver

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"phonepilot/internal/clock"
)

// ErrBusy is wrapped by the error of a device another session holds.
var ErrBusy = errors.New("device busy")

// BusyError is a device leased to another session.
type BusyError struct {
	Device, Holder, Label string
	Since                 time.Time
	// Task is the task running on it for the holder, "" when none.
	Task string
	// Left is how long the lease lasts unused (0 while a task runs).
	Left time.Duration
}

func (e *BusyError) Error() string {
	who := e.Holder
	if e.Label != "" {
		who += " (" + e.Label + ")"
	}
	msg := fmt.Sprintf("device %s is busy, held by %s since %s", e.Device, who, e.Since.UTC().Format("15:04:05Z"))
	if e.Task != "" {
		return msg + fmt.Sprintf("; task %s runs on it (get_task follows it); the lease ends with that task and the session", e.Task)
	}
	return msg + fmt.Sprintf("; the lease ends when that session closes or after %s unused", e.Left.Round(time.Second))
}

func (e *BusyError) Unwrap() error { return ErrBusy }

// Leases lends each device to one session at a time. A lease ends when its
// session releases it (the session closed) or when it has not been used
// for the idle time and no task of its holder runs on the device; another
// session's request then takes it over. Time is the injected clock's.
type Leases struct {
	clock clock.Clock
	idle  time.Duration

	mu sync.Mutex
	m  map[string]*lease
}

type lease struct {
	holder, label string
	since, last   time.Time
	// tasks are the holder's tasks running on the device (run_task).
	tasks map[string]bool
}

// NewLeases makes the lease table.
func NewLeases(clk clock.Clock, idle time.Duration) *Leases {
	return &Leases{clock: clk, idle: idle, m: map[string]*lease{}}
}

// Acquire leases dev to holder (label names its client), or renews the
// lease it has; a device another holder leases is a *BusyError.
func (l *Leases) Acquire(dev, holder, label string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	if cur, ok := l.m[dev]; ok && cur.holder != holder && l.live(cur, now) {
		return l.busy(dev, cur, now)
	}
	if cur, ok := l.m[dev]; ok && cur.holder == holder {
		cur.last = now
		return nil
	}
	l.m[dev] = &lease{holder: holder, label: label, since: now, last: now, tasks: map[string]bool{}}
	return nil
}

// Running returns the task of holder's that runs on dev, "" when none.
func (l *Leases) Running(dev, holder string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.m[dev]; ok && cur.holder == holder {
		for id := range cur.tasks {
			return id
		}
	}
	return ""
}

// Hold keeps dev leased to holder while task runs on it (Acquire first);
// the returned function ends the hold, once.
func (l *Leases) Hold(dev, holder, task string) func() {
	l.mu.Lock()
	if cur, ok := l.m[dev]; ok && cur.holder == holder {
		cur.tasks[task] = true
	}
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if cur, ok := l.m[dev]; ok && cur.holder == holder {
				delete(cur.tasks, task)
				cur.last = l.clock.Now()
			}
		})
	}
}

// ReleaseAll ends every lease of holder, but for the devices its tasks
// still run on (a task left waiting for a person outlives the session that
// started it): those end with their tasks' holds, then the idle time.
func (l *Leases) ReleaseAll(holder string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for dev, cur := range l.m {
		if cur.holder == holder && len(cur.tasks) == 0 {
			delete(l.m, dev)
		}
	}
}

// HeldAgainst says whether a session's live lease on dev keeps task off
// it: any task but the session's own (run_task holds its lease for its
// task). It is the task service's Config.Held, so a task started elsewhere
// (the web page, the API) waits queued while a client works the phone.
func (l *Leases) HeldAgainst(dev, task string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur, ok := l.m[dev]
	return ok && !cur.tasks[task] && l.live(cur, l.clock.Now())
}

// Holder says who holds dev now ("" when nobody), for list_devices.
func (l *Leases) Holder(dev string) (holder, label string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.m[dev]; ok && l.live(cur, l.clock.Now()) {
		return cur.holder, cur.label
	}
	return "", ""
}

func (l *Leases) live(cur *lease, now time.Time) bool {
	return len(cur.tasks) > 0 || now.Sub(cur.last) < l.idle
}

func (l *Leases) busy(dev string, cur *lease, now time.Time) error {
	e := &BusyError{Device: dev, Holder: cur.holder, Label: cur.label, Since: cur.since, Left: l.idle - now.Sub(cur.last)}
	for id := range cur.tasks {
		e.Task = id
	}
	return e
}
