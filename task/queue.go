package task

import (
	"context"
	"errors"
	"fmt"
	"time"

	"phonepilot/device"
	"phonepilot/lifecycle"
	"phonepilot/runtime"
	"phonepilot/storage"
)

// Queue is the seam a device farm plugs into (package farm): a front end's
// Service with a Queue stores and queues its tasks through it instead of in
// this process's own device queues, and hands a cancel or a decision about
// a task some other process runs to that process. The task's life stays
// here: the process that runs a task runs it with RunQueued, through the
// same recorder, statuses and events as a single process.
type Queue interface {
	// Create stores t (queued) and queues it for whichever process will
	// run it, in one transaction; labels, with device "any", say which
	// devices may take it.
	Create(ctx context.Context, t storage.Task, labels map[string]string) (storage.Task, error)
	// Command asks the process that runs task id to carry out c there
	// and returns once it did (its refusal wraps ErrConflict).
	Command(ctx context.Context, id string, c Command) error
}

// CommandKind is what a Command asks.
type CommandKind string

// The commands a front end hands to the process that runs a task.
const (
	CommandCancel  CommandKind = "cancel"
	CommandApprove CommandKind = "approve"
	CommandDeny    CommandKind = "deny"
	CommandAnswer  CommandKind = "answer"
)

// Command is a cancel or a person's decision about a task that runs in
// another process.
type Command struct {
	Kind CommandKind
	By   string // who decided (approve, deny, answer)
	Note string // approve, deny
	Text string // answer
}

// Apply carries out a command about a task of this process: what the
// process that runs it does with a Queue's Command.
func (s *Service) Apply(ctx context.Context, id string, c Command) error {
	var err error
	switch c.Kind {
	case CommandCancel:
		var t storage.Task
		t, err = s.Cancel(ctx, id)
		if err == nil && t.Status != lifecycle.Cancelled {
			err = &storage.ConflictError{ID: id, Current: t.Status, To: lifecycle.Cancelled}
		}
	case CommandApprove:
		_, err = s.Approve(ctx, id, c.By, c.Note)
	case CommandDeny:
		_, err = s.Deny(ctx, id, c.By, c.Note)
	case CommandAnswer:
		_, err = s.Answer(ctx, id, c.By, c.Text)
	default:
		err = fmt.Errorf("task %s: unknown command %q: %w", id, c.Kind, errInvalid)
	}
	return err
}

// Notify tells the watches of a task that something of it was written
// (by another process: a farm's LISTEN/NOTIFY says so), so they read the
// store again now instead of at their next poll.
func (s *Service) Notify(id string) { s.hub.notify(id) }

// RunQueued runs a stored queued task now on dev, an opened device named
// deviceName, in the calling goroutine: a farm worker's job. It is recorded
// as a served task is. ctx ending (the worker stopping, or losing its
// lease) interrupts the task. A task no longer queued (cancelled before it
// started) is not run: the error is the store's *storage.ConflictError.
func (s *Service) RunQueued(ctx context.Context, id, deviceName string, dev device.Device) (storage.Task, runtime.Result, error) {
	if dev == nil {
		return storage.Task{}, runtime.Result{}, errors.New("task: no device")
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return storage.Task{}, runtime.Result{}, ErrClosed
	}
	if _, dup := s.entries[id]; dup {
		s.mu.Unlock()
		return storage.Task{}, runtime.Result{}, fmt.Errorf("task %s already runs in this process: %w", id, ErrConflict)
	}
	e := &entry{id: id, device: deviceName, phase: phaseQueued, done: make(chan struct{})}
	s.entries[id] = e
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	stopWatch := context.AfterFunc(ctx, func() {
		why := errStopped
		if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
			why = fmt.Errorf("%w: %w", errStopped, c) // the reason says why (a lost lease, a timeout)
		}
		s.cancelEntryWith(e, why)
	})
	defer stopWatch()
	final, res, err := s.runOne(e, func(context.Context) (device.Device, func(), error) { return dev, func() {}, nil })
	return final, res, err
}

// cancelEntryWith ends a running entry's context with why (never waits).
func (s *Service) cancelEntryWith(e *entry, why error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.phase == phaseRunning && !e.cancelled {
		e.cancel(why)
	}
}

// remote hands a command about a task that is active in another process to
// the Queue, then waits (reading the store, woken by Notify) until the
// store shows what it did: cancel until the task is final, a decision
// until it no longer waits for it.
func (s *Service) remote(ctx context.Context, id string, c Command, done func(storage.Task) bool) (storage.Task, error) {
	if err := s.cfg.Queue.Command(ctx, id, c); err != nil {
		return storage.Task{}, err
	}
	for {
		wake := s.hub.wait(id)
		t, err := s.store.Task(ctx, id)
		if err != nil {
			return storage.Task{}, err
		}
		if done(t) {
			return t, nil
		}
		select {
		case <-ctx.Done():
			return storage.Task{}, ctx.Err()
		case <-wake:
		case <-time.After(s.cfg.PollInterval):
		}
	}
}
