package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"phonepilot/storage"
)

// taskRequest is the body of POST /v1/tasks.
type taskRequest struct {
	Goal     string `json:"goal"`
	Device   string `json:"device"`
	Planner  string `json:"planner"`
	MaxSteps int    `json:"max_steps"`
}

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
	switch {
	case req.Goal == "":
		return badField("goal", "required: say what the phone should do")
	case utf8.RuneCountInString(req.Goal) > s.cfg.MaxGoalRunes:
		return badField("goal", "longer than %d characters", s.cfg.MaxGoalRunes)
	}
	if req.Device == "" {
		req.Device = s.cfg.DefaultDevice
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
	case req.MaxSteps < 0 || req.MaxSteps > s.cfg.MaxSteps:
		return badField("max_steps", "must be 1..%d", s.cfg.MaxSteps)
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return fmt.Errorf("server is stopping: %w", errConflict)
	}
	task, err := s.store.CreateTask(r.Context(), storage.Task{
		Goal: req.Goal, Device: req.Device, Planner: req.Planner, MaxSteps: req.MaxSteps,
		Status: storage.StatusQueued, Created: s.clock.Now(), Config: s.cfg.Snapshot,
		Owner: s.cfg.Owner,
	})
	if err != nil {
		return err
	}
	s.appendStatus(r.Context(), task.ID, storage.StatusQueued, "")
	s.enqueue(task)
	w.Header().Set("Location", "/v1/tasks/"+task.ID)
	writeJSON(w, http.StatusAccepted, task)
	return nil
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) error {
	q := storage.Query{Status: r.URL.Query().Get("status"), Cursor: r.URL.Query().Get("cursor")}
	if q.Status != "" && !storage.ValidStatus(q.Status) {
		return badField("status", "must be one of %s", strings.Join(storage.Statuses, ", "))
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
	page, err := s.store.ListTasks(r.Context(), q)
	if err != nil {
		return err
	}
	for i := range page.Tasks {
		page.Tasks[i].Config = nil // per task only: GET /v1/tasks/{id}
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.store.Task(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) getSteps(w http.ResponseWriter, r *http.Request) error {
	steps, err := s.store.Steps(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"steps": steps})
	return nil
}

// cancelTask cancels a queued task at once, or a running one by cancelling
// its context and waiting (briefly) for it to stop. A finished task is a
// conflict.
func (s *Server) cancelTask(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	ctx := r.Context()
	t, err := s.store.Task(ctx, id)
	if err != nil {
		return err
	}
	if storage.Terminal(t.Status) {
		return &storage.ConflictError{ID: id, Current: t.Status, To: storage.StatusCancelled}
	}
	if t.Status == storage.StatusQueued {
		t, err = s.rec.UpdateStatus(ctx, id, storage.Change{From: []string{storage.StatusQueued}, To: storage.StatusCancelled,
			Reason: "cancelled before it started", At: s.clock.Now()})
		if err == nil {
			s.appendStatus(ctx, id, storage.StatusCancelled, t.Reason)
			writeJSON(w, http.StatusOK, t)
			return nil
		}
		if !errors.As(err, new(*storage.ConflictError)) {
			return err
		}
		// It started meanwhile: cancel it running.
	}
	s.mu.Lock()
	rt := s.running[id]
	s.mu.Unlock()
	if rt == nil {
		t, err = s.store.Task(ctx, id)
		if err != nil {
			return err
		}
		if storage.Terminal(t.Status) {
			return &storage.ConflictError{ID: id, Current: t.Status, To: storage.StatusCancelled}
		}
		return fmt.Errorf("task %s is %s in another phonepilot process sharing this database; cancel it there: %w", id, t.Status, errConflict)
	}
	rt.cancel(errCancelledByUser)
	select {
	case <-rt.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	t, err = s.store.Task(ctx, id)
	if err != nil {
		return err
	}
	if t.Status != storage.StatusCancelled {
		// It finished on its own before the cancel reached it.
		return &storage.ConflictError{ID: id, Current: t.Status, To: storage.StatusCancelled}
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// deviceStatus is a device with what this server is doing on it.
type deviceStatus struct {
	DeviceInfo
	Running string `json:"running,omitempty"` // the running task's ID
	Queued  int    `json:"queued"`
}

func (s *Server) listDevices(w http.ResponseWriter, r *http.Request) error {
	devs, err := s.devices.List(r.Context())
	if err != nil {
		return err
	}
	running, err := s.store.ListTasks(r.Context(), storage.Query{Status: storage.StatusRunning, Limit: storage.MaxPage})
	if err != nil {
		return err
	}
	s.mu.Lock()
	out := make([]deviceStatus, 0, len(devs))
	for _, d := range devs {
		ds := deviceStatus{DeviceInfo: d}
		if q := s.queues[d.Name]; q != nil {
			ds.Queued = len(q.pending)
		}
		for _, t := range running.Tasks {
			if t.Device == d.Name {
				ds.Running = t.ID
			}
		}
		out = append(out, ds)
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"devices": out})
	return nil
}

// enqueue puts a task at the end of its device's queue and makes sure a
// goroutine drains that queue.
func (s *Server) enqueue(t storage.Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
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

// drain runs a device's tasks one after another until its queue is empty.
func (s *Server) drain(dev string, q *deviceQueue) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		if len(q.pending) == 0 || s.closed {
			q.active = false
			s.mu.Unlock()
			return
		}
		id := q.pending[0]
		q.pending = q.pending[1:]
		s.mu.Unlock()
		s.runOne(id)
	}
}

// runOne takes a queued task through running to its end.
func (s *Server) runOne(id string) {
	ctx := context.WithoutCancel(s.ctx) // bookkeeping writes outlive a stop
	task, err := s.rec.UpdateStatus(ctx, id, storage.Change{From: []string{storage.StatusQueued}, To: storage.StatusRunning,
		At: s.clock.Now(), Owner: s.cfg.Owner})
	if err != nil {
		if !errors.As(err, new(*storage.ConflictError)) {
			s.log.Error("start task", "task", id, "err", err)
		}
		return // cancelled while queued, or gone
	}
	runCtx, cancel := context.WithCancelCause(s.ctx)
	rt := &runningTask{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		cancel(errServerStopped)
	}
	s.running[id] = rt
	s.mu.Unlock()
	s.appendStatus(ctx, id, storage.StatusRunning, "")
	s.log.Info("task started", "task", id, "device", task.Device)

	res := s.run(runCtx, task)

	status, reason := res.Status, res.Reason
	switch cause := context.Cause(runCtx); {
	case errors.Is(cause, errCancelledByUser):
		status, reason = storage.StatusCancelled, "cancelled by request"
	case errors.Is(cause, errServerStopped):
		status, reason = storage.StatusInterrupted, "phonepilot stopped while the task was running"
	case !storage.Terminal(status) || status == storage.StatusInterrupted:
		reason = fmt.Sprintf("runner ended with status %q: %s", status, reason)
		status = storage.StatusFailed
	}
	if _, err := s.rec.UpdateStatus(ctx, id, storage.Change{From: []string{storage.StatusRunning}, To: status,
		Reason: reason, At: s.clock.Now(), Usage: res.Usage}); err != nil {
		s.log.Error("finish task", "task", id, "err", err)
	}
	s.appendStatus(ctx, id, status, reason)
	cancel(nil)
	s.mu.Lock()
	delete(s.running, id)
	s.mu.Unlock()
	close(rt.done)
	s.log.Info("task ended", "task", id, "status", status, "reason", reason)
}

// run opens the device and hands the task to the runner; a runner that
// panics fails its task, not the server.
func (s *Server) run(ctx context.Context, task storage.Task) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("runner panicked", "task", task.ID, "panic", p)
			res = Result{Status: storage.StatusFailed, Reason: fmt.Sprintf("internal error: %v", p)}
		}
	}()
	dev, release, err := s.devices.Open(ctx, task.Device)
	if err != nil {
		return Result{Status: storage.StatusFailed, Reason: fmt.Sprintf("open device %s: %v", task.Device, err)}
	}
	defer release()
	return s.runner.Run(ctx, task, dev, s.rec)
}

// statusData is the data of a "status" event.
type statusData struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

func (s *Server) appendStatus(ctx context.Context, id, status, reason string) {
	data, _ := json.Marshal(statusData{Status: status, Reason: reason})
	if _, err := s.rec.AppendEvent(ctx, storage.Event{TaskID: id, Type: "status", Time: s.clock.Now(), Data: data}); err != nil {
		s.log.Error("record status event", "task", id, "err", err)
	}
}
