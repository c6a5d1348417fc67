// Package ai is the AIPlanner: a Planner that asks a language model, through
// native tool calling, for exactly one grounded action per turn. Vendors sit
// behind the one-method Provider interface (plan/ai/anthropic,
// plan/ai/openai), registered by name so that this package imports no SDK
// and the rule path pulls none in.
//
// Every decision is made from the Scene of that turn: the model names
// elements by their [N] index in the current listing, the index is checked
// against that listing, and the call goes out with no Target, so the tool
// resolves it in the same Scene. Nothing is remembered between calls except
// what Input.History says.
//
// The AIPlanner is the one consumer besides the device drivers allowed to
// touch screenshot bytes (the Perception Boundary's narrow exception): it
// asks its Camera for the current frame and sends it beside the listing.
package ai

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// Planner is the AIPlanner.
//
// A Planner plans one task: it keeps the task's conversation with the
// model, which only grows at its end (see conversation), so that the
// provider's prompt cache serves every request but its newest turn.
type Planner struct {
	cfg      Config
	provider Provider
	tools    []ToolSpec

	mu   sync.Mutex // one decision at a time
	conv conversation

	shotMu sync.Mutex
	shot   *besideShot // the screenshot taken beside the latest screen read
	taking bool        // a capture beside a read is running
}

var _ plan.Planner = (*Planner)(nil)

// New validates cfg and builds the AIPlanner with the configured provider,
// which must have been registered (cmd/phonepilot imports the provider
// packages for that).
func New(cfg Config) (*Planner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	info, _ := lookup(cfg.Provider)
	p, err := info.New(cfg)
	if err != nil {
		return nil, redact(fmt.Errorf("ai: provider %s: %w", cfg.Provider, err), cfg.APIKey)
	}
	return NewWithProvider(cfg, p), nil
}

// NewWithProvider builds the AIPlanner around an already constructed
// Provider (tests, or callers with their own client). The provider name and
// key in cfg are not checked.
func NewWithProvider(cfg Config, p Provider) *Planner {
	specs := cfg.Tools
	if specs == nil {
		specs = tools.Specs()
	}
	ts := make([]ToolSpec, len(specs))
	for i, s := range specs {
		ts[i] = ToolSpec{Name: s.Name, Description: s.Description, Schema: s.Schema}
	}
	cfg = cfg.withDefaults()
	if cfg.CacheKey == "" {
		cfg.CacheKey = newCacheKey()
	}
	return &Planner{cfg: cfg, provider: p, tools: ts}
}

// Errors a decision can end with. Each is wrapped with the details.
var (
	// ErrInvalidReply: the model kept answering without one usable tool
	// call after every re-ask.
	ErrInvalidReply = errors.New("the model gave no usable tool call")
	// ErrRefused: the model refused the request.
	ErrRefused = errors.New("the model refused")
	// ErrMaxTokens: the reply was cut off at the output token limit.
	ErrMaxTokens = errors.New("the model's reply hit the output token limit")
	// ErrNoScene: Plan was called without a Scene.
	ErrNoScene = errors.New("no current scene to plan from")
)

// Plan asks the model for the next step of in.Goal given in.Scene. It
// returns one PlannedStep, or a Finish when the model called finish_task.
// Invalid replies (no tool call, unknown tool, bad arguments, an element
// not in this Scene's listing) are sent back with the error and re-asked up
// to MaxReasks times. Errors never contain the API key.
func (p *Planner) Plan(ctx context.Context, in plan.Input) (plan.Decision, error) {
	d, err := p.plan(ctx, in)
	return d, redact(err, p.cfg.APIKey)
}

func (p *Planner) plan(ctx context.Context, in plan.Input) (plan.Decision, error) {
	if in.Scene == nil {
		return plan.Decision{}, fmt.Errorf("ai: %w", ErrNoScene)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	log := p.cfg.Logger
	listed := listedIndices(in.Scene)

	img, why := p.shotFor(ctx, in.Scene)
	cur := turn{listing: in.Scene.Listing(), image: img}
	if img == nil {
		log.Info("planning from the scene alone, without a screenshot", "reason", why)
		cur.imageNote = "none this turn (" + why + "); use the listing"
	}
	// An attached screenshot needs no note: the system prompt says what it
	// is, and a line that says so again every turn would only add to the
	// part of each request the prompt cache cannot hold.

	req := Request{
		System:    SystemPrompt,
		Tools:     p.tools,
		MaxTokens: p.cfg.MaxTokens,
		CacheKey:  p.cfg.CacheKey,
	}
	p.conv.sync(in, p.cfg.HistorySteps)
	req.Messages = p.conv.request(cur)

	var usage plan.Usage
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return plan.Decision{Usage: usage}, err
		}
		start := p.cfg.Clock.Now()
		reply, err := p.provider.Complete(ctx, req)
		estimated := err == nil && !reply.Usage.Reported
		if estimated {
			// The server said nothing of its cost: count it.
			reply.Usage = Estimate(p.cfg.Provider, req, reply)
		}
		usage = usage.Add(plan.Usage{
			Estimated:        estimated,
			InputTokens:      reply.Usage.Input,
			CacheReadTokens:  reply.Usage.CacheRead,
			CacheWriteTokens: reply.Usage.CacheWrite,
			OutputTokens:     reply.Usage.Output,
			Latency:          p.cfg.Clock.Now().Sub(start),
		})
		if err != nil {
			return plan.Decision{Usage: usage}, fmt.Errorf("ai: model call failed: %w", err)
		}
		log.Debug("model replied", "stop", reply.RawStop, "tool_calls", len(reply.ToolCalls),
			"input_tokens", reply.Usage.Input, "cache_read_tokens", reply.Usage.CacheRead,
			"cache_write_tokens", reply.Usage.CacheWrite, "output_tokens", reply.Usage.Output)

		switch reply.Stop {
		case StopRefusal:
			return plan.Decision{Usage: usage}, fmt.Errorf("ai: %w: %s", ErrRefused, oneLine(reply.Refusal, 300))
		case StopMaxTokens:
			return plan.Decision{Usage: usage}, fmt.Errorf("ai: %w (%d tokens); raise MaxTokens", ErrMaxTokens, p.cfg.MaxTokens)
		}

		d, problem := p.decide(reply, in.Scene, listed)
		if problem == "" {
			d.Usage = usage
			return d, nil
		}
		if attempt >= p.cfg.MaxReasks {
			return plan.Decision{Usage: usage}, fmt.Errorf("ai: %w after %d re-asks: %s", ErrInvalidReply, attempt, problem)
		}
		log.Warn("re-asking the model", "attempt", attempt+1, "problem", problem)
		req.Messages = append(req.Messages, reask(reply, problem)...)
	}
}

