package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"phonepilot/storage"
	"phonepilot/task/lifecycle"
)

// hub wakes event streams when something of their task was recorded. The
// store stays the only source of truth; a wake-up only says "look again".
type hub struct {
	mu    sync.Mutex
	waits map[string]chan struct{}
}

func newHub() *hub { return &hub{waits: map[string]chan struct{}{}} }

// wait returns a channel closed at the task's next notify.
func (h *hub) wait(task string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch, ok := h.waits[task]
	if !ok {
		ch = make(chan struct{})
		h.waits[task] = ch
	}
	return ch
}

func (h *hub) notify(task string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch, ok := h.waits[task]; ok {
		close(ch)
		delete(h.waits, task)
	}
}

// notifyingStore is the store a Runner records into: every write wakes the
// task's event streams.
type notifyingStore struct {
	storage.Store
	hub *hub
}

func (n *notifyingStore) SaveStep(ctx context.Context, st storage.Step) error {
	err := n.Store.SaveStep(ctx, st)
	n.hub.notify(st.TaskID)
	return err
}

func (n *notifyingStore) AppendEvent(ctx context.Context, e storage.Event) (storage.Event, error) {
	e, err := n.Store.AppendEvent(ctx, e)
	n.hub.notify(e.TaskID)
	return e, err
}

func (n *notifyingStore) UpdateStatus(ctx context.Context, id string, c storage.Change) (storage.Task, error) {
	t, err := n.Store.UpdateStatus(ctx, id, c)
	n.hub.notify(id)
	return t, err
}

// Close is the caller's business: a runner must not close the server's store.
func (n *notifyingStore) Close() error { return nil }

// streamEvents serves a task's events as server-sent events: everything
// recorded after Last-Event-ID (or ?after=), then live ones as they are
// recorded, until the task has ended. Each message's id is the event's Seq;
// a "step_finished" message carries the whole step (with its Scene), a
// "status" message {status, reason}. The last message is "end".
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	ctx := r.Context()
	after := int64(0)
	last := r.Header.Get("Last-Event-ID")
	field := "Last-Event-ID"
	if last == "" {
		last, field = r.URL.Query().Get("after"), "after"
	}
	if last != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(last), 10, 64)
		if err != nil || n < 0 {
			return badField(field, "must be an event id (a non-negative integer)")
		}
		after = n
	}
	if _, err := s.store.Task(ctx, id); err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // the stream outlives the server's WriteTimeout
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 1000\n\n"); err != nil {
		return nil
	}
	_ = rc.Flush()

	poll := time.NewTicker(s.cfg.PollInterval)
	defer poll.Stop()
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	endedQuiet := 0 // drains that found the task ended and nothing new
	for {
		wake := s.hub.wait(id)
		events, err := s.store.Events(ctx, id, after, 200)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("event stream", "task", id, "err", err)
			}
			return nil // headers are sent; the client reconnects
		}
		for _, e := range events {
			data, err := s.eventData(ctx, e)
			if err != nil {
				s.log.Error("event stream", "task", id, "err", err)
				return nil
			}
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, data); err != nil {
				return nil
			}
			after = e.Seq
		}
		if len(events) > 0 {
			if err := rc.Flush(); err != nil {
				return nil
			}
		}
		if len(events) == 200 {
			continue
		}
		t, err := s.store.Task(ctx, id)
		if err != nil {
			return nil
		}
		if t.Status.Terminal() {
			// The final status event is written just after the status
			// itself; look once more before ending the stream.
			if len(events) == 0 {
				endedQuiet++
			}
			if endedQuiet >= 2 || lastIsFinal(events) {
				data, _ := json.Marshal(statusData{Status: t.Status, Reason: t.Reason})
				fmt.Fprintf(w, "event: end\ndata: %s\n\n", data)
				_ = rc.Flush()
				return nil
			}
			if len(events) == 0 {
				select {
				case <-ctx.Done():
					return nil
				case <-wake:
				case <-time.After(100 * time.Millisecond):
				}
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-poll.C:
		case <-keepalive.C:
			if _, err := fmt.Fprint(w, ": keepalive\n\n"); err != nil {
				return nil
			}
			_ = rc.Flush()
		}
	}
}

func lastIsFinal(events []storage.Event) bool {
	if len(events) == 0 {
		return false
	}
	e := events[len(events)-1]
	if e.Type != lifecycle.EventStatus {
		return false
	}
	var d statusData
	return json.Unmarshal(e.Data, &d) == nil && d.Status.Terminal()
}

// eventData is what a stream sends for an event: the step itself for
// step_finished, else the stored data with the step number.
func (s *Server) eventData(ctx context.Context, e storage.Event) ([]byte, error) {
	if e.Type == lifecycle.EventStepFinished && e.Step > 0 {
		st, err := s.store.Step(ctx, e.TaskID, e.Step)
		if err == nil {
			return json.Marshal(st)
		}
		if !errors.Is(err, storage.ErrNotFound) {
			return nil, err
		}
	}
	payload := map[string]any{"seq": e.Seq, "type": e.Type, "time": e.Time}
	if e.Step > 0 {
		payload["step"] = e.Step
	}
	if len(e.Data) > 0 {
		payload["data"] = e.Data
	}
	return json.Marshal(payload)
}
