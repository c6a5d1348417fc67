package api

import (
	"net/http"

	"phonepilot/plan"
	"phonepilot/runtime"
	"phonepilot/storage"
)

// vocabulary is GET /v1/vocabulary: the words the page (and any client)
// compares against, from the packages that define them, so that no front
// end spells a status, event or cause by hand. Tones say how to colour a
// status ("active", "ok", "bad", "warn"; a word without one is neutral), so
// the stylesheet names tones, not statuses.
type vocabulary struct {
	Statuses     []string          `json:"statuses"`
	Terminal     []string          `json:"terminal"`
	StepStatuses []string          `json:"step_statuses"`
	Causes       []string          `json:"causes"`
	Events       []string          `json:"events"`
	StreamEnd    string            `json:"stream_end"` // the last message of every event stream
	Tones        map[string]string `json:"tones"`
}

// vocabularyRoute is open like /v1/openapi.json: it is the public contract,
// and the page needs it before it knows whether a token is required.
//
// TODO(lead): the lists come from storage/runtime/plan until the typed
// vocabulary of the task package lands; take them from there, move this
// route into routeTable and document it in openapi.json.
func (s *Server) vocabularyRoute() route {
	return route{"GET", "/v1/vocabulary", false, func(w http.ResponseWriter, r *http.Request) error {
		v := vocabulary{
			Statuses:     storage.Statuses,
			StepStatuses: []string{plan.StepSucceeded, plan.StepFailed},
			Causes:       []string{},
			StreamEnd:    streamEnd,
			Tones: map[string]string{
				storage.StatusRunning:     "active",
				storage.StatusCompleted:   "ok",
				plan.StepSucceeded:        "ok",
				storage.StatusFailed:      "bad",
				storage.StatusCancelled:   "warn",
				storage.StatusInterrupted: "warn",
			},
		}
		for _, st := range storage.Statuses {
			if storage.Terminal(st) {
				v.Terminal = append(v.Terminal, st)
			}
		}
		for _, e := range []runtime.EventType{runtime.EventTaskStarted, runtime.EventSceneObserved, runtime.EventPlan,
			runtime.EventStepStarted, runtime.EventAttempt, runtime.EventStepFinished, runtime.EventStatus} {
			v.Events = append(v.Events, string(e))
		}
		w.Header().Set("Cache-Control", "no-cache")
		writeJSON(w, http.StatusOK, v)
		return nil
	}}
}

// streamEnd is the event that closes an event stream (events.go writes it).
const streamEnd = "end"
