// Package task is the one home of a task's life: every front end (the CLI's
// run, the HTTP API and its page, MCP, flows, the farm) submits, gets,
// lists, cancels and watches tasks through a Service, and ../shared/design/
// TASKS.md is the contract it keeps.
//
// The Service owns the per-device FIFO queue (one running task per device,
// the rest in submission order), the one recorder of a task's events and
// steps into the store (writes retried; what could not be written is kept in
// order until the store is back), recovery at start (tasks whose process
// died become interrupted) and ownership ("host:pid"). How a task runs and
// how a device opens are the caller's, through the small Runner and Devices
// interfaces defined here, so the package is tested with fakes.
package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"phonepilot/device"
	"phonepilot/internal/clock"
	"phonepilot/lifecycle"
	"phonepilot/runtime"
	"phonepilot/storage"
)

// Runner runs one task on an opened device until it ends, calling emit for
// every event, in order, from the calling goroutine. ctx is cancelled when
// the task is cancelled or the service stops; Run must then return promptly.
// person is the task's runtime.Person (runtime.Options.Person): through it
// the task waits for approvals and answers, recorded by the service.
type Runner interface {
	Run(ctx context.Context, t storage.Task, dev device.Device, emit func(runtime.Event), person runtime.Person) runtime.Result
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, t storage.Task, dev device.Device, emit func(runtime.Event), person runtime.Person) runtime.Result

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, t storage.Task, dev device.Device, emit func(runtime.Event), person runtime.Person) runtime.Result {
	return f(ctx, t, dev, emit, person)
}

// Devices opens devices by name for tasks.
type Devices interface {
	// Check says whether name is a device the service could open; the
	// error says what is wrong with it.
	Check(name string) error
	// Open opens the device for one task; release is called when it ends.
	Open(ctx context.Context, name string) (dev device.Device, release func(), err error)
}

// Store is the part of storage.Store the service uses (it never closes it).
type Store interface {
	storage.Tasks
	storage.Steps
	storage.Events
}

// Config tunes a Service. The zero value works.
type Config struct {
	// Owner names this process in the tasks it runs; DefaultOwner() when
	// empty.
	Owner string
	// OwnerGone says whether the process a task's owner names has died, so
	// Start may interrupt its tasks; ProcessGone when nil.
	OwnerGone func(owner string) bool
	// Snapshot is the configuration stored with a task, for the device and
	// planner it asked for (secrets already removed: storage.RedactConfig);
	// none when nil.
	Snapshot func(Request) json.RawMessage
	// Held says whether something outside the service holds a device
	// against a task (an MCP session acting on the phone directly, which
	// lets its own run_task through): the task waits, queued, until it is
	// let go. Asked every heldPoll; never when nil.
	Held func(device, taskID string) bool
	// PollInterval is how often Watch looks at the store when nothing in
	// this process told it of news (tasks of another process sharing a
	// PostgreSQL database, or a store that was down). 1 s when zero.
	PollInterval time.Duration
	// RetryBase and RetryMax shape the backoff between attempts of a write
	// the store refused (100 ms and 5 s when zero).
	RetryBase, RetryMax time.Duration
	// WriteTimeout bounds one attempt of one write (10 s when zero).
	WriteTimeout time.Duration
	// FlushGrace is how long a task's end waits for its records to be
	// written before its device is freed anyway (2 s when zero).
	FlushGrace time.Duration
	// StopGrace is how long a cancelled or stopping task's runner has to
	// return before the task ends without it (5 s when zero): a runner
	// stuck where it does not look at its context (a planner grinding
	// through a pathological screen) cannot hold a cancel, or the
	// process's stop, forever.
	StopGrace time.Duration
	// ApprovalTimeout bounds a task's wait for a person to approve or deny
	// a gated action (cause approval_timeout); AnswerTimeout its wait for
	// an answer (cause user_timeout). DefaultWaitTimeout when zero.
	ApprovalTimeout, AnswerTimeout time.Duration
	// OnPending, when set, is called in its own goroutine each time a task
	// of this service starts waiting for a person (the CLI's run asks on
	// its terminal and calls Approve, Deny or Answer).
	OnPending func(id string, p storage.Pending)
	// Clock stamps times and drives the write backoff and the waits for a
	// person; clock.Real when nil.
	Clock clock.Clock
	// Logger receives the service's lines; discarded when nil.
	Logger *slog.Logger
	// Queue, when set, makes this service a farm's front: tasks are stored
	// and queued through it (a worker runs them, with RunQueued), and a
	// cancel or decision about a task another process runs goes to that
	// process through it. Start then recovers nothing: the farm's leases
	// do.
	Queue Queue
}

