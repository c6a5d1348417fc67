package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/runtime"
	"phonepilot/storage"
	"phonepilot/tools"
)

// errInvalid marks a record that can never be written (it would fail the
// same way every time); it is dropped with a log line, not retried.
var errInvalid = errors.New("invalid record")

// recorder writes one task's records into the store in the order they
// happened, from its own goroutine: the loop never waits for the store.
// A write the store refuses is retried with backoff and everything after it
// waits its turn, so nothing is lost or reordered while the store is down;
// when the store is back the backlog is written and the task's end with it.
type recorder struct {
	s  *Service
	id string

	mu      sync.Mutex
	moved   *sync.Cond // the queue shrank or failing changed
	failing bool       // the last write attempt was refused
	queue   []record
	wake    chan struct{}
	closed  bool
	ended   bool   // the task's end is queued: a runner's later events are dropped
	after   func() // called once the queue drained after close
}

// record is one pending write.
type record struct {
	what  string
	write func(ctx context.Context) error
}

func (s *Service) newRecorder(id string) *recorder {
	r := &recorder{s: s, id: id, wake: make(chan struct{}, 1)}
	r.moved = sync.NewCond(&r.mu)
	s.recWG.Add(1)
	go r.loop()
	return r
}

// maxBacklog is how many records a healthy store may fall behind before the
// task waits for it: a slow store paces the task (as writing inline did),
// while a store that refuses writes never holds the task or its device.
const maxBacklog = 8

func (r *recorder) push(rec record) {
	r.mu.Lock()
	for len(r.queue) >= maxBacklog && !r.failing && r.s.ctx.Err() == nil {
		r.moved.Wait()
	}
	r.queue = append(r.queue, rec)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// pending is how many writes wait.
func (r *recorder) pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.queue)
}

// close says no record follows; after runs once the backlog is written.
func (r *recorder) close(after func()) {
	r.mu.Lock()
	r.closed, r.after = true, after
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *recorder) loop() {
	defer r.s.recWG.Done()
	for {
		r.mu.Lock()
		if len(r.queue) == 0 {
			if r.closed {
				after := r.after
				r.mu.Unlock()
				if after != nil {
					after()
				}
				return
			}
			r.mu.Unlock()
			select {
			case <-r.wake:
			case <-r.s.ctx.Done():
				// Stopping: whatever is still queued is written below
				// (once each) before giving up.
			}
			if r.s.ctx.Err() != nil && r.pending() == 0 && !r.isClosed() {
				return
			}
			continue
		}
		head := r.queue[0]
		r.mu.Unlock()
		err := r.s.retry(context.Background(), head.what, func(ctx context.Context) error {
			err := head.write(ctx)
			r.mu.Lock()
			r.failing = err != nil && !permanent(err)
			r.moved.Broadcast()
			r.mu.Unlock()
			return err
		}, 0)
		if err != nil && !permanent(err) {
			// The service stopped while the store was still refusing.
			r.s.log.Error("task record lost: the store stayed unavailable", "task", r.id, "write", head.what, "err", err,
				"still_queued", r.pending())
			r.mu.Lock()
			r.queue = nil
			r.moved.Broadcast()
			r.mu.Unlock()
			continue
		}
		if err != nil {
			r.s.log.Error("task record dropped", "task", r.id, "write", head.what, "err", err)
		}
		r.mu.Lock()
		r.queue = r.queue[1:]
		r.moved.Broadcast()
		r.mu.Unlock()
		r.s.hub.notify(r.id)
	}
}

func (r *recorder) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// refusing reports whether the store refused the last write attempt.
func (r *recorder) refusing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failing
}

// flush waits until everything queued so far is written, or for grace.
// It reports whether the backlog was written.
func (r *recorder) flush(grace time.Duration) bool {
	written := make(chan struct{})
	r.push(record{what: "flush", write: func(context.Context) error { close(written); return nil }})
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-written:
		return true
	case <-t.C:
		return false
	}
}

// event queues an event.
func (r *recorder) event(e storage.Event) {
	r.push(record{what: "event " + string(e.Type), write: func(ctx context.Context) error {
		_, err := r.s.store.AppendEvent(ctx, e)
		return err
	}})
}

// finish queues the task's final status change.
func (r *recorder) finish(c storage.Change) {
	r.change(c)
	r.mu.Lock()
	r.ended = true
	r.mu.Unlock()
}

// change queues a status change (waiting for a person and back, the end).
func (r *recorder) change(c storage.Change) {
	c.IfOwner = r.s.cfg.Owner // the task started here (runOne made this process its owner)
	r.push(record{what: "status " + string(c.To), write: func(ctx context.Context) error {
		if err := c.Validate(); err != nil {
			return fmt.Errorf("%w: %w", errInvalid, err)
		}
		_, err := r.s.store.UpdateStatus(ctx, r.id, c)
		return err
	}})
}

