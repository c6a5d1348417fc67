package main

import (
	"encoding/json"
	"log/slog"
	"time"

	"phonepilot/device/backend"
	"phonepilot/plan/ai"
	"phonepilot/safety"
	"phonepilot/storage"
	"phonepilot/task"
)

// taskSnapshot is the configuration stored with a task and returned by the
// API: in the API's own style (snake_case keys, durations like "200ms"),
// with the planner that really ran the task, and the AI settings only when
// that planner is the AIPlanner (with the model resolved, so a reader sees
// which model answered). Secrets never reach it: the API key and the serve
// token are not copied, and RedactConfig guards what is left (a DSN's
// password).
type taskSnapshot struct {
	Device  string           `json:"device"`
	Planner string           `json:"planner"`
	Runtime runtimeSnapshot  `json:"runtime"`
	AI      *aiSnapshot      `json:"ai,omitempty"`
	Storage *storageSnapshot `json:"storage,omitempty"`
	Safety  safetySnapshot   `json:"safety"`
	// The device's backend settings, under the backend's kind ("sim":
	// locale, profile, seed; "adb": server).
	backendKind     string
	backendSettings any
}

// MarshalJSON writes the snapshot with its backend's settings under the
// backend's kind.
func (s taskSnapshot) MarshalJSON() ([]byte, error) {
	type plain taskSnapshot
	raw, err := json.Marshal(plain(s))
	if err != nil || s.backendKind == "" {
		return raw, err
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m[s.backendKind], err = json.Marshal(s.backendSettings); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// safetySnapshot is the gate's policy the task ran under (only the rules
// the user set; every other category is confirm) and the waits for a person.
type safetySnapshot struct {
	safety.Policy
	ApprovalTimeout duration `json:"approval_timeout"`
	AnswerTimeout   duration `json:"answer_timeout"`
}

type runtimeSnapshot struct {
	MaxSteps      int      `json:"max_steps"`
	StepRetries   int      `json:"step_retries"`
	WaitTimeout   duration `json:"wait_timeout"`
	PollInterval  duration `json:"poll_interval"`
	SettleTimeout duration `json:"settle_timeout"`
	BackoffBase   duration `json:"backoff_base"`
	BackoffMax    duration `json:"backoff_max"`
	FixedDelay    duration `json:"fixed_delay,omitzero"`
	StaleAfter    duration `json:"stale_after"`
}

type aiSnapshot struct {
	Provider  string   `json:"provider"`
	Model     string   `json:"model"`
	BaseURL   string   `json:"base_url,omitempty"`
	Vision    bool     `json:"vision"`
	ImageEdge int      `json:"image_edge,omitempty"`
	MaxReasks int      `json:"max_reasks"`
	MaxTokens int      `json:"max_tokens"`
	Timeout   duration `json:"timeout"`
}

type storageSnapshot struct {
	DB string `json:"db"`
}

// duration marshals as Go's duration text ("200ms", "10s").
type duration time.Duration

func (d duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// snapshotFor is the snapshot of a task run on device with planner under c.
func snapshotFor(c appConfig, device, planner string) (json.RawMessage, error) {
	planner = plannerName(planner)
	r := c.Runtime
	s := taskSnapshot{
		Device:  device,
		Planner: planner,
		Runtime: runtimeSnapshot{
			MaxSteps: r.MaxSteps, StepRetries: r.StepRetries, WaitTimeout: duration(r.WaitTimeout),
			PollInterval: duration(r.PollInterval), SettleTimeout: duration(r.SettleTimeout),
			BackoffBase: duration(r.BackoffBase), BackoffMax: duration(r.BackoffMax), FixedDelay: duration(r.FixedDelay),
			StaleAfter: duration(r.StaleAfter),
		},
	}
	if planner == "ai" {
		a := c.AI
		s.AI = &aiSnapshot{Provider: a.Provider, Model: modelFor(a.Provider, a.Model), BaseURL: a.BaseURL,
			Vision: a.Vision, ImageEdge: a.ImageEdge, MaxReasks: a.MaxReasks, MaxTokens: a.MaxTokens, Timeout: duration(a.Timeout)}
	}
	s.backendKind, s.backendSettings = backend.Settings(device, c.deviceOptions(nil))
	if c.Storage.DB != "" {
		s.Storage = &storageSnapshot{DB: c.Storage.DB}
	}
	s.Safety = safetySnapshot{Policy: c.Safety.Policy,
		ApprovalTimeout: duration(orDefault(c.Safety.ApprovalTimeout, task.DefaultWaitTimeout)),
		AnswerTimeout:   duration(orDefault(c.Safety.AnswerTimeout, task.DefaultWaitTimeout))}
	return storage.RedactConfig(s)
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// snapshots gives the task service the snapshot of each task it creates.
// A snapshot that cannot be built (it cannot fail in practice: it is plain
// data) is logged and left out rather than failing the task.
func (c appConfig) snapshots(log *slog.Logger) func(task.Request) json.RawMessage {
	return func(req task.Request) json.RawMessage {
		raw, err := snapshotFor(c, req.Device, req.Planner)
		if err != nil {
			log.Error("task config snapshot", "err", err)
			return nil
		}
		return raw
	}
}

// modelFor is the model a provider is asked for: the configured one, else
// the provider's default.
func modelFor(provider, model string) string {
	if model != "" {
		return model
	}
	return ai.DefaultModel(provider)
}

// deviceOptions are the options devices open with under c.
func (c appConfig) deviceOptions(log *slog.Logger) deviceOptions {
	return deviceOptions{ADBServer: c.ADB.Server, SimLocale: c.Sim.Locale, SimProfile: c.Sim.Profile, SimSeed: c.Sim.Seed, Observer: c.Observer, Logger: log}
}