// Request is what a front end asks for. The front end checks its own input
// (field names, limits); the service checks the device.
type Request struct {
	Goal     string
	Device   string
	Planner  string
	MaxSteps int
	// Flow is what a flow task (planner "flow") replays: the flow and its
	// parameters as JSON (package flow). It is stored in the task's Config
	// under "flow", so the runner and every reader see what ran.
	Flow json.RawMessage
	// Labels, with Device "any", route the task to any free device of a
	// farm whose labels include them all (Config.Queue only).
	Labels map[string]string
}

// Errors the Service returns besides the store's (storage.ErrNotFound, and
// *storage.ConflictError for a change a task's status does not allow).
var (
	// ErrClosed: the service is stopping and takes no new task.
	ErrClosed = errors.New("the task service is stopping")
	// ErrConflict is wrapped by refusals that are not a stored status
	// conflict: a cancel already under way, a task another process runs.
	ErrConflict = errors.New("conflict")
	// ErrAmbiguous: an ID prefix matches more than one task.
	ErrAmbiguous = errors.New("ambiguous task id prefix")
	// ErrUnroutable is wrapped by a Queue's refusal of a task no device
	// could ever take (a farm's "any" task whose labels no device has):
	// queued, it would wait forever.
	ErrUnroutable = errors.New("no device can take the task")
)

// Why a running task's context ends.
var (
	errCancelled = errors.New("cancelled by request")
	errStopped   = errors.New(interruptedReason)
)

// Service runs and records tasks. Create it with New, call Start (for a
// server) and Close when done.
type Service struct {
	cfg     Config
	store   Store
	devices Devices
	runner  Runner
	log     *slog.Logger
	clock   clock.Clock
	hub     *hub

	mu      sync.Mutex
	queues  map[string]*deviceQueue
	entries map[string]*entry // tasks this process queued, runs, or still records
	closed  bool
	wg      sync.WaitGroup // queue drains and RunNows
	recWG   sync.WaitGroup // recorders
	ctx     context.Context
	stop    context.CancelFunc
	stopped chan struct{} // closed when Close has finished every task's writes (or gave up)
}

type deviceQueue struct {
	pending []string // task IDs in arrival order
	active  bool     // a goroutine is draining this queue
}

// phase is where a task of this process is.
type phase int

const (
	phaseQueued    phase = iota // in its device's queue
	phaseRunning                // its runner has the device
	phaseFinishing              // ended; its last writes may still be queued
)

// entry is what this process knows of one of its tasks.
type entry struct {
	id, device string
	phase      phase
	cancel     context.CancelCauseFunc
	cancelled  bool          // a Cancel won (exactly one does)
	done       chan struct{} // closed when the run ended and its end was queued for writing
	rec        *recorder
	final      storage.Task // the task as it ended (phaseFinishing)
	wait       *waiting     // the decision its runner waits for (phaseRunning), nil when none
}

