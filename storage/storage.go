// Package storage records tasks, their steps and their events so that users
// can look back at what happened and watch a running task live.
//
// The Store interface is implemented by storage/sqlite (the default, one file
// in the user's data directory) and storage/postgres (for teams sharing one
// database); storage/storagetest is the conformance suite both pass.
//
// Nothing here ever holds screenshot bytes (the Perception Boundary): a step
// keeps the Scene it acted on in its compact JSON form, which has no pixels.
package storage

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// Task statuses, causes and event types are lifecycle's (phonepilot/task/
// lifecycle): a task is created queued, becomes running when its device is
// free, and ends in one of the terminal statuses with a cause.

// Task is one goal given to phonepilot and what became of it.
type Task struct {
	ID       string           `json:"id"`
	Goal     string           `json:"goal"`
	Device   string           `json:"device"`
	Planner  string           `json:"planner"`
	MaxSteps int              `json:"max_steps,omitempty"`
	Status   lifecycle.Status `json:"status"`
	// Cause is why a task ended (empty while it runs and when completed).
	Cause  lifecycle.Cause `json:"cause,omitempty"`
	Reason string          `json:"reason,omitempty"`
	// Owner is the process that runs or ran the task ("host:pid").
	Owner string `json:"owner,omitempty"`

	Created  time.Time  `json:"created"`
	Started  *time.Time `json:"started,omitempty"`
	Finished *time.Time `json:"finished,omitempty"`

	// Usage is the model cost of the whole task, set when it finishes.
	Usage plan.Usage `json:"usage"`
	// Config is a snapshot of the configuration the task ran with, secrets
	// removed (see RedactConfig).
	Config json.RawMessage `json:"config,omitempty"`
	// FinalScene is the screen after the task's last action, in the compact
	// JSON form of scene.Scene (never pixels); set when the task ends.
	// Lists leave it out.
	FinalScene json.RawMessage `json:"final_scene,omitempty"`
	// Pending is the decision a waiting task waits for: set while it is
	// waiting_approval or waiting_user, nil otherwise.
	Pending *Pending `json:"pending,omitempty"`
	// Waited is how long the task's waits for a person that ended took
	// (waiting_approval, waiting_user): part of its time from started to
	// finished. The wait under way is WaitedAt's.
	Waited time.Duration `json:"waited_ns,omitempty"`
}

// WaitedAt is how long t has waited for a person by now: the waits that
// ended and, while it waits, the one under way (since its Pending began).
func (t Task) WaitedAt(now time.Time) time.Duration {
	w := t.Waited
	if t.Pending != nil && t.Status.Waiting() && now.After(t.Pending.Since) {
		w += now.Sub(t.Pending.Since)
	}
	return w
}

