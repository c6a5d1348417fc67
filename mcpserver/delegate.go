package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"phonepilot/lifecycle"
	"phonepilot/storage"
	"phonepilot/task"
)

type runTaskArgs struct {
	Goal     string `json:"goal"`
	Device   string `json:"device"`
	Planner  string `json:"planner"`
	MaxSteps int    `json:"max_steps"`
}

// cancelGrace bounds the wait for a cancelled task's end.
const cancelGrace = 10 * time.Second

// needPerson stops following a task that waits for a person the client
// cannot ask.
type needPerson struct {
	t   storage.Task
	why string // why the client's user did not decide
}

func (*needPerson) Error() string { return "the task waits for a person" }

func (s *Server) runTask(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if s.cfg.Tasks == nil {
		return errorResult("run_task: this server runs no tasks"), nil
	}
	var a runTaskArgs
	if err := decodeArgs(req.Params.Arguments, &a); err != nil {
		return errorResult("run_task: %v", err), nil
	}
	a.Goal = strings.TrimSpace(a.Goal)
	if err := task.CheckGoal(a.Goal, 0); err != nil {
		return errorResult(`run_task: argument "goal": %s`, err.(*task.GoalError).Problem), nil
	}
	switch {
	case a.Planner != "" && !slices.Contains(s.cfg.Planners, a.Planner):
		return errorResult(`run_task: argument "planner": must be one of %s`, strings.Join(s.cfg.Planners, ", ")), nil
	case a.MaxSteps < 0 || a.MaxSteps > s.cfg.MaxSteps:
		return errorResult(`run_task: argument "max_steps": must be between 1 and %d`, s.cfg.MaxSteps), nil
	}
	if a.Planner == "" {
		a.Planner = s.cfg.Planners[0]
	}
	if a.MaxSteps == 0 {
		a.MaxSteps = s.cfg.MaxSteps
	}
	return s.submitAndFollow(ctx, req, "run_task", a.Device, a.MaxSteps, func(dev string) (task.Request, error) {
		return task.Request{Goal: a.Goal, Device: dev, Planner: a.Planner, MaxSteps: a.MaxSteps}, nil
	})
}

// submitAndFollow leases the device, submits the task request builds for
// it, and follows the task to its end (or to a person's decision the client
// cannot take): run_task's and run_flow's common path. tool names the
// calling tool in errors.
func (s *Server) submitAndFollow(ctx context.Context, req *mcp.CallToolRequest, tool, device string, maxSteps int,
	build func(dev string) (task.Request, error)) (*mcp.CallToolResult, error) {
	st := s.sessionOf(req.Session)
	st.mu.Lock()
	dev := st.pick(device, s.cfg.DefaultDevice)
	st.mu.Unlock()
	if err := s.cfg.Devices.Check(dev); err != nil {
		return errorResult("%s: unknown device: %v (list_devices names the devices)", tool, err), nil
	}
	treq, err := build(dev)
	if err != nil {
		return errorResult("%s: %v", tool, err), nil
	}
	if id := s.leases.Running(dev, st.id); id != "" && !s.ended(ctx, id) {
		return errorResult("%s: device %s is busy: your task %s runs on it", tool, dev, id), nil
	}
	if err := s.leases.Acquire(dev, st.id, st.client); err != nil {
		return errorResult("%s: %v", tool, err), nil
	}
	t, err := s.cfg.Tasks.Submit(ctx, treq)
	if err != nil {
		return errorResult("%s: %v", tool, err), nil
	}
	unhold := s.leases.Hold(dev, st.id, t.ID)
	s.log.Info("mcp "+tool, "session", st.id, "task", t.ID, "device", dev)

	final, steps, err := s.follow(ctx, req, t.ID, maxSteps)
	var np *needPerson
	switch {
	case errors.As(err, &np):
		// The task goes on waiting; the device stays leased until it ends.
		go func() {
			defer unhold()
			_, _ = s.cfg.Tasks.Watch(context.Background(), t.ID, 0, func(storage.Event) error { return nil })
		}()
		return textResult(fmt.Sprintf("task %s is %s: %s.\nA person must decide, and %s%s. "+
			"Then follow it with get_task %s.", t.ID, np.t.Status, pendingText(np.t.Pending), np.why, s.hint(t.ID), t.ID)), nil
	case err != nil && ctx.Err() != nil:
		// The client cancelled the call (notifications/cancelled): the task
		// is cancelled with it.
		defer unhold()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelGrace)
		defer cancel()
		if _, cerr := s.cfg.Tasks.Cancel(cctx, t.ID); cerr != nil {
			s.log.Info("cancel task after the client cancelled", "task", t.ID, "err", cerr)
		}
		_, _ = s.cfg.Tasks.Watch(cctx, t.ID, 0, func(storage.Event) error { return nil })
		return errorResult("%s cancelled: task %s was cancelled", tool, t.ID), nil
	case err != nil:
		unhold()
		return errorResult("%s: following task %s: %v", tool, t.ID, err), nil
	}
	unhold()
	return textResult(taskText(final, steps)), nil
}

// stepEvent is the part of a step_finished event's data read here.
type stepEvent struct {
	Intent string               `json:"intent"`
	Status lifecycle.StepStatus `json:"status"`
	Reason string               `json:"reason"`
}