// New builds a Service. devices may be nil when only RunNow is used.
func New(cfg Config, store Store, devices Devices, runner Runner) (*Service, error) {
	if store == nil || runner == nil {
		return nil, errors.New("task: a store and a runner are required")
	}
	if cfg.Owner == "" {
		cfg.Owner = DefaultOwner()
	}
	if cfg.OwnerGone == nil {
		cfg.OwnerGone = ProcessGone
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = 100 * time.Millisecond
	}
	if cfg.RetryMax < cfg.RetryBase {
		cfg.RetryMax = max(5*time.Second, cfg.RetryBase)
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	if cfg.FlushGrace <= 0 {
		cfg.FlushGrace = 2 * time.Second
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = 5 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{cfg: cfg, store: store, devices: devices, runner: runner, log: cfg.Logger, clock: cfg.Clock,
		hub: newHub(), queues: map[string]*deviceQueue{}, entries: map[string]*entry{}, stopped: make(chan struct{})}
	s.ctx, s.stop = context.WithCancel(context.Background())
	return s, nil
}

// Owner is the name this process writes into the tasks it runs.
func (s *Service) Owner() string { return s.cfg.Owner }

// Start recovers from previous processes: their running tasks (when the
// process is gone) become interrupted, and the queued tasks of this owner
// or of gone ones are queued again, oldest first. Live processes keep
// theirs.
func (s *Service) Start(ctx context.Context) error {
	if s.cfg.Queue != nil {
		return nil
	}
	queued, err := allTasks(ctx, s.store, lifecycle.Queued)
	if err != nil {
		return fmt.Errorf("task start: %w", err)
	}
	gone, err := recoverWith(ctx, s.store, s.cfg.Owner, s.cfg.OwnerGone, s.clock, s.log, s.hub.notify)
	if err != nil {
		return fmt.Errorf("task start: %w", err)
	}
	for i := len(queued) - 1; i >= 0; i-- { // oldest first
		t := queued[i]
		g, known := gone[t.Owner]
		if t.Owner == s.cfg.Owner || (known && g) || (!known && s.cfg.OwnerGone(t.Owner)) {
			s.enqueue(t)
		}
	}
	return nil
}

// Submit stores a new queued task and puts it at the end of its device's
// queue.
func (s *Service) Submit(ctx context.Context, req Request) (storage.Task, error) {
	if s.devices == nil {
		return storage.Task{}, errors.New("task: this service has no devices to run tasks on")
	}
	if err := CheckGoal(req.Goal, 0); err != nil {
		return storage.Task{}, err
	}
	if err := s.devices.Check(req.Device); err != nil {
		return storage.Task{}, err
	}
	if len(req.Labels) > 0 && s.cfg.Queue == nil {
		return storage.Task{}, errors.New("task: labels route tasks of a device farm (serve --db postgres://…); name a device here")
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return storage.Task{}, ErrClosed
	}
	t, err := s.create(ctx, req)
	if err != nil {
		return storage.Task{}, err
	}
	if s.cfg.Queue == nil {
		s.enqueue(t)
	}
	return t, nil
}

func (s *Service) create(ctx context.Context, req Request) (storage.Task, error) {
	var snapshot json.RawMessage
	if s.cfg.Snapshot != nil {
		snapshot = s.cfg.Snapshot(req)
	}
	if len(req.Flow) > 0 {
		var err error
		if snapshot, err = withFlow(snapshot, req.Flow); err != nil {
			return storage.Task{}, err
		}
	}
	t := storage.Task{
		Goal: req.Goal, Device: req.Device, Planner: req.Planner, MaxSteps: req.MaxSteps,
		Status: lifecycle.Queued, Created: s.clock.Now(), Config: snapshot, Owner: s.cfg.Owner,
	}
	var err error
	if s.cfg.Queue != nil {
		t, err = s.cfg.Queue.Create(ctx, t, req.Labels)
	} else {
		t, err = s.store.CreateTask(ctx, t)
	}
	if err != nil {
		return storage.Task{}, err
	}
	queued, _ := json.Marshal(map[string]any{"goal": t.Goal, "device": t.Device, "planner": t.Planner, "max_steps": t.MaxSteps})
	for _, e := range []storage.Event{
		{TaskID: t.ID, Type: lifecycle.EventTaskQueued, Time: t.Created, Data: queued},
		statusEvent(t.ID, lifecycle.Queued, lifecycle.CauseNone, "", t.Created),
	} {
		if _, err := s.store.AppendEvent(ctx, e); err != nil {
			s.log.Error("record the task's submission", "task", t.ID, "event", e.Type, "err", err)
		}
	}
	s.hub.notify(t.ID)
	return t, nil
}

// RunNow stores a new task and runs it at once on dev, an already opened
// device, in the calling goroutine: `phonepilot run`. It is recorded the
// same way as a served task (the same recorder, statuses and events). ctx
// ending cancels the task (Ctrl-C). It returns the task as it ended and the
// runner's Result; the task's last writes may still be in flight (Close
// waits for them).
func (s *Service) RunNow(ctx context.Context, req Request, dev device.Device) (storage.Task, runtime.Result, error) {
	if dev == nil {
		return storage.Task{}, runtime.Result{}, errors.New("task: no device")
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return storage.Task{}, runtime.Result{}, ErrClosed
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	t, err := s.create(context.WithoutCancel(ctx), req)
	if err != nil {
		return storage.Task{}, runtime.Result{}, err
	}
	e := &entry{id: t.ID, device: t.Device, phase: phaseQueued, done: make(chan struct{})}
	s.mu.Lock()
	s.entries[t.ID] = e
	s.mu.Unlock()
	stopWatch := context.AfterFunc(ctx, func() { s.cancelEntry(e, errCancelled) })
	defer stopWatch()
	final, res, _ := s.runOne(e, func(context.Context) (device.Device, func(), error) { return dev, func() {}, nil })
	return final, res, nil
}

// Get returns one task. A task of this process whose end is not written yet
// (the store was down) is returned as it ended.
func (s *Service) Get(ctx context.Context, id string) (storage.Task, error) {
	s.mu.Lock()
	e := s.entries[id]
	var final storage.Task
	running := e != nil && e.phase == phaseRunning
	var pend *storage.Pending
	if e != nil && e.phase == phaseFinishing {
		final = e.final
	}
	if running && e.wait != nil && !e.wait.taken {
		p := e.wait.pending
		pend = &p
	}
	s.mu.Unlock()
	t, err := s.store.Task(ctx, id)
	if err != nil {
		return storage.Task{}, err
	}
	// This process knows whether its task waits before the store does.
	if running && !t.Status.Terminal() && t.Status != lifecycle.Queued {
		t.Status, t.Pending = lifecycle.Running, pend
		if pend != nil {
			t.Status = pend.Kind.Status()
		}
	}
	if final.ID != "" && !t.Status.Terminal() {
		t.Status, t.Cause, t.Reason, t.Finished, t.Usage = final.Status, final.Cause, final.Reason, final.Finished, final.Usage
		if len(final.FinalScene) > 0 {
			t.FinalScene = final.FinalScene
		}
	}
	return t, nil
}

// Find returns the one task whose ID is id or starts with it. More than one
// match is an error wrapping ErrAmbiguous that lists them.
func (s *Service) Find(ctx context.Context, id string) (storage.Task, error) {
	return Find(ctx, s.store, id)
}

// List returns a page of tasks, newest first.
func (s *Service) List(ctx context.Context, q storage.Query) (storage.Page, error) {
	return s.store.ListTasks(ctx, q)
}

// Steps returns a task's recorded steps in order.
func (s *Service) Steps(ctx context.Context, id string) ([]storage.Step, error) {
	return s.store.Steps(ctx, id)
}

// Step returns one recorded step.
func (s *Service) Step(ctx context.Context, id string, number int) (storage.Step, error) {
	return s.store.Step(ctx, id, number)
}

// DeviceLoad is what this service is doing on one device.
type DeviceLoad struct {
	Running string // the running task's ID, empty when none
	Queued  int    // tasks waiting for the device
}

// Load returns what this service is doing on each device it has used.
func (s *Service) Load() map[string]DeviceLoad {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]DeviceLoad{}
	for name, q := range s.queues {
		l := out[name]
		l.Queued = len(q.pending)
		out[name] = l
	}
	for _, e := range s.entries {
		if e.phase == phaseRunning {
			l := out[e.device]
			l.Running = e.id
			out[e.device] = l
		}
	}
	return out
}

// Cancel cancels a task: a queued one at once, a running one by cancelling
// its context and waiting for it to stop (the step in flight is recorded as
// cancelled). Exactly one of any number of concurrent cancels succeeds; the
// others, and a cancel of a final task, get a conflict.
func (s *Service) Cancel(ctx context.Context, id string) (storage.Task, error) {
	s.mu.Lock()
	e := s.entries[id]
	if e == nil {
		s.mu.Unlock()
		return s.cancelStored(ctx, id)
	}
	switch {
	case e.phase == phaseFinishing:
		st := e.final.Status
		s.mu.Unlock()
		return storage.Task{}, &storage.ConflictError{ID: id, Current: st, To: lifecycle.Cancelled}
	case e.cancelled:
		s.mu.Unlock()
		return storage.Task{}, fmt.Errorf("task %s is already being cancelled: %w", id, ErrConflict)
	case e.phase == phaseQueued && s.unqueueLocked(e):
		// Still waiting in its queue: nobody will start it now.
		e.cancelled = true
		delete(s.entries, id)
		s.mu.Unlock()
		return s.cancelStored(ctx, id)
	case e.phase == phaseQueued:
		// Its queue (or RunNow) is starting it; the start sees the cancel
		// and stops the run at once.
		e.cancelled = true
	default:
		e.cancelled = true
		e.cancel(errCancelled)
	}
	s.mu.Unlock()
	select {
	case <-e.done:
	case <-ctx.Done():
		return storage.Task{}, ctx.Err()
	}
	return s.Get(ctx, id)
}

// cancelEntry is Cancel for RunNow's own context: it never waits.
func (s *Service) cancelEntry(e *entry, why error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.phase == phaseRunning && !e.cancelled {
		e.cancelled = true
		e.cancel(why)
	} else if e.phase == phaseQueued {
		e.cancelled = true
	}
}

// cancelStored cancels a task this process does not run: queued ones
// (the store's conditional change makes exactly one cancel win), while a
// running one belongs to another process.
func (s *Service) cancelStored(ctx context.Context, id string) (storage.Task, error) {
	t, err := s.store.Task(ctx, id)
	if err != nil {
		return storage.Task{}, err
	}
	if t.Status.Terminal() {
		return storage.Task{}, &storage.ConflictError{ID: id, Current: t.Status, To: lifecycle.Cancelled}
	}
	if t.Status != lifecycle.Queued && s.cfg.Queue != nil {
		return s.remote(ctx, id, Command{Kind: CommandCancel}, func(t storage.Task) bool { return t.Status.Terminal() })
	}
	if t.Status != lifecycle.Queued {
		return storage.Task{}, fmt.Errorf("task %s is %s in another phonepilot process sharing this database (%s); cancel it there: %w",
			id, t.Status, t.Owner, ErrConflict)
	}
	const reason = "cancelled before it started"
	t, err = s.store.UpdateStatus(ctx, id, storage.Change{From: []lifecycle.Status{lifecycle.Queued}, To: lifecycle.Cancelled,
		Cause: lifecycle.CauseCancelled, Reason: reason, At: s.clock.Now()})
	if err != nil {
		return storage.Task{}, err
	}
	if _, err := s.store.AppendEvent(ctx, statusEvent(id, lifecycle.Cancelled, lifecycle.CauseCancelled, reason, s.clock.Now())); err != nil {
		s.log.Error("record cancelled status", "task", id, "err", err)
	}
	s.hub.notify(id)
	return t, nil
}

// unqueueLocked takes a queued task out of its device's queue; false when
// it is not there (its queue or RunNow has taken it to start it).
func (s *Service) unqueueLocked(e *entry) bool {
	q := s.queues[e.device]
	if q == nil {
		return false
	}
	for i, id := range q.pending {
		if id == e.id {
			q.pending = append(q.pending[:i], q.pending[i+1:]...)
			return true
		}
	}
	return false
}

// Close stops taking tasks, cancels running ones (they end interrupted;
// queued ones stay queued for the next start), waits for them and for every
// task's last writes, or until ctx ends. Watches end after it.
func (s *Service) Close(ctx context.Context) error {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	for _, e := range s.entries {
		if e.phase == phaseRunning && !e.cancelled {
			e.cancel(errStopped)
		}
	}
	s.mu.Unlock()
	if already {
		<-s.stopped
		return nil
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); s.recWG.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("task close: tasks or their records still pending: %w", ctx.Err())
		s.mu.Lock()
		for id, e := range s.entries {
			if e.rec != nil {
				if n := e.rec.pending(); n > 0 {
					s.log.Error("task records not written: the store stayed unavailable", "task", id, "writes", n)
				}
			}
		}
		s.mu.Unlock()
	}
	s.stop() // recorders still retrying give up now
	close(s.stopped)
	return err
}

// enqueue puts a task at the end of its device's queue and makes sure a
// goroutine drains that queue.
func (s *Service) enqueue(t storage.Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if _, dup := s.entries[t.ID]; dup {
		return
	}
	s.entries[t.ID] = &entry{id: t.ID, device: t.Device, phase: phaseQueued, done: make(chan struct{})}
	q := s.queues[t.Device]
	if q == nil {
		q = &deviceQueue{}
		s.queues[t.Device] = q
	}
	q.pending = append(q.pending, t.ID)
	if !q.active {
		q.active = true
		s.wg.Add(1)
		go s.drain(t.Device, q)
	}
}

// drain runs a device's tasks one after another until its queue is empty:
// in order, but for tasks the device is held against (Config.Held), which
// wait while later ones the holder let through go ahead.
func (s *Service) drain(dev string, q *deviceQueue) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		if len(q.pending) == 0 || s.closed {
			q.active = false
			s.mu.Unlock()
			return
		}
		i := s.firstFree(dev, q.pending)
		if i < 0 {
			s.mu.Unlock()
			if err := s.clock.Sleep(s.ctx, heldPoll); err != nil { // the service stops
				s.mu.Lock()
				q.active = false
				s.mu.Unlock()
				return
			}
			continue
		}
		id := q.pending[i]
		q.pending = slices.Delete(q.pending, i, i+1)
		e := s.entries[id]
		s.mu.Unlock()
		if e == nil {
			continue
		}
		name := e.device
		s.runOne(e, func(ctx context.Context) (device.Device, func(), error) { return s.devices.Open(ctx, name) })
	}
}

