package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"phonepilot/internal/jsonin"
	"phonepilot/lifecycle"
	"phonepilot/storage"
	"phonepilot/task"
)

// taskRequest is the body of POST /v1/tasks.
type taskRequest struct {
	Goal     string `json:"goal"`
	Device   string `json:"device"`
	Planner  string `json:"planner"`
	MaxSteps int    `json:"max_steps"`
	// Labels, with device "any", route the task to any free device of a
	// farm whose labels include them all.
	Labels map[string]string `json:"labels"`
}

// maxLabels is the most labels a task may ask for.
const maxLabels = 32

// decodeBody reads exactly one JSON object, naming the field when a value
// has the wrong type or a field is unknown. The whole body is read first
// (it is small: limit), so that data after the object is refused rather
// than silently ignored.
func decodeBody(r *http.Request, w http.ResponseWriter, limit int64, v any) error {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return err // *http.MaxBytesError: 413
	}
	start := bytes.TrimLeft(data, " \t\r\n")
	switch {
	case len(start) == 0:
		return badField("body", "empty; send a JSON object")
	case start[0] != '{':
		return badField("body", "must be a JSON object {...}, got %s", jsonValueKind(start[0]))
	}
	if err := jsonin.Check(data); err != nil {
		var dup *jsonin.DuplicateKeyError
		if errors.As(err, &dup) {
			return badField(dup.Key, "%v", err)
		}
		return badField("body", "%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var (
			ute *json.UnmarshalTypeError
			se  *json.SyntaxError
		)
		switch {
		case errors.As(err, &ute):
			return badField(ute.Field, "must be %s, got %s", jsonTypeName(ute.Type), ute.Value)
		case errors.As(err, &se):
			return badField("body", "not valid JSON at byte %d: %v", se.Offset, err)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return badField("body", "the JSON object is cut short")
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return badField(name, "unknown field")
		}
		return badField("body", "%v", err)
	}
	if end := dec.InputOffset(); len(bytes.TrimSpace(data[end:])) > 0 {
		return badField("body", "unexpected data after the JSON object at byte %d; send exactly one object", end)
	}
	return nil
}

func (s *Server) createTask(w http.ResponseWriter, r *http.Request) error {
	var req taskRequest
	if err := decodeBody(r, w, s.cfg.MaxBodyBytes, &req); err != nil {
		return err
	}
	req.Goal = strings.TrimSpace(req.Goal)
	if err := task.CheckGoal(req.Goal, s.cfg.MaxGoalRunes); err != nil {
		return badField("goal", "%s", err.(*task.GoalError).Problem)
	}
	if req.Device == "" {
		req.Device = s.cfg.DefaultDevice
	}
	if len(req.Labels) > 0 && req.Device != "any" {
		return badField("labels", `only with "device": "any" (a named device is that device)`)
	}
	if len(req.Labels) > maxLabels {
		return badField("labels", "at most %d", maxLabels)
	}
	for k, v := range req.Labels {
		if k == "" || len(k) > 64 || len(v) > 128 {
			return badField("labels", "a key is 1-64 bytes and a value at most 128 (%q)", k)
		}
	}
	if err := s.devices.Check(req.Device); err != nil {
		return badField("device", "%v", err)
	}
	if req.Planner == "" {
		req.Planner = s.cfg.Planners[0]
	}
	if !slices.Contains(s.cfg.Planners, req.Planner) {
		return badField("planner", "must be one of %s", strings.Join(s.cfg.Planners, ", "))
	}
	switch {
	case req.MaxSteps == 0:
		req.MaxSteps = s.cfg.MaxSteps
	case req.MaxSteps < 0 || req.MaxSteps > s.cfg.MaxStepsCeiling:
		return badField("max_steps", "must be 1..%d", s.cfg.MaxStepsCeiling)
	}
	t, err := s.svc.Submit(r.Context(), task.Request{Goal: req.Goal, Device: req.Device, Planner: req.Planner, MaxSteps: req.MaxSteps, Labels: req.Labels})
	if errors.Is(err, task.ErrUnroutable) {
		field := "labels"
		if len(req.Labels) == 0 {
			field = "device"
		}
		return badField(field, "%v", err)
	}
	if err != nil {
		return serviceError(err)
	}
	w.Header().Set("Location", "/v1/tasks/"+t.ID)
	writeJSON(w, http.StatusAccepted, t)
	return nil
}

// serviceError gives the service's refusals their HTTP meaning.
func serviceError(err error) error {
	var ge *task.GoalError
	if errors.As(err, &ge) {
		return badField("goal", "%s", ge.Problem)
	}
	if errors.Is(err, task.ErrClosed) {
		return fmt.Errorf("%w: %w", errConflict, err)
	}
	return err
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) error {
	q := storage.Query{Status: lifecycle.Status(r.URL.Query().Get("status")), Cursor: r.URL.Query().Get("cursor")}
	if q.Status != "" && !q.Status.Valid() {
		return badField("status", "must be one of %s", lifecycle.Join(lifecycle.Statuses, ", "))
	}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > storage.MaxPage {
			return badField("limit", "must be 1..%d", storage.MaxPage)
		}
		q.Limit = n
	}
	if q.Cursor != "" {
		if n, err := strconv.ParseInt(q.Cursor, 10, 64); err != nil || n < 1 {
			return badField("cursor", "not a cursor this server gave out")
		}
	}
	page, err := s.svc.List(r.Context(), q)
	if err != nil {
		return err
	}
	for i := range page.Tasks {
		page.Tasks[i].Config = nil     // per task only: GET /v1/tasks/{id}
		page.Tasks[i].FinalScene = nil // likewise
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.svc.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) getSteps(w http.ResponseWriter, r *http.Request) error {
	steps, err := s.svc.Steps(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"steps": steps})
	return nil
}

