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

	"phonepilot/lifecycle"
	"phonepilot/storage"
	"phonepilot/task"
)

// streamEvents serves a task's events as server-sent events: everything
// recorded after Last-Event-ID (or ?after=), then live ones as they are
// recorded, until the task has ended. Each message's id is the event's Seq;
// a "step_finished" message carries the whole step (with its Scene), a
// "status" message {status, cause, reason} under data. The last message is
// "end".
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
	if _, err := s.svc.Get(ctx, id); err != nil {
		return err
	}
	s.streams.Add(1)
	defer s.streams.Done()
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // the stream outlives the server's WriteTimeout
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	var mu sync.Mutex // the keepalive and the events share the writer
	write := func(format string, args ...any) error {
		mu.Lock()
		defer mu.Unlock()
		if _, err := fmt.Fprintf(w, format, args...); err != nil {
			return err
		}
		return rc.Flush()
	}
	if err := write("retry: 1000\n\n"); err != nil {
		return nil
	}
	kctx, stopKeepalive := context.WithCancel(ctx)
	defer stopKeepalive()
	go func() {
		t := time.NewTicker(s.cfg.Keepalive)
		defer t.Stop()
		for {
			select {
			case <-kctx.Done():
				return
			case <-t.C:
				if write(": keepalive\n\n") != nil {
					return
				}
			}
		}
	}()
	final, err := s.svc.Watch(ctx, id, after, func(e storage.Event) error {
		data, err := s.eventData(ctx, e)
		if err != nil {
			s.log.Error("event stream", "task", id, "err", err)
			return err
		}
		return write("id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, data)
	})
	stopKeepalive()
	if err != nil {
		return nil // headers are sent; the client reconnects
	}
	data, _ := json.Marshal(task.StatusData{Status: final.Status, Cause: final.Cause, Reason: final.Reason})
	_ = write("event: "+streamEnd+"\ndata: %s\n\n", data)
	return nil
}

// eventData is what a stream sends for an event: the step itself for
// step_finished, else the stored data with the step number.
func (s *Server) eventData(ctx context.Context, e storage.Event) ([]byte, error) {
	if e.Type == lifecycle.EventStepFinished && e.Step > 0 {
		st, err := s.svc.Step(ctx, e.TaskID, e.Step)
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

// streamEnd is the event that closes an event stream.
const streamEnd = "end"