// heldPoll is how often a device held outside the service is asked about
// again (Config.Held).
const heldPoll = 100 * time.Millisecond

// firstFree is the index of the first of pending the device is not held
// against, -1 when none.
func (s *Service) firstFree(dev string, pending []string) int {
	if s.cfg.Held == nil {
		return 0
	}
	for i, id := range pending {
		if !s.cfg.Held(dev, id) {
			return i
		}
	}
	return -1
}

// opener opens the task's device.
type opener func(ctx context.Context) (device.Device, func(), error)

// runOne takes a queued task through running to its end and queues its end
// for writing. The device is free when it returns, whether or not the store
// took every write yet.
func (s *Service) runOne(e *entry, open opener) (storage.Task, runtime.Result, error) {
	bg := context.WithoutCancel(s.ctx)
	now := s.clock.Now()
	var task storage.Task
	err := s.retry(bg, "start task", func(ctx context.Context) error {
		var err error
		task, err = s.store.UpdateStatus(ctx, e.id, storage.Change{From: []lifecycle.Status{lifecycle.Queued}, To: lifecycle.Running,
			At: now, Owner: s.cfg.Owner})
		return err
	}, 5)
	if err != nil {
		s.mu.Lock()
		delete(s.entries, e.id)
		s.mu.Unlock()
		close(e.done)
		if !errors.As(err, new(*storage.ConflictError)) {
			s.log.Error("start task", "task", e.id, "err", err)
		}
		return task, runtime.Result{}, err // cancelled while queued, or gone
	}
	s.hub.notify(e.id)
	runCtx, cancel := context.WithCancelCause(s.ctx)
	rec := s.newRecorder(e.id)
	s.mu.Lock()
	e.phase, e.cancel, e.rec = phaseRunning, cancel, rec
	switch {
	case e.cancelled: // cancelled while starting (a Cancel, or RunNow's ctx)
		cancel(errCancelled)
	case s.closed:
		cancel(errStopped)
	}
	s.mu.Unlock()
	rec.event(statusEvent(e.id, lifecycle.Running, lifecycle.CauseNone, "", now))
	s.log.Info("task started", "task", e.id, "device", task.Device)

	res, info := s.run(runCtx, task, open, rec)
	// The runner ended on its own: nothing cancelled or stopped it.
	ranToItsEnd := context.Cause(runCtx) == nil

	status, cause, reason := res.Status, res.Cause, res.Reason
	s.mu.Lock()
	userCancelled := e.cancelled
	s.mu.Unlock()
	switch why := context.Cause(runCtx); {
	case userCancelled:
		status, cause, reason = lifecycle.Cancelled, lifecycle.CauseCancelled, "cancelled by request"
	case errors.Is(why, errStopped):
		status, cause, reason = lifecycle.Interrupted, lifecycle.CauseInterrupted, why.Error()
	case !status.Terminal() || status == lifecycle.Interrupted:
		reason = fmt.Sprintf("runner ended with status %q: %s", status, reason)
		status = lifecycle.Failed
	}
	if status == lifecycle.Failed && cause == lifecycle.CauseNone {
		cause = lifecycle.CauseStepFailed
	}
	if status == lifecycle.Completed {
		cause = lifecycle.CauseNone
	}
	cancel(nil)
	end := s.clock.Now()
	final := task
	final.Status, final.Cause, final.Reason, final.Finished, final.Usage = status, cause, reason, &end, res.Usage
	if res.FinalScene != nil {
		if sj, err := json.Marshal(res.FinalScene); err == nil {
			final.FinalScene = sj
		}
	}
	var newConfig json.RawMessage // nil keeps the stored one
	if info != nil {
		if cfg, err := withDeviceInfo(task.Config, info); err == nil {
			final.Config, newConfig = cfg, cfg
		} else {
			s.log.Warn("task config: the device's info is not recorded", "task", e.id, "err", err)
		}
	}
	// A task that ran to its end here may have been marked interrupted
	// meanwhile by a farm whose database was away while it finished (its
	// lease lapsed, and a reaper ended it): this process's end is the true
	// one and wins while the task is still this process's (IfOwner; a task
	// another worker took over is not).
	from := lifecycle.ActiveStatuses()
	if ranToItsEnd {
		from = append(from, lifecycle.Interrupted)
	}
	rec.finish(storage.Change{From: from, To: status, Cause: cause, Reason: reason,
		At: end, Usage: res.Usage, FinalScene: final.FinalScene, Config: newConfig})
	rec.event(statusEvent(e.id, status, cause, reason, end))
	// Normally the end is written in milliseconds and the device goes to
	// the next task after it; a store that is down keeps the backlog, not
	// the device.
	if !rec.flush(s.cfg.FlushGrace) {
		level := slog.LevelDebug // a busy store, still writing
		if rec.refusing() {
			level = slog.LevelWarn
		}
		s.log.Log(bg, level, "task ended before the store took all its records; they are kept, in order, and written when it can", "task", e.id, "pending", rec.pending())
	}
	s.mu.Lock()
	e.phase, e.final = phaseFinishing, final
	s.mu.Unlock()
	close(e.done)
	rec.close(func() {
		s.mu.Lock()
		delete(s.entries, e.id)
		s.mu.Unlock()
	})
	s.log.Info("task ended", "task", e.id, "status", status, "cause", cause, "reason", reason)
	res.Status, res.Cause, res.Reason = status, cause, reason
	return final, res, nil
}

