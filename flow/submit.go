package flow

import (
	"context"
	"encoding/json"
	"fmt"

	"phonepilot/storage"
	"phonepilot/task"
)

// PlannerName is the planner a flow task is recorded with.
const PlannerName = "flow"

// Run is a flow and the parameters a run sets, as a task carries them (in
// its Config, under "flow").
type Run struct {
	Flow   *Flow             `json:"flow"`
	Params map[string]string `json:"params,omitempty"`
}

// Request is the task.Request of a run of f on device: the goal with its
// parameters bound, planner "flow", and the flow itself. Bad parameters
// are an error wrapping ErrParams.
func Request(f *Flow, params map[string]string, device string) (task.Request, error) {
	if err := f.Validate(); err != nil {
		return task.Request{}, err
	}
	bound, err := f.Bind(params)
	if err != nil {
		return task.Request{}, err
	}
	raw, err := json.Marshal(Run{Flow: f, Params: params})
	if err != nil {
		return task.Request{}, fmt.Errorf("flow: %w", err)
	}
	return task.Request{Goal: bound.Goal, Device: device, Planner: PlannerName, Flow: raw}, nil
}

// Submitter is the part of task.Service a flow run is submitted through.
type Submitter interface {
	Submit(ctx context.Context, req task.Request) (storage.Task, error)
}

// Submit queues a run of f with params on device as a task: recorded,
// watched and gated like any other (the API's POST /v1/flows/run, MCP's
// run_flow). The service's runner builds the replay from the task
// (FromTask).
func Submit(ctx context.Context, svc Submitter, f *Flow, params map[string]string, device string) (storage.Task, error) {
	req, err := Request(f, params, device)
	if err != nil {
		return storage.Task{}, err
	}
	return svc.Submit(ctx, req)
}

// FromTask reads the flow run a flow task carries.
func FromTask(t storage.Task) (Run, error) {
	var c struct {
		Flow *Run `json:"flow"`
	}
	if err := json.Unmarshal(t.Config, &c); err != nil || c.Flow == nil || c.Flow.Flow == nil {
		return Run{}, fmt.Errorf("%w: task %s carries no flow", ErrInvalid, t.ID)
	}
	if err := c.Flow.Flow.Validate(); err != nil {
		return Run{}, err
	}
	return *c.Flow, nil
}
