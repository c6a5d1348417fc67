package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"phonepilot/lifecycle"
	"phonepilot/runtime"
	"phonepilot/scene"
	"phonepilot/storage"
)

// DefaultWaitTimeout is how long a task waits for a person when
// Config.ApprovalTimeout or Config.AnswerTimeout is zero.
const DefaultWaitTimeout = 10 * time.Minute

// waiting is a task's pending decision while its runner waits for a person.
type waiting struct {
	pending storage.Pending
	// decided receives the one decision that won (buffered: the winner
	// never blocks).
	decided chan verdict
	taken   bool // a decision won; later ones conflict
}

// verdict is a person's decision about a pending action or question.
type verdict struct {
	approved bool
	by, note string
	text     string
}

// person is the runtime.Person of one task of this service: it puts the
// task in waiting_approval / waiting_user with its pending decision, waits
// for Approve, Deny or Answer (or the timeout, or the task's end), and puts
// the task back to running.
type person struct {
	s   *Service
	e   *entry
	rec *recorder
}

var _ runtime.Person = (*person)(nil)

// ApprovalPending is the pending decision of an action the gate stopped:
// the call, the element it acts on, the gate's category and reason, and the
// screen (compact Scene JSON) for a front end's wireframe.
func ApprovalPending(a runtime.Approval) storage.Pending {
	pend := storage.Pending{Kind: lifecycle.PendingApproval, Step: a.Step, Call: a.Call,
		Category: string(a.Decision.Category), Reason: a.Decision.Reason, Scene: sceneJSON(a.Scene)}
	if el := a.Element; el != nil {
		pend.Element = &storage.PendingElement{Index: el.Index, Class: el.Class, Label: el.Label(), ID: el.ResourceID, Bounds: el.Bounds}
	}
	return pend
}

// sceneJSON is sc in compact Scene JSON, nil for none.
func sceneJSON(sc *scene.Scene) json.RawMessage {
	if sc == nil {
		return nil
	}
	sj, err := json.Marshal(sc)
	if err != nil {
		return nil
	}
	return sj
}

// Approve implements runtime.Person.
func (p *person) Approve(ctx context.Context, a runtime.Approval) (runtime.ApprovalDecision, error) {
	v, err := p.wait(ctx, ApprovalPending(a), p.s.cfg.ApprovalTimeout, runtime.ErrApprovalTimeout)
	if err != nil {
		return runtime.ApprovalDecision{}, err
	}
	return runtime.ApprovalDecision{Approved: v.approved, By: v.by, Note: v.note, Unasked: v.by == storage.ByNobody}, nil
}

// Ask implements runtime.Person.
func (p *person) Ask(ctx context.Context, q runtime.Question) (runtime.Answer, error) {
	pend := storage.Pending{Kind: lifecycle.PendingQuestion, Step: q.Step, Call: q.Call, Question: q.Text, Scene: sceneJSON(q.Scene)}
	v, err := p.wait(ctx, pend, p.s.cfg.AnswerTimeout, runtime.ErrAnswerTimeout)
	if err != nil {
		return runtime.Answer{}, err
	}
	return runtime.Answer{By: v.by, Text: v.text}, nil
}

// wait records the pending decision, waits for it, and records the outcome.
func (p *person) wait(ctx context.Context, pend storage.Pending, timeout time.Duration, errTimeout error) (verdict, error) {
	s, e := p.s, p.e
	if timeout <= 0 {
		timeout = DefaultWaitTimeout
	}
	now := s.clock.Now()
	pend.Since, pend.Expires = now, now.Add(timeout)
	status := pend.Kind.Status()
	w := &waiting{pending: pend, decided: make(chan verdict, 1)}
	s.mu.Lock()
	e.wait = w
	s.mu.Unlock()

	requested, decided := lifecycle.EventApprovalRequested, lifecycle.EventApprovalDecided
	if pend.Kind == lifecycle.PendingQuestion {
		requested, decided = lifecycle.EventQuestionAsked, lifecycle.EventQuestionAnswered
	}
	p.rec.change(storage.Change{From: []lifecycle.Status{lifecycle.Running}, To: status, At: now, Pending: &pend})
	p.rec.event(dataEvent(e.id, requested, pend.Step, now, storage.PendingEvent{Pending: pend}))
	p.rec.event(statusEvent(e.id, status, lifecycle.CauseNone, "", now))
	s.hub.notify(e.id)
	if s.cfg.OnPending != nil {
		go s.cfg.OnPending(e.id, pend)
	}
	s.log.Info("task waits for a person", "task", e.id, "kind", pend.Kind, "step", pend.Step, "category", pend.Category)

	tctx, stop := context.WithCancel(ctx)
	defer stop()
	expired := make(chan struct{})
	go func() {
		if s.clock.Sleep(tctx, timeout) == nil {
			close(expired)
		}
	}()
	var v verdict
	select {
	case v = <-w.decided:
	case <-expired:
		// A decision may have won the race against the timeout: it stands.
		s.mu.Lock()
		if w.taken {
			s.mu.Unlock()
			v = <-w.decided
			break
		}
		w.taken = true
		e.wait = nil
		s.mu.Unlock()
		return verdict{}, fmt.Errorf("%w (waited %s)", errTimeout, timeout)
	case <-ctx.Done():
		s.mu.Lock()
		w.taken = true
		e.wait = nil
		s.mu.Unlock()
		return verdict{}, ctx.Err()
	}
	at := s.clock.Now()
	if pend.Kind == lifecycle.PendingQuestion {
		p.rec.event(dataEvent(e.id, decided, pend.Step, at, storage.QuestionAnsweredEvent{By: v.by, Text: v.text}))
	} else {
		p.rec.event(dataEvent(e.id, decided, pend.Step, at, storage.ApprovalDecidedEvent{Approved: v.approved, By: v.by, Note: v.note}))
	}
	p.rec.change(storage.Change{From: []lifecycle.Status{status}, To: lifecycle.Running, At: at})
	p.rec.event(statusEvent(e.id, lifecycle.Running, lifecycle.CauseNone, "", at))
	s.mu.Lock()
	e.wait = nil
	s.mu.Unlock()
	s.hub.notify(e.id)
	return v, nil
}

