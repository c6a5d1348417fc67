// Package anthropic is the AIPlanner's provider for the Anthropic Messages
// API, over the official SDK (github.com/anthropics/anthropic-sdk-go/v2). It
// sends the tools natively with tool_choice {"type":"any",
// "disable_parallel_tool_use":true}, so the model answers with exactly one
// tool_use block. Two cache_control breakpoints (of the four the API
// allows) cache the tools and system prompt, and the conversation up to the
// current screen. Importing the package registers it as "anthropic".
package anthropic

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"phonepilot/plan/ai"
)

// Name is the provider's registry name.
const Name = "anthropic"

// DefaultModel is used when the Config names none: the current Claude
// Sonnet, a good balance of speed, cost and tool use.
const DefaultModel = sdk.ModelClaudeSonnet5_5

func init() {
	ai.Register(Name, ai.ProviderInfo{
		New:          func(cfg ai.Config) (ai.Provider, error) { return New(cfg) },
		KeyEnv:       "ANTHROPIC_API_KEY",
		DefaultModel: string(DefaultModel),
	})
}

// Provider calls the Messages API.
type Provider struct {
	messages sdk.MessageService
	model    string
}

var _ ai.Provider = (*Provider)(nil)

// New builds the provider from cfg. The client ignores the environment
// (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, …): cmd/ resolves those into cfg,
// so what runs is exactly what was configured. extra options go last (tests
// use them for an HTTP client).
func New(cfg ai.Config, extra ...option.RequestOption) (*Provider, error) {
	if cfg.MaxRetries < 0 {
		return nil, fmt.Errorf("anthropic: MaxRetries %d is negative", cfg.MaxRetries)
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.Timeout > 0 {
		opts = append(opts, option.WithRequestTimeout(cfg.Timeout))
	}
	if cfg.MaxRetryDelay > 0 {
		opts = append(opts, option.WithMiddleware(capRetryAfter(cfg.MaxRetryDelay)))
	}
	opts = append(opts, extra...)
	model := cfg.Model
	if model == "" {
		model = DefaultModel
	}
	client := sdk.NewClient(opts...)
	return &Provider{messages: client.Messages, model: model}, nil
}

// capRetryAfter clamps the server's retry-after hints to max. The SDK honours
// retry-after without an upper bound; a rate-limited account can answer with
// minutes, and a step should fail with the provider's message instead of
// hanging.
func capRetryAfter(max time.Duration) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(req)
		if res == nil {
			return res, err
		}
		if v := res.Header.Get("Retry-After-Ms"); v != "" {
			if ms, perr := strconv.ParseFloat(v, 64); perr == nil && time.Duration(ms*float64(time.Millisecond)) > max {
				res.Header.Set("Retry-After-Ms", strconv.FormatInt(max.Milliseconds(), 10))
			}
		}
		if v := res.Header.Get("Retry-After"); v != "" {
			d, ok := time.Duration(0), false
			if s, perr := strconv.ParseFloat(v, 64); perr == nil {
				d, ok = time.Duration(s*float64(time.Second)), true
			} else if t, perr := http.ParseTime(v); perr == nil {
				d, ok = time.Until(t), true
			}
			if ok && d > max {
				res.Header.Del("Retry-After")
				res.Header.Set("Retry-After-Ms", strconv.FormatInt(max.Milliseconds(), 10))
			}
		}
		return res, err
	}
}

// Complete sends one Messages API request and parses the reply.
func (p *Provider) Complete(ctx context.Context, req ai.Request) (ai.Reply, error) {
	params, err := p.params(req)
	if err != nil {
		return ai.Reply{}, err
	}
	msg, err := p.messages.New(ctx, params)
	if err != nil {
		return ai.Reply{}, convertError(err)
	}
	return parse(msg), nil
}