// run opens the device and hands the task to the runner; a runner that
// panics fails its task, not the process. Before the device is released it
// is asked, when it can say, for its locale and the versions of the apps
// the task's screens showed (info; nil when it cannot).
func (s *Service) run(ctx context.Context, t storage.Task, open opener, rec *recorder) (res runtime.Result, info *DeviceInfo) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("runner panicked", "task", t.ID, "panic", p)
			res = runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseStepFailed, Reason: fmt.Sprintf("internal error: %v", p)}
		}
	}()
	dev, release, err := open(ctx)
	if err != nil {
		return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseDeviceGone, Reason: fmt.Sprintf("open device %s: %v", t.Device, err)}, nil
	}
	defer release()
	s.mu.Lock()
	e := s.entries[t.ID]
	s.mu.Unlock()
	var seen appsSeen
	emit := func(ev runtime.Event) {
		seen.add(ev.Scene)
		rec.runtimeEvent(ev)
	}
	res, ok := s.runBounded(ctx, t.ID, func() runtime.Result { return s.runner.Run(ctx, t, dev, emit, &person{s: s, e: e, rec: rec}) })
	if !ok {
		return res, nil // what the runner reports later, its recorder (finished) drops
	}
	seen.add(res.FinalScene)
	if res.Cause == lifecycle.CauseDeviceGone {
		// A phone that vanished or froze cannot answer: asking would hold
		// the task's end for factsTimeout. How it was observed is known here.
		return res, observerInfo(dev)
	}
	// The task's own context may be cancelled by now; the answers are
	// still wanted (bounded by factsTimeout).
	return res, deviceInfo(context.WithoutCancel(ctx), dev, seen.list())
}