func dataEvent(id string, typ lifecycle.EventType, step int, at time.Time, data any) storage.Event {
	b, _ := json.Marshal(data)
	return storage.Event{TaskID: id, Type: typ, Step: step, Time: at, Data: b}
}

// Approve runs the action a task waits to have approved, exactly once, and
// resumes it. by says who decided ("cli", "api", "web"); note is theirs.
// No such task: an error wrapping storage.ErrNotFound; nothing waiting for
// approval: an error wrapping ErrConflict. Of concurrent decisions exactly
// one wins.
func (s *Service) Approve(ctx context.Context, id, by, note string) (storage.Task, error) {
	return s.decide(ctx, id, lifecycle.PendingApproval, verdict{approved: true, by: by, note: note})
}

// Deny refuses the action a task waits to have approved: the planner is
// told and may try another way; a task that cannot go on fails with cause
// approval_denied. Errors as Approve's.
func (s *Service) Deny(ctx context.Context, id, by, note string) (storage.Task, error) {
	return s.decide(ctx, id, lifecycle.PendingApproval, verdict{approved: false, by: by, note: note})
}

// Answer answers the question a task waits on: the planner gets text and a
// fresh screen. Errors as Approve's.
func (s *Service) Answer(ctx context.Context, id, by, text string) (storage.Task, error) {
	return s.decide(ctx, id, lifecycle.PendingQuestion, verdict{by: by, text: text})
}

func (s *Service) decide(ctx context.Context, id string, kind lifecycle.PendingKind, v verdict) (storage.Task, error) {
	if v.by == "" {
		return storage.Task{}, errors.New("task: a decision needs who made it")
	}
	s.mu.Lock()
	e := s.entries[id]
	var w *waiting
	if e != nil && e.phase == phaseRunning && !e.cancelled {
		w = e.wait
	}
	if w == nil || w.taken || w.pending.Kind != kind {
		s.mu.Unlock()
		if e == nil && s.cfg.Queue != nil {
			if t, err := s.store.Task(ctx, id); err == nil && t.Status == kind.Status() {
				return s.decideRemote(ctx, t, kind, v)
			}
		}
		return storage.Task{}, s.nothingPending(ctx, id, kind, e != nil)
	}
	w.taken = true
	w.decided <- v
	// What Get answers until the store has the change: running, nothing
	// pending (the runner resumes at once).
	s.mu.Unlock()
	t, err := s.store.Task(ctx, id)
	if err != nil {
		return storage.Task{}, err
	}
	t.Status, t.Pending = lifecycle.Running, nil
	return t, nil
}

// nothingPending is the error of a decision about a task that waits for no
// such decision.
func (s *Service) nothingPending(ctx context.Context, id string, kind lifecycle.PendingKind, ours bool) error {
	t, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	what := "approval"
	if kind == lifecycle.PendingQuestion {
		what = "answer"
	}
	if !ours && t.Status.Waiting() {
		return fmt.Errorf("task %s waits in another phonepilot process sharing this database (%s); decide there: %w", id, t.Owner, ErrConflict)
	}
	return fmt.Errorf("task %s is %s and waits for no %s: %w", id, t.Status, what, ErrConflict)
}

// decideRemote hands a decision about a task that waits in another process
// (a farm's worker) to it and returns the task as stored once the store no
// longer shows it waiting for that decision.
func (s *Service) decideRemote(ctx context.Context, t storage.Task, kind lifecycle.PendingKind, v verdict) (storage.Task, error) {
	c := Command{Kind: CommandAnswer, By: v.by, Text: v.text}
	if kind == lifecycle.PendingApproval {
		c = Command{Kind: CommandDeny, By: v.by, Note: v.note}
		if v.approved {
			c.Kind = CommandApprove
		}
	}
	since := time.Time{}
	if t.Pending != nil {
		since = t.Pending.Since
	}
	got, err := s.remote(ctx, t.ID, c, func(t storage.Task) bool {
		return t.Status != kind.Status() || t.Pending == nil || !t.Pending.Since.Equal(since)
	})
	if err != nil {
		return storage.Task{}, err
	}
	return got, nil
}
