package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"phonepilot/flow"
)

// flowRunRequest is the body of POST /v1/flows/run.
type flowRunRequest struct {
	// Flow is the flow file's text (YAML) as a JSON string, or the flow as
	// a JSON object (docs/flow.schema.json).
	Flow   json.RawMessage   `json:"flow"`
	Params map[string]string `json:"params"`
	Device string            `json:"device"`
}

// runFlow queues a run of a flow as a task (planner "flow"): recorded,
// streamed and gated like every task. Healing is the CLI's (flow run
// --heal); a served flow fails at the step that no longer fits.
func (s *Server) runFlow(w http.ResponseWriter, r *http.Request) error {
	var req flowRunRequest
	if err := decodeBody(r, w, s.cfg.MaxBodyBytes, &req); err != nil {
		return err
	}
	if len(req.Flow) == 0 || string(req.Flow) == "null" {
		return badField("flow", "required: the flow file's text, or the flow as an object")
	}
	text := []byte(req.Flow)
	var yamlText string
	if json.Unmarshal(req.Flow, &yamlText) == nil {
		text = []byte(yamlText)
	}
	// YAML reads JSON too: one parser, the same errors for both forms.
	f, err := flow.Parse(text)
	if err != nil {
		return badField("flow", "%v", err)
	}
	if req.Device == "" {
		req.Device = s.cfg.DefaultDevice
	}
	if err := s.devices.Check(req.Device); err != nil {
		return badField("device", "%v", err)
	}
	freq, err := flow.Request(f, req.Params, req.Device)
	if err != nil {
		if errors.Is(err, flow.ErrParams) {
			return badField("params", "%v", err)
		}
		return badField("flow", "%v", err)
	}
	freq.MaxSteps = s.cfg.MaxSteps
	t, err := s.svc.Submit(r.Context(), freq)
	if err != nil {
		return serviceError(err)
	}
	w.Header().Set("Location", "/v1/tasks/"+t.ID)
	writeJSON(w, http.StatusAccepted, t)
	return nil
}