// cancelTask cancels a queued or running task (exactly one of concurrent
// cancels succeeds); a final task, or one being cancelled, is a conflict.
func (s *Server) cancelTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.svc.Cancel(r.Context(), r.PathValue("id"))
	if err != nil {
		return serviceError(err)
	}
	if t.Status != lifecycle.Cancelled {
		// It finished on its own before the cancel reached it.
		return &storage.ConflictError{ID: t.ID, Current: t.Status, To: lifecycle.Cancelled}
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// deviceStatus is a device with what this server is doing on it.
type deviceStatus struct {
	DeviceInfo
	Running string `json:"running,omitempty"` // the running task's ID
	Queued  int    `json:"queued"`
	// Task is the task on the device now: running, or waiting for a
	// person (it holds the phone meanwhile).
	Task *deviceTask `json:"task,omitempty"`
	// QueuedTasks are the tasks waiting for the device, oldest first.
	QueuedTasks []deviceTask `json:"queued_tasks,omitempty"`
}

// deviceTask is a task as a device's row names it.
type deviceTask struct {
	ID     string           `json:"id"`
	Goal   string           `json:"goal"`
	Status lifecycle.Status `json:"status"`
}

func (s *Server) listDevices(w http.ResponseWriter, r *http.Request) error {
	devs, err := s.devices.List(r.Context())
	if err != nil {
		return err
	}
	// The store's active tasks, by device: this server's and those of other
	// processes sharing the store.
	on := map[string]*deviceTask{}
	queued := map[string][]deviceTask{}
	for _, st := range append([]lifecycle.Status{lifecycle.Queued}, lifecycle.ActiveStatuses()...) {
		page, err := s.svc.List(r.Context(), storage.Query{Status: st, Limit: storage.MaxPage})
		if err != nil {
			return err
		}
		for _, t := range slices.Backward(page.Tasks) { // oldest first
			dt := deviceTask{ID: t.ID, Goal: t.Goal, Status: t.Status}
			switch {
			case st == lifecycle.Queued:
				queued[t.Device] = append(queued[t.Device], dt)
			case on[t.Device] == nil:
				on[t.Device] = &dt
			}
		}
	}
	load := s.svc.Load()
	out := make([]deviceStatus, 0, len(devs))
	for _, d := range devs {
		ds := deviceStatus{DeviceInfo: d, Queued: load[d.Name].Queued, Running: load[d.Name].Running,
			Task: on[d.Name], QueuedTasks: queued[d.Name]}
		if ds.Running == "" && ds.Task != nil && ds.Task.Status == lifecycle.Running {
			ds.Running = ds.Task.ID // run by another process sharing the store
		}
		out = append(out, ds)
	}
	writeJSON(w, http.StatusOK, map[string]any{"devices": out})
	return nil
}

// deviceState answers the device's own state JSON as it reports it: tests
// and benchmarks judge a task on the phone (an order placed, a message
// sent), not on what the agent says.
func (s *Server) deviceState(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("id")
	st, err := s.devices.State(r.Context(), name)
	if err != nil {
		return err
	}
	if !json.Valid(st) {
		return fmt.Errorf("device %s reported a state that is not JSON", name)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(st)
	return nil
}

// lifecycleDoc is the vocabulary of GET /v1/lifecycle: the web page (and
// any client) takes the words from here instead of spelling them. Tones say
// how to colour a status ("active", "wait" for a task that waits for a
// person, "ok", "bad", "warn"; a word without one is neutral), so the
// stylesheet names tones, not statuses.
type lifecycleDoc struct {
	Statuses     []lifecycle.Status      `json:"statuses"`
	Terminal     []lifecycle.Status      `json:"terminal"`
	Causes       []lifecycle.Cause       `json:"causes"`
	EventTypes   []lifecycle.EventType   `json:"event_types"`
	StepStatuses []lifecycle.StepStatus  `json:"step_statuses"`
	PendingKinds []lifecycle.PendingKind `json:"pending_kinds"` // what a waiting task's pending decision is
	StreamEnd    string                  `json:"stream_end"`    // the last message of every event stream
	Tones        map[string]string       `json:"tones"`
}

func (s *Server) lifecycle(w http.ResponseWriter, r *http.Request) error {
	doc := lifecycleDoc{
		Statuses: lifecycle.Statuses, Causes: lifecycle.Causes, EventTypes: lifecycle.EventTypes,
		StepStatuses: lifecycle.StepStatuses, PendingKinds: lifecycle.PendingKinds, StreamEnd: streamEnd,
		Tones: map[string]string{
			string(lifecycle.Running):         "active",
			string(lifecycle.WaitingApproval): "wait",
			string(lifecycle.WaitingUser):     "wait",
			string(lifecycle.Completed):       "ok",
			string(lifecycle.StepSucceeded):   "ok",
			string(lifecycle.Failed):          "bad",
			string(lifecycle.Cancelled):       "warn",
			string(lifecycle.Interrupted):     "warn",
		},
	}
	for _, st := range lifecycle.Statuses {
		if st.Terminal() {
			doc.Terminal = append(doc.Terminal, st)
		}
	}
	w.Header().Set("Cache-Control", "no-cache")
	writeJSON(w, http.StatusOK, doc)
	return nil
}
