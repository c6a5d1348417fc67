package main

import (
	"phonepilot/task/lifecycle"

	"context"
	"encoding/json"
	"log/slog"
	"time"

	"phonepilot/api"
	"phonepilot/plan"
	"phonepilot/runtime"
	"phonepilot/storage"
	"phonepilot/tools"
)

// recordTimeout bounds one write of the recorder. Writes use their own
// context, not the task's: the step that finishes as a task is cancelled
// must still be recorded.
const recordTimeout = 10 * time.Second

// newRecorder returns a runtime OnEvent that records a task as it runs:
// each step is saved the moment it finishes (with the Scene it acted on, in
// compact JSON), and every event is appended, so a crash loses at most the
// step in flight. The task's own status is its owner's business (the API
// server, or finishRecording for `run`), so runtime "status" events are not
// recorded here. Write errors are logged, never fatal to the task.
func newRecorder(store storage.Store, task storage.Task, log *slog.Logger) func(runtime.Event) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(ev runtime.Event) {
		if ev.Type == lifecycle.EventStatus {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
		defer cancel()
		if ev.Type == lifecycle.EventStepFinished && ev.Record != nil {
			st := storage.Step{TaskID: task.ID, StepRecord: *ev.Record}
			if ev.Scene != nil {
				sj, err := json.Marshal(ev.Scene)
				if err != nil {
					log.Error("record step scene", "task", task.ID, "step", ev.Record.Number, "err", err)
				} else {
					st.Scene = sj
				}
			}
			if err := store.SaveStep(ctx, st); err != nil {
				log.Error("record step", "task", task.ID, "step", ev.Record.Number, "err", err)
			}
		}
		data, err := json.Marshal(eventData(ev))
		if err != nil {
			log.Error("record event", "task", task.ID, "type", ev.Type, "err", err)
			return
		}
		if _, err := store.AppendEvent(ctx, storage.Event{TaskID: task.ID, Type: ev.Type, Step: ev.Step, Time: ev.Time, Data: data}); err != nil {
			log.Error("record event", "task", task.ID, "type", ev.Type, "err", err)
		}
	}
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

// startRecording creates a running task for `phonepilot run` and returns the
// OnEvent to give the runtime and the function to call with the Result.
func startRecording(ctx context.Context, store storage.Store, t storage.Task, log *slog.Logger) (storage.Task, func(runtime.Event), func(runtime.Result), error) {
	t.Status = lifecycle.Running
	t.Owner = api.DefaultOwner()
	now := time.Now()
	t.Created, t.Started = now, &now
	task, err := store.CreateTask(ctx, t)
	if err != nil {
		return storage.Task{}, nil, nil, err
	}
	appendStatus(store, task.ID, lifecycle.Running, "", log)
	finish := func(res runtime.Result) {
		ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
		defer cancel()
		status := res.Status
		if !status.Terminal() {
			status = lifecycle.Failed
		}
		if _, err := store.UpdateStatus(ctx, task.ID, storage.Change{From: []lifecycle.Status{lifecycle.Running}, To: status,
			Reason: res.Reason, At: time.Now(), Usage: res.Usage}); err != nil && log != nil {
			log.Error("record task end", "task", task.ID, "err", err)
		}
		appendStatus(store, task.ID, status, res.Reason, log)
	}
	return task, newRecorder(store, task, log), finish, nil
}

func appendStatus(store storage.Store, id string, status lifecycle.Status, reason string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	data, _ := json.Marshal(map[string]string{"status": string(status), "reason": reason})
	if _, err := store.AppendEvent(ctx, storage.Event{TaskID: id, Type: lifecycle.EventStatus, Time: time.Now(), Data: data}); err != nil && log != nil {
		log.Error("record status", "task", id, "err", err)
	}
}