// Pending is what a waiting task waits for (TASKS.md, "Pending decision"):
// an action the safety gate stopped (kind approval) or a question the
// planner asked a person (kind question).
type Pending struct {
	Kind    lifecycle.PendingKind `json:"kind"`
	Step    int                   `json:"step"`
	Call    tools.Call            `json:"call"`
	Element *PendingElement       `json:"element,omitempty"`
	// Category and Reason are the gate's, for approvals: which category,
	// which words on which element or screen, in which app.
	Category string `json:"category,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Question is the planner's text, for questions.
	Question string `json:"question,omitempty"`
	// Scene is the screen the action is on, in compact Scene JSON (never
	// pixels), for a front end's wireframe.
	Scene   json.RawMessage `json:"scene,omitempty"`
	Since   time.Time       `json:"since"`
	Expires time.Time       `json:"expires"`
}

// PendingElement is the element a pending action acts on. In JSON its
// bounds are [left, top, right, bottom], as in the compact Scene JSON
// (docs/scene-json.md) that the pending decision's scene carries.
type PendingElement struct {
	Index  int
	Class  string
	Label  string
	ID     string
	Bounds scene.Bounds
}

type pendingElementJSON struct {
	Index  int    `json:"index"`
	Class  string `json:"class,omitempty"`
	Label  string `json:"label,omitempty"`
	ID     string `json:"id,omitempty"`
	Bounds [4]int `json:"bounds"`
}

// MarshalJSON writes the element with [l, t, r, b] bounds.
func (e PendingElement) MarshalJSON() ([]byte, error) {
	b := e.Bounds
	return json.Marshal(pendingElementJSON{e.Index, e.Class, e.Label, e.ID, [4]int{b.Left, b.Top, b.Right, b.Bottom}})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *PendingElement) UnmarshalJSON(data []byte) error {
	var j pendingElementJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("pending element: %w", err)
	}
	*e = PendingElement{Index: j.Index, Class: j.Class, Label: j.Label, ID: j.ID,
		Bounds: scene.Bounds{Left: j.Bounds[0], Top: j.Bounds[1], Right: j.Bounds[2], Bottom: j.Bounds[3]}}
	return nil
}

// Validate checks a Pending before it is stored.
func (p *Pending) Validate() error {
	switch {
	case !p.Kind.Valid():
		return fmt.Errorf("pending: unknown kind %q", p.Kind)
	case len(p.Scene) > 0 && !json.Valid(p.Scene):
		return errors.New("pending: scene is not valid JSON")
	case len(p.Call.Args) > 0 && !json.Valid(p.Call.Args):
		return errors.New("pending: call arguments are not valid JSON")
	}
	return nil
}

// The data of the events about pending decisions (lifecycle's
// EventApprovalRequested, EventApprovalDecided, EventQuestionAsked,
// EventQuestionAnswered), so that front ends read them typed.
type (
	// PendingEvent is the data of approval_requested and question_asked.
	PendingEvent struct {
		Pending Pending `json:"pending"`
	}
	// ApprovalDecidedEvent is the data of approval_decided.
	ApprovalDecidedEvent struct {
		Approved bool   `json:"approved"`
		By       string `json:"by"`
		Note     string `json:"note"`
	}
	// QuestionAnsweredEvent is the data of question_answered.
	QuestionAnsweredEvent struct {
		By   string `json:"by"`
		Text string `json:"text"`
	}
)

// Who decides: the by of a decision.
const (
	ByCLI    = "cli"    // phonepilot run, asking on its terminal
	ByNobody = "nobody" // refused without asking anyone (phonepilot run without a terminal)
	ByAPI    = "api"    // the HTTP API
	ByWeb    = "web"    // a person on the web page (the API, with the approval key of the approval link)
	ByMCP    = "mcp"    // the MCP server
)

// Step is one executed step of a task as it finished: the runtime's
// StepRecord plus the Scene it acted on.
type Step struct {
	TaskID string `json:"task_id"`
	plan.StepRecord
	// Scene is the screen the step acted on, in the compact JSON form of
	// scene.Scene (docs/scene-json.md). Never pixels.
	Scene json.RawMessage `json:"scene,omitempty"`
}

// Event is one thing that happened during a task, in order. Seq numbers a
// task's events from 1 without gaps; the API's event stream resumes from it.
type Event struct {
	TaskID string              `json:"task_id"`
	Seq    int64               `json:"seq"`
	Type   lifecycle.EventType `json:"type"`
	Step   int                 `json:"step,omitempty"`
	Time   time.Time           `json:"time"`
	// Data is a small JSON object that depends on Type (never a Scene).
	Data json.RawMessage `json:"data,omitempty"`
}

// Change moves a task from one of the From statuses to To. Started is set
// when To is running; Finished, Cause and Usage when To is terminal. Owner, when set, is
// recorded as the task's owner. The task's Pending becomes c.Pending when To
// is waiting (it is required then) and nil for any other To.
type Change struct {
	From   []lifecycle.Status
	To     lifecycle.Status
	Cause  lifecycle.Cause
	Reason string
	At     time.Time
	Usage  plan.Usage
	Owner  string
	// FinalScene, when set and To is terminal, is stored as the task's
	// final screen (compact Scene JSON).
	FinalScene json.RawMessage
	// Config, when set and To is terminal, replaces the task's config
	// snapshot: the task service adds what it learned of the device while
	// the task ran (its locale, the versions of the apps it acted in).
	Config json.RawMessage
	// Pending is the decision a waiting task waits for (To waiting only).
	Pending *Pending
	// IfOwner, when set, applies the change only while the task's owner is
	// IfOwner (otherwise a *ConflictError): a process whose task was taken
	// over by another (a farm queued it again after its worker went
	// silent) cannot overwrite the new run with its late writes.
	IfOwner string
}

// Query selects a page of tasks, newest first.
type Query struct {
	Status lifecycle.Status // empty for every status
	Limit  int              // 1..MaxPage; 0 means DefaultPage
	Cursor string           // the Next of the previous page; empty for the first
}

// Page sizes for ListTasks.
const (
	DefaultPage = 50
	MaxPage     = 500
)

// Page is one page of tasks. Next is empty on the last page.
type Page struct {
	Tasks []Task `json:"tasks"`
	Next  string `json:"next,omitempty"`
}

// Tasks stores tasks.
type Tasks interface {
	// CreateTask stores a new task. An empty ID gets a fresh one (NewID), an
	// empty Status becomes queued, a zero Created becomes now.
	CreateTask(ctx context.Context, t Task) (Task, error)
	// Task returns one task, or an error wrapping ErrNotFound.
	Task(ctx context.Context, id string) (Task, error)
	// ListTasks returns a page of tasks, newest first (without FinalScene).
	ListTasks(ctx context.Context, q Query) (Page, error)
	// FindTasks returns up to limit tasks whose ID starts with prefix,
	// newest first (without FinalScene); none for an empty prefix.
	FindTasks(ctx context.Context, prefix string, limit int) ([]Task, error)
	// UpdateStatus applies c atomically and returns the updated task. When
	// the task's status is not in c.From the error is a *ConflictError.
	UpdateStatus(ctx context.Context, id string, c Change) (Task, error)
	// MarkInterrupted ends the running (or waiting) tasks of the given
	// owners as interrupted, cause interrupted, with reason; a process calls it at start for tasks
	// its crashed predecessor left running. It returns the IDs it changed.
	MarkInterrupted(ctx context.Context, owners []string, reason string, at time.Time) ([]string, error)
}

// Steps stores the steps of tasks.
type Steps interface {
	// SaveStep stores a finished step; saving the same task and number
	// again replaces it.
	SaveStep(ctx context.Context, s Step) error
	// Steps returns a task's steps in order (empty, not an error, for a task
	// without steps; ErrNotFound for no such task).
	Steps(ctx context.Context, taskID string) ([]Step, error)
	// Step returns one step, or an error wrapping ErrNotFound.
	Step(ctx context.Context, taskID string, number int) (Step, error)
}

// Events stores the events of tasks.
type Events interface {
	// AppendEvent stores e as the task's next event and returns it with Seq set.
	AppendEvent(ctx context.Context, e Event) (Event, error)
	// Events returns the task's events with Seq > after, oldest first, at
	// most limit of them (0: all).
	Events(ctx context.Context, taskID string, after int64, limit int) ([]Event, error)
}

// Store is everything phonepilot keeps. Implementations are safe for
// concurrent use.
type Store interface {
	Tasks
	Steps
	Events
	Close() error
}

// ErrNotFound: no such task or step.
var ErrNotFound = errors.New("not found")

// ConflictError says a status change was refused because the task is
// already in another status (for example cancelling a finished task).
type ConflictError struct {
	ID      string
	Current lifecycle.Status
	To      lifecycle.Status
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("task %s is %s; cannot become %s", e.ID, e.Current, e.To)
}

// Validate checks a Change before it reaches a database.
func (c Change) Validate() error {
	if !c.To.Valid() {
		return fmt.Errorf("change: unknown status %q", c.To)
	}
	if len(c.From) == 0 {
		return errors.New("change: no From status")
	}
	for _, f := range c.From {
		if !f.Valid() {
			return fmt.Errorf("change: unknown from status %q", f)
		}
	}
	if !c.Cause.Valid() {
		return fmt.Errorf("change: unknown cause %q", c.Cause)
	}
	if len(c.FinalScene) > 0 && !json.Valid(c.FinalScene) {
		return errors.New("change: final scene is not valid JSON")
	}
	if len(c.Config) > 0 && !json.Valid(c.Config) {
		return errors.New("change: config is not valid JSON")
	}
	switch {
	case c.To.Waiting() && c.Pending == nil:
		return fmt.Errorf("change: %s needs a pending decision", c.To)
	case !c.To.Waiting() && c.Pending != nil:
		return fmt.Errorf("change: a pending decision only goes with a waiting status, not %s", c.To)
	case c.Pending != nil:
		if err := c.Pending.Validate(); err != nil {
			return fmt.Errorf("change: %w", err)
		}
		if c.Pending.Kind.Status() != c.To {
			return fmt.Errorf("change: a pending %s goes with %s, not %s", c.Pending.Kind, c.Pending.Kind.Status(), c.To)
		}
	}
	if c.At.IsZero() {
		return errors.New("change: zero time")
	}
	return nil
}

// NewID returns a fresh task ID: "t" and 20 characters of lower-case base32
// (time-ordered first 8, random rest), safe in URLs and file names.
func NewID() string {
	const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
	var b [21]byte
	b[0] = 't'
	ms := uint64(time.Now().UnixMilli())
	for i := 8; i >= 1; i-- {
		b[i] = alphabet[ms&31]
		ms >>= 5
	}
	var r [12]byte
	_, _ = rand.Read(r[:])
	for i := 9; i < len(b); i++ {
		b[i] = alphabet[r[i-9]&31]
	}
	return string(b[:])
}

// RedactConfig turns a configuration value into JSON for Task.Config with
// every secret removed: any object key that ends in key, token, secret,
// password or credential (case-insensitive, "api_key", "APIKey", "Token"…)
// has its value replaced by "[redacted]" when non-empty. A database DSN may
// carry a password, so keys ending in "dsn" are treated the same, and any
// other string loses the secrets RedactSecrets finds (a URL's password and
// secret query parameters, a key=value DSN's password).
func RedactConfig(v any) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("redact config: %w", err)
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, fmt.Errorf("redact config: %w", err)
	}
	out, err := json.Marshal(redact(tree))
	if err != nil {
		return nil, fmt.Errorf("redact config: %w", err)
	}
	return out, nil
}

func redact(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if secretKey(k) {
				if s, ok := val.(string); ok && s == "" || val == nil {
					continue
				}
				x[k] = "[redacted]"
				continue
			}
			x[k] = redact(val)
		}
		return x
	case []any:
		for i := range x {
			x[i] = redact(x[i])
		}
		return x
	case string:
		// A DSN or URL keeps all but its secrets.
		return RedactSecrets(x)
	}
	return v
}

func secretKey(k string) bool {
	k = strings.ToLower(strings.NewReplacer("_", "", "-", "", ".", "").Replace(k))
	// Suffixes, so "api_key", "AccessToken", "db_password" are secrets while
	// "max_tokens" or "keyboard" are not.
	for _, w := range []string{"key", "token", "secret", "password", "passwd", "credential", "credentials", "authorization", "dsn"} {
		if strings.HasSuffix(k, w) {
			return true
		}
	}
	return false
}
