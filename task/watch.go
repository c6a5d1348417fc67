package task

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"phonepilot/lifecycle"
	"phonepilot/storage"
)

// hub wakes watches when something of their task was written. The store
// stays the only source of truth; a wake-up only says "look again".
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

// watchPage is how many events Watch reads at a time.
const watchPage = 200

// Watch calls fn with the task's events after sequence number after, oldest
// first, then with new ones as they are written, until the task is final
// and its final status event was handed over; it then returns the final
// task. It also returns when ctx ends (ctx's error), when fn fails (fn's
// error), or when the service has stopped and the task is not final
// (ErrClosed). A store that fails meanwhile is asked again, not given up
// on: the task's end will be written when the store is back.
func (s *Service) Watch(ctx context.Context, id string, after int64, fn func(storage.Event) error) (storage.Task, error) {
	if _, err := s.store.Task(ctx, id); err != nil {
		return storage.Task{}, err
	}
	poll := time.NewTicker(s.cfg.PollInterval)
	defer poll.Stop()
	endedQuiet := 0 // reads that found the task final and nothing new
	for {
		wake := s.hub.wait(id)
		stopped := false
		select {
		case <-s.stopped:
			stopped = true
		default:
		}
		events, err := s.store.Events(ctx, id, after, watchPage)
		if err == nil {
			for _, e := range events {
				if err := fn(e); err != nil {
					return storage.Task{}, err
				}
				after = e.Seq
			}
			if len(events) == watchPage {
				continue
			}
			// The stored status, not Get's: a task whose end is not
			// written yet has not handed its last events over either.
			var t storage.Task
			if t, err = s.store.Task(ctx, id); err == nil && t.Status.Terminal() {
				// The final status event is written just after the status
				// itself. This process's recorder of the task will write
				// it (and wake us): wait for it. Of a task recorded
				// elsewhere, end after two reads that found nothing new.
				if lastIsFinal(events) || stopped {
					return t, nil
				}
				if !s.recording(id) {
					if len(events) == 0 {
						endedQuiet++
					}
					if endedQuiet >= 2 {
						return t, nil
					}
				}
				select {
				case <-ctx.Done():
					return storage.Task{}, ctx.Err()
				case <-wake:
				case <-time.After(min(100*time.Millisecond, s.cfg.PollInterval)):
				}
				continue
			}
		}
		if ctx.Err() != nil {
			return storage.Task{}, ctx.Err()
		}
		if stopped {
			return storage.Task{}, ErrClosed
		}
		select {
		case <-ctx.Done():
			return storage.Task{}, ctx.Err()
		case <-wake:
		case <-poll.C:
		case <-s.stopped:
		}
	}
}

// recording reports whether this process still has records of the task to
// write (its final status event among them).
func (s *Service) recording(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.entries[id]
	return ok
}

func lastIsFinal(events []storage.Event) bool {
	if len(events) == 0 {
		return false
	}
	e := events[len(events)-1]
	if e.Type != lifecycle.EventStatus {
		return false
	}
	var d StatusData
	return json.Unmarshal(e.Data, &d) == nil && d.Status.Terminal()
}