// runBounded runs run, and once ctx ends gives it StopGrace to return;
// ok is false when it did not (res then says so, and run is left to finish
// on its own with its context cancelled: whatever it does next fails, and
// nothing it reports is recorded).
func (s *Service) runBounded(ctx context.Context, id string, run func() runtime.Result) (res runtime.Result, ok bool) {
	done := make(chan runtime.Result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("runner panicked", "task", id, "panic", p)
				done <- runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseStepFailed, Reason: fmt.Sprintf("internal error: %v", p)}
			}
		}()
		done <- run()
	}()
	select {
	case res = <-done:
		return res, true
	case <-ctx.Done():
	}
	gctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	grace := make(chan struct{})
	go func() { s.clock.Sleep(gctx, s.cfg.StopGrace); close(grace) }()
	select {
	case res = <-done:
		return res, true
	case <-grace:
		s.log.Error("the runner did not stop when told to; the task ends without it", "task", id, "grace", s.cfg.StopGrace)
		return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseStepFailed,
			Reason: fmt.Sprintf("the run did not stop within %s of being told to", s.cfg.StopGrace)}, false
	}
}

// retry runs one write until it succeeds, fails for good, or attempts run
// out (0: until the service stops), with backoff between attempts.
func (s *Service) retry(ctx context.Context, what string, write func(context.Context) error, attempts int) error {
	wait := s.cfg.RetryBase
	for n := 1; ; n++ {
		wctx, cancel := context.WithTimeout(ctx, s.cfg.WriteTimeout)
		err := write(wctx)
		cancel()
		if err == nil || permanent(err) {
			return err
		}
		if attempts > 0 && n >= attempts {
			return err
		}
		if n == 1 || n%10 == 0 {
			s.log.Warn("store write failed; retrying", "write", what, "attempt", n, "err", err)
		}
		if s.ctx.Err() != nil {
			return err
		}
		if err := s.clock.Sleep(s.ctx, wait); err != nil {
			return err
		}
		wait = min(wait*2, s.cfg.RetryMax)
	}
}

// permanent says a write can never succeed by trying again.
func permanent(err error) bool {
	return errors.Is(err, storage.ErrNotFound) || errors.As(err, new(*storage.ConflictError)) || errors.Is(err, errInvalid)
}

// allTasks lists every task with a status, newest first.
func allTasks(ctx context.Context, store interface {
	ListTasks(context.Context, storage.Query) (storage.Page, error)
}, status lifecycle.Status) ([]storage.Task, error) {
	var out []storage.Task
	q := storage.Query{Status: status, Limit: storage.MaxPage}
	for {
		p, err := store.ListTasks(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Tasks...)
		if p.Next == "" {
			return out, nil
		}
		q.Cursor = p.Next
	}
}

// withFlow adds a flow task's flow to its config snapshot, under "flow".
func withFlow(snapshot, flow json.RawMessage) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(snapshot) > 0 {
		if err := json.Unmarshal(snapshot, &m); err != nil {
			return nil, fmt.Errorf("task: the config snapshot is not a JSON object: %w", err)
		}
	}
	if !json.Valid(flow) {
		return nil, errors.New("task: the flow is not valid JSON")
	}
	m["flow"] = flow
	return json.Marshal(m)
}