// runtimeEvent records one of the runner's events: a finished step is saved
// (with the Scene it acted on, in compact JSON) before its event, so a
// stream that reads the event finds the step. The runner's own status event
// is not recorded: the service writes the task's status, which a cancel or
// a stop may override.
func (r *recorder) runtimeEvent(ev runtime.Event) {
	if ev.Type == lifecycle.EventStatus {
		return
	}
	r.mu.Lock()
	ended := r.ended
	r.mu.Unlock()
	if ended {
		// A runner that did not stop in time (Config.StopGrace) and
		// reports after its task ended: nothing follows a task's end.
		r.s.log.Warn("an event after the task's end is not recorded", "task", r.id, "event", ev.Type)
		return
	}
	if ev.Time.IsZero() {
		ev.Time = r.s.clock.Now()
	}
	if ev.Type == lifecycle.EventStepFinished && ev.Record != nil {
		st := storage.Step{TaskID: r.id, StepRecord: *ev.Record}
		if ev.Scene != nil {
			if sj, err := json.Marshal(ev.Scene); err != nil {
				r.s.log.Error("record step scene", "task", r.id, "step", ev.Record.Number, "err", err)
			} else {
				st.Scene = sj
			}
		}
		r.push(record{what: fmt.Sprintf("step %d", st.Number), write: func(ctx context.Context) error {
			return r.s.store.SaveStep(ctx, st)
		}})
	}
	data, err := json.Marshal(eventData(ev))
	if err != nil {
		r.s.log.Error("record event", "task", r.id, "type", ev.Type, "err", err)
		return
	}
	r.event(storage.Event{TaskID: r.id, Type: ev.Type, Step: ev.Step, Time: ev.Time, Data: data})
}

// StatusData is the data of a status event (and of an event stream's end).
type StatusData struct {
	Status lifecycle.Status `json:"status"`
	Cause  lifecycle.Cause  `json:"cause,omitempty"`
	Reason string           `json:"reason,omitempty"`
}

func statusEvent(id string, st lifecycle.Status, cause lifecycle.Cause, reason string, at time.Time) storage.Event {
	data, _ := json.Marshal(StatusData{Status: st, Cause: cause, Reason: reason})
	return storage.Event{TaskID: id, Type: lifecycle.EventStatus, Time: at, Data: data}
}

// recordedEvent is the small JSON kept for an event: never a Scene (the
// step row has that), never pixels.
type recordedEvent struct {
	Intent   string               `json:"intent,omitempty"`
	Call     *tools.Call          `json:"call,omitempty"`
	Number   int                  `json:"number,omitempty"`
	Result   string               `json:"result,omitempty"`
	Changed  *bool                `json:"changed,omitempty"`
	Duration time.Duration        `json:"duration_ns,omitempty"`
	Status   lifecycle.StepStatus `json:"status,omitempty"`
	Reason   string               `json:"reason,omitempty"`
	Package  string               `json:"package,omitempty"`
	Elements int                  `json:"elements,omitempty"`
	Plan     []plannedStep        `json:"plan,omitempty"`
	Usage    *plan.Usage          `json:"usage,omitempty"`
}

type plannedStep struct {
	Intent string     `json:"intent"`
	Call   tools.Call `json:"call"`
}

func eventData(ev runtime.Event) recordedEvent {
	d := recordedEvent{Intent: ev.Intent, Call: ev.Call, Reason: ev.Reason}
	switch ev.Type {
	case lifecycle.EventSceneObserved:
		if ev.Scene != nil {
			d.Package, d.Elements = ev.Scene.Package, len(ev.Scene.Elements)
		}
	case lifecycle.EventPlan:
		for _, ps := range ev.Steps {
			d.Plan = append(d.Plan, plannedStep{Intent: ps.Intent, Call: ps.Call})
		}
		if ev.Usage != (plan.Usage{}) {
			u := ev.Usage
			d.Usage = &u
		}
	case lifecycle.EventAttempt:
		if a := ev.Attempt; a != nil {
			changed := a.Changed
			d.Number, d.Result, d.Changed, d.Duration = a.Number, a.Result, &changed, a.Duration
		}
	case lifecycle.EventStepFinished:
		if r := ev.Record; r != nil {
			d.Status, d.Reason, d.Duration = r.Status, r.Reason, r.Duration
			if d.Call == nil {
				c := r.Call
				d.Call = &c
			}
		}
	}
	return d
}