// decide turns a reply into a Decision, or says what is wrong with it.
func (p *Planner) decide(reply Reply, sc *scene.Scene, listed []int) (plan.Decision, string) {
	if len(reply.ToolCalls) == 0 {
		return plan.Decision{}, "your reply had no tool call. Every turn must call exactly one tool; to end the task call finish_task"
	}
	if len(reply.ToolCalls) > 1 {
		names := make([]string, len(reply.ToolCalls))
		for i, tc := range reply.ToolCalls {
			names[i] = tc.Name
		}
		p.cfg.Logger.Warn("the model made several tool calls; using the first", "calls", strings.Join(names, ", "))
	}
	tc := reply.ToolCalls[0]
	if !json.Valid(tc.Args) {
		return plan.Decision{}, fmt.Sprintf("%s: the arguments are not valid JSON: %s", tc.Name, oneLine(string(tc.Args), 200))
	}
	call := tools.Call{Name: tc.Name, Args: compactJSON(tc.Args)}
	if err := tools.Validate(call); err != nil {
		return plan.Decision{}, err.Error()
	}
	if f, err := tools.Ending(call); err != nil {
		return plan.Decision{}, err.Error()
	} else if f != nil {
		return plan.Decision{Finish: &plan.Finish{Success: f.Success, Reason: f.Reason}}, ""
	}
	var el *scene.Element
	if i, ok := tools.ElementArg(call); ok {
		if _, found := slices.BinarySearch(listed, i); !found {
			return plan.Decision{}, fmt.Sprintf("%s: no element %d in the current screen listing; use one of the [N] indices listed there (%s)", call.Name, i, indexRange(listed))
		}
		e, _ := sc.Element(i)
		el = &e
	}
	return plan.Decision{Steps: []plan.PlannedStep{{
		Intent: intent(call, el, reply.Text),
		Call:   call,
		Expect: plan.ExpectationOf(call),
	}}}, ""
}

// reask answers the model's unusable reply: its tool calls each get an
// error result (every tool call must be answered), and a note says what to
// fix.
func reask(reply Reply, problem string) []Message {
	var asst []Part
	if reply.Text != "" {
		asst = append(asst, Part{Text: reply.Text})
	}
	var results []Part
	for i, tc := range reply.ToolCalls {
		args := tc.Args
		if !json.Valid(args) {
			args = json.RawMessage("{}")
		}
		asst = append(asst, Part{ToolUse: &ToolUse{ID: tc.ID, Name: tc.Name, Args: args}})
		content := "Error: " + problem
		if i > 0 {
			content = "Not run: only one tool call per turn is allowed."
		}
		results = append(results, Part{ToolResult: &ToolResult{ID: tc.ID, Content: content, IsError: true}})
	}
	if len(asst) == 0 {
		asst = []Part{{Text: "(no tool call)"}}
	}
	note := "That reply could not be used: " + problem + ". Call exactly one tool now, naming elements only by the [N] indices of the current screen listing above."
	results = append(results, Part{Text: note})
	return []Message{{Role: RoleAssistant, Parts: asst}, {Role: RoleUser, Parts: results}}
}

// listedIndices is the sorted set of indices the listing shows.
func listedIndices(sc *scene.Scene) []int {
	els := sc.Listed()
	out := make([]int, len(els))
	for i, e := range els {
		out[i] = e.Index
	}
	slices.Sort(out)
	return out
}

func indexRange(listed []int) string {
	switch len(listed) {
	case 0:
		return "the listing is empty"
	case 1:
		return "only " + strconv.Itoa(listed[0])
	}
	return fmt.Sprintf("%d elements between %d and %d", len(listed), listed[0], listed[len(listed)-1])
}

// intent describes the call for step lines and history, with the element
// named as the model saw it (the tool's own intent line), followed by what
// the model said about it.
func intent(call tools.Call, el *scene.Element, text string) string {
	s := call.String()
	if t, ok := tools.Lookup(call.Name); ok {
		s = t.Intent(call, el)
	}
	if t := oneLine(text, 120); t != "" {
		s += " (" + t + ")"
	}
	return s
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return json.RawMessage(b.Bytes())
}

// redact removes the API key from an error's text, in case a provider or
// transport echoed it; identity (errors.Is/As) is kept.
func redact(err error, key string) error {
	if err == nil || len(key) < 4 || !strings.Contains(err.Error(), key) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), key, "[redacted]"), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// newCacheKey names one task's conversation for the provider's prompt
// cache: random, so that nothing about the task or the user leaks into it.
func newCacheKey() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "phonepilot-" + hex.EncodeToString(b[:])
}