// follow watches a task to its end, sending a progress notification per
// step and putting a pending decision to the client's user when it can.
func (s *Server) follow(ctx context.Context, req *mcp.CallToolRequest, id string, maxSteps int) (storage.Task, []string, error) {
	token := req.Params.GetProgressToken()
	var steps []string
	var lastNote time.Time
	final, err := s.cfg.Tasks.Watch(ctx, id, 0, func(e storage.Event) error {
		switch e.Type {
		case lifecycle.EventStepFinished:
			var d stepEvent
			_ = json.Unmarshal(e.Data, &d)
			line := fmt.Sprintf("step %d %s: %s", e.Step, d.Status, d.Intent)
			if d.Reason != "" {
				line += " — " + d.Reason
			}
			steps = append(steps, line)
			if token != nil {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token, Progress: float64(e.Step), Total: float64(maxSteps), Message: line,
				}); err != nil {
					s.log.Debug("progress notification", "task", id, "err", err)
				}
				lastNote = s.cfg.Clock.Now()
			}
		case lifecycle.EventApprovalRequested, lifecycle.EventQuestionAsked:
			return s.decide(ctx, req.Session, id)
		}
		return nil
	})
	if !lastNote.IsZero() && err == nil {
		// The TypeScript SDK hands notifications to their handler a
		// microtask later but settles a response at once: a result read in
		// the same chunk as the last progress notifications drops them
		// ("unknown token"). A moment between the two keeps them apart.
		if d := progressGap - s.cfg.Clock.Now().Sub(lastNote); d > 0 {
			_ = s.cfg.Clock.Sleep(ctx, d)
		}
	}
	return final, steps, err
}

// progressGap is the least time between a task's last progress
// notification and the run_task result.
const progressGap = 100 * time.Millisecond

// decide puts a task's pending decision to the client's user, or stops
// following it (*needPerson) when the client cannot ask.
func (s *Server) decide(ctx context.Context, ss *mcp.ServerSession, id string) error {
	t, err := s.cfg.Tasks.Get(ctx, id)
	if err != nil || t.Pending == nil {
		return nil // decided meanwhile (another front end), or gone: the events tell
	}
	if !canElicit(ss) {
		return &needPerson{t: t, why: "this MCP client cannot ask its user (no elicitation support)"}
	}
	p := t.Pending
	if p.Kind == lifecycle.PendingQuestion {
		text, ok, err := askText(ctx, ss, p.Question)
		if err != nil {
			return err
		}
		if ok {
			_, err = s.cfg.Tasks.Answer(ctx, id, "mcp", text)
			return ignoreConflict(err)
		}
		return &needPerson{t: t, why: "the user gave no answer through the MCP client"}
	}
	what := p.Call.String()
	if p.Element != nil {
		what += fmt.Sprintf(" on [%d] %s %q", p.Element.Index, p.Element.Class, p.Element.Label)
	}
	yes, note, err := askYes(ctx, ss, approvalMessage(what, p.Category, p.Reason, ""))
	if err != nil {
		return err
	}
	if yes {
		_, err = s.cfg.Tasks.Approve(ctx, id, "mcp", note)
	} else {
		_, err = s.cfg.Tasks.Deny(ctx, id, "mcp", note)
	}
	return ignoreConflict(err)
}

// ignoreConflict drops the error of a decision that lost to another one
// (a person on the web page was quicker): the task goes on either way.
func ignoreConflict(err error) error {
	var ce *storage.ConflictError
	if errors.As(err, &ce) || errors.Is(err, task.ErrConflict) {
		return nil
	}
	return err
}

type taskIDArgs struct {
	TaskID string `json:"task_id"`
}

func (s *Server) getTask(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if s.cfg.Tasks == nil {
		return errorResult("get_task: this server runs no tasks"), nil
	}
	var a taskIDArgs
	if err := decodeArgs(req.Params.Arguments, &a); err != nil || a.TaskID == "" {
		return errorResult(`get_task: argument "task_id": required`), nil
	}
	t, err := s.cfg.Tasks.Get(ctx, a.TaskID)
	if err != nil {
		return errorResult("get_task: %v", err), nil
	}
	var lines []string
	if steps, err := s.cfg.Tasks.Steps(ctx, t.ID); err == nil {
		for _, st := range steps {
			line := fmt.Sprintf("step %d %s: %s", st.Number, st.Status, st.Intent)
			if st.Reason != "" {
				line += " — " + st.Reason
			}
			lines = append(lines, line)
		}
	}
	text := taskText(t, lines)
	if t.Pending != nil {
		text += "\npending: " + pendingText(t.Pending) + "; a person decides" + s.hint(t.ID)
	}
	return textResult(text), nil
}

func (s *Server) cancelTask(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if s.cfg.Tasks == nil {
		return errorResult("cancel_task: this server runs no tasks"), nil
	}
	var a taskIDArgs
	if err := decodeArgs(req.Params.Arguments, &a); err != nil || a.TaskID == "" {
		return errorResult(`cancel_task: argument "task_id": required`), nil
	}
	t, err := s.cfg.Tasks.Cancel(ctx, a.TaskID)
	if err != nil {
		return errorResult("cancel_task: %v", err), nil
	}
	return textResult(fmt.Sprintf("task %s: %s", t.ID, t.Status)), nil
}

// taskText is a task as a model reads it: status, cause, reason, steps.
func taskText(t storage.Task, steps []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "task %s %s", t.ID, t.Status)
	if t.Cause != "" {
		fmt.Fprintf(&b, " (cause %s)", t.Cause)
	}
	if t.Reason != "" {
		fmt.Fprintf(&b, ": %s", t.Reason)
	}
	fmt.Fprintf(&b, "\ngoal: %s · device %s · planner %s", t.Goal, t.Device, t.Planner)
	for _, l := range steps {
		b.WriteString("\n" + l)
	}
	return b.String()
}