// params maps the neutral request onto the SDK's types.
func (p *Provider) params(req ai.Request) (sdk.MessageNewParams, error) {
	params := sdk.MessageNewParams{
		Model:     p.model,
		MaxTokens: int64(req.MaxTokens),
		ToolChoice: sdk.ToolChoiceUnionParam{OfAny: &sdk.ToolChoiceAnyParam{
			DisableParallelToolUse: sdk.Bool(true),
		}},
	}
	if params.MaxTokens <= 0 {
		params.MaxTokens = ai.DefaultMaxTokens
	}
	// Breakpoint 1: tools, then system, are the first part of the prompt
	// and never change; a breakpoint on the system block caches both.
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam()}}
	}
	for _, t := range req.Tools {
		schema, err := inputSchema(t.Schema)
		if err != nil {
			return params, fmt.Errorf("anthropic: tool %s: %w", t.Name, err)
		}
		tool := sdk.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tool.Description = sdk.String(t.Description)
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: &tool})
	}
	for i, m := range req.Messages {
		var blocks []sdk.ContentBlockParamUnion
		for _, part := range m.Parts {
			switch {
			case part.ToolResult != nil:
				blocks = append(blocks, sdk.NewToolResultBlock(part.ToolResult.ID, part.ToolResult.Content, part.ToolResult.IsError))
			case part.ToolUse != nil:
				args := part.ToolUse.Args
				if len(args) == 0 || !json.Valid(args) {
					args = json.RawMessage("{}")
				}
				blocks = append(blocks, sdk.NewToolUseBlock(part.ToolUse.ID, args, part.ToolUse.Name))
			case part.Image != nil:
				blocks = append(blocks, sdk.NewImageBlockBase64(part.Image.MediaType, base64.StdEncoding.EncodeToString(part.Image.Data)))
			case part.Text != "":
				blocks = append(blocks, sdk.NewTextBlock(part.Text))
			default:
				continue
			}
			if part.CacheBreak {
				// Breakpoint 2: the conversation so far.
				if cc := blocks[len(blocks)-1].GetCacheControl(); cc != nil {
					*cc = sdk.NewCacheControlEphemeralParam()
				}
			}
		}
		if len(blocks) == 0 {
			return params, fmt.Errorf("anthropic: message %d (%s) is empty", i, m.Role)
		}
		switch m.Role {
		case ai.RoleUser:
			params.Messages = append(params.Messages, sdk.NewUserMessage(blocks...))
		case ai.RoleAssistant:
			params.Messages = append(params.Messages, sdk.NewAssistantMessage(blocks...))
		default:
			return params, fmt.Errorf("anthropic: message %d has unknown role %q", i, m.Role)
		}
	}
	return params, nil
}

// inputSchema turns a tool's JSON Schema into the SDK's input_schema,
// keeping every keyword (type is always "object" for a tool's input).
func inputSchema(raw json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	var s sdk.ToolInputSchemaParam
	if len(raw) == 0 {
		return s, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return s, fmt.Errorf("schema is not a JSON object: %w", err)
	}
	if t, ok := m["type"]; ok && t != "object" {
		return s, fmt.Errorf("schema type %v, want object", t)
	}
	delete(m, "type")
	if props, ok := m["properties"]; ok {
		s.Properties = props
		delete(m, "properties")
	}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			name, ok := r.(string)
			if !ok {
				return s, fmt.Errorf("required entry %v is not a string", r)
			}
			s.Required = append(s.Required, name)
		}
		delete(m, "required")
	}
	if len(m) > 0 {
		s.ExtraFields = m
	}
	return s, nil
}

// parse turns a Message into the neutral Reply.
func parse(msg *sdk.Message) ai.Reply {
	r := ai.Reply{
		RawStop: string(msg.StopReason),
		Model:   string(msg.Model),
		Usage: ai.TokenUsage{
			Input:      msg.Usage.InputTokens + msg.Usage.CacheCreationInputTokens + msg.Usage.CacheReadInputTokens,
			CacheRead:  msg.Usage.CacheReadInputTokens,
			CacheWrite: msg.Usage.CacheCreationInputTokens,
			Output:     msg.Usage.OutputTokens,
			Reported:   msg.Usage.JSON.InputTokens.Valid() || msg.Usage.JSON.OutputTokens.Valid(),
		},
	}
	for _, b := range msg.Content {
		switch v := b.AsAny().(type) {
		case sdk.TextBlock:
			if r.Text != "" {
				r.Text += "\n"
			}
			r.Text += v.Text
		case sdk.ToolUseBlock:
			args := json.RawMessage("{}")
			var buf bytes.Buffer
			if len(v.Input) > 0 && json.Compact(&buf, v.Input) == nil {
				args = buf.Bytes()
			}
			r.ToolCalls = append(r.ToolCalls, ai.ToolUse{ID: v.ID, Name: v.Name, Args: args})
		}
	}
	switch msg.StopReason {
	case sdk.StopReasonToolUse:
		r.Stop = ai.StopToolUse
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence:
		r.Stop = ai.StopEndTurn
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		r.Stop = ai.StopMaxTokens
	case sdk.StopReasonRefusal:
		r.Stop = ai.StopRefusal
		r.Refusal = r.Text
		if r.Refusal == "" {
			r.Refusal = "the model declined to answer"
		}
	default:
		r.Stop = ai.StopOther
	}
	return r
}

// convertError keeps the provider's status, type and message and drops
// everything else (the SDK's error text includes the request URL and body).
func convertError(err error) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		pe := &ai.ProviderError{
			Provider:  Name,
			Status:    apiErr.StatusCode,
			Type:      string(apiErr.Type()),
			Message:   apiErr.Message,
			RequestID: apiErr.RequestID,
		}
		if pe.Message == "" {
			pe.Message = http.StatusText(apiErr.StatusCode)
		}
		return pe
	}
	return fmt.Errorf("anthropic: %w", err)
}
