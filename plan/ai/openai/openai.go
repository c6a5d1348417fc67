// Package openai is the AIPlanner's provider for OpenAI Chat Completions
// function calling, over the official SDK (github.com/openai/openai-go/v3).
// It asks for tool_choice "required" with parallel_tool_calls false, and
// works with OpenAI-compatible servers (vLLM, Ollama, LM Studio) through a
// base URL that includes /v1. Its prompt caching is automatic: each task
// sends one prompt_cache_key, and the planner's messages only grow at
// their end. Importing the package registers it as "openai".
package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"phonepilot/plan/ai"
)

// Name is the provider's registry name.
const Name = "openai"

// DefaultModel is used when the Config names none.
const DefaultModel = shared.ChatModelGPT5_5

func init() {
	ai.Register(Name, ai.ProviderInfo{
		New:          func(cfg ai.Config) (ai.Provider, error) { return New(cfg) },
		KeyEnv:       "OPENAI_API_KEY",
		DefaultModel: string(DefaultModel),
	})
}

// Provider calls the Chat Completions API.
type Provider struct {
	completions sdk.ChatCompletionService
	model       string
	// hosted is true for api.openai.com, which wants max_completion_tokens;
	// compatible servers (Ollama documents it) read max_tokens.
	hosted bool
}

var _ ai.Provider = (*Provider)(nil)

// New builds the provider from cfg. The service is built without the SDK's
// environment defaults (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID, …):
// cmd/ resolves those into cfg, so what runs is exactly what was configured.
// extra options go last (tests use them for an HTTP client).
func New(cfg ai.Config, extra ...option.RequestOption) (*Provider, error) {
	if cfg.MaxRetries < 0 {
		return nil, fmt.Errorf("openai: MaxRetries %d is negative", cfg.MaxRetries)
	}
	// The per-attempt timeout sits on the HTTP client rather than in
	// option.WithRequestTimeout: openai-go gives up at once when its own
	// attempt deadline passes, while a client timeout is a transport error
	// it retries like any other.
	opts := []option.RequestOption{
		option.WithEnvironmentProduction(),
		option.WithHTTPClient(&http.Client{Timeout: cfg.Timeout}),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	hosted := true
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("openai: base URL %q is not an absolute URL (want e.g. http://127.0.0.1:11434/v1)", cfg.BaseURL)
		}
		hosted = u.Hostname() == "api.openai.com"
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.MaxRetryDelay > 0 {
		opts = append(opts, option.WithMaxRetryDelay(cfg.MaxRetryDelay))
	}
	opts = append(opts, extra...)
	model := cfg.Model
	if model == "" {
		model = DefaultModel
	}
	return &Provider{completions: sdk.NewChatCompletionService(opts...), model: model, hosted: hosted}, nil
}

// Complete sends one Chat Completions request and parses the reply.
func (p *Provider) Complete(ctx context.Context, req ai.Request) (ai.Reply, error) {
	params, err := p.params(req)
	if err != nil {
		return ai.Reply{}, err
	}
	resp, err := p.completions.New(ctx, params)
	if err != nil {
		return ai.Reply{}, convertError(err)
	}
	return parse(resp)
}

// params maps the neutral request onto the SDK's types.
func (p *Provider) params(req ai.Request) (sdk.ChatCompletionNewParams, error) {
	params := sdk.ChatCompletionNewParams{
		Model: p.model,
		ToolChoice: sdk.ChatCompletionToolChoiceOptionUnionParam{
			OfAuto: sdk.String(string(sdk.ChatCompletionToolChoiceOptionAutoRequired)),
		},
		ParallelToolCalls: sdk.Bool(false),
	}
	// OpenAI caches prompt prefixes by itself; the key keeps one task's
	// requests on the same cache. Compatible servers ignore the field.
	if req.CacheKey != "" {
		params.PromptCacheKey = sdk.String(req.CacheKey)
	}
	maxTokens := int64(req.MaxTokens)
	if maxTokens <= 0 {
		maxTokens = ai.DefaultMaxTokens
	}
	if p.hosted {
		params.MaxCompletionTokens = sdk.Int(maxTokens)
	} else {
		params.MaxTokens = sdk.Int(maxTokens)
	}
	if req.System != "" {
		params.Messages = append(params.Messages, sdk.SystemMessage(req.System))
	}
	for _, t := range req.Tools {
		var schema shared.FunctionParameters
		if len(t.Schema) > 0 {
			if err := json.Unmarshal(t.Schema, &schema); err != nil {
				return params, fmt.Errorf("openai: tool %s: schema is not a JSON object: %w", t.Name, err)
			}
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			fn.Description = sdk.String(t.Description)
		}
		params.Tools = append(params.Tools, sdk.ChatCompletionFunctionTool(fn))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case ai.RoleUser:
			// Tool results become tool messages answering their call ids;
			// they must directly follow the assistant message, so they go
			// before the user's own content.
			var parts []sdk.ChatCompletionContentPartUnionParam
			for _, part := range m.Parts {
				switch {
				case part.ToolResult != nil:
					content := part.ToolResult.Content
					if part.ToolResult.IsError {
						content = "Error: " + content
					}
					params.Messages = append(params.Messages, sdk.ToolMessage(content, part.ToolResult.ID))
				case part.Image != nil:
					parts = append(parts, sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{
						URL: "data:" + part.Image.MediaType + ";base64," + base64.StdEncoding.EncodeToString(part.Image.Data),
					}))
				case part.Text != "":
					parts = append(parts, sdk.TextContentPart(part.Text))
				}
			}
			if len(parts) > 0 {
				params.Messages = append(params.Messages, sdk.UserMessage(parts))
			}
		case ai.RoleAssistant:
			var asst sdk.ChatCompletionAssistantMessageParam
			var text []string
			for _, part := range m.Parts {
				switch {
				case part.ToolUse != nil:
					args := string(part.ToolUse.Args)
					if args == "" {
						args = "{}"
					}
					asst.ToolCalls = append(asst.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
						OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
							ID:       part.ToolUse.ID,
							Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: part.ToolUse.Name, Arguments: args},
						},
					})
				case part.Text != "":
					text = append(text, part.Text)
				}
			}
			if len(text) > 0 {
				asst.Content.OfString = sdk.String(strings.Join(text, "\n"))
			}
			if len(asst.ToolCalls) == 0 && len(text) == 0 {
				return params, fmt.Errorf("openai: message %d (assistant) is empty", i)
			}
			params.Messages = append(params.Messages, sdk.ChatCompletionMessageParamUnion{OfAssistant: &asst})
		default:
			return params, fmt.Errorf("openai: message %d has unknown role %q", i, m.Role)
		}
	}
	return params, nil
}

// parse turns a ChatCompletion into the neutral Reply. Compatible servers
// differ in finish_reason (some say "stop" beside tool calls), so the tool
// calls themselves decide.
func parse(resp *sdk.ChatCompletion) (ai.Reply, error) {
	r := ai.Reply{
		Model: resp.Model,
		Usage: ai.TokenUsage{
			Input:     resp.Usage.PromptTokens,
			CacheRead: resp.Usage.PromptTokensDetails.CachedTokens,
			Output:    resp.Usage.CompletionTokens,
			Reported:  resp.Usage.JSON.PromptTokens.Valid(),
		},
	}
	if len(resp.Choices) == 0 {
		return r, &ai.ProviderError{Provider: Name, Status: http.StatusOK, Message: "the response has no choices"}
	}
	choice := resp.Choices[0]
	msg := choice.Message
	r.RawStop = choice.FinishReason
	r.Text = msg.Content
	for _, tc := range msg.ToolCalls {
		switch tc.Type {
		case "function", "":
			// Arguments arrive as a JSON string; invalid JSON is passed on
			// as is for the planner to send back to the model.
			args := json.RawMessage(tc.Function.Arguments)
			var buf bytes.Buffer
			switch {
			case strings.TrimSpace(tc.Function.Arguments) == "":
				args = json.RawMessage("{}")
			case json.Compact(&buf, args) == nil:
				args = buf.Bytes()
			}
			r.ToolCalls = append(r.ToolCalls, ai.ToolUse{ID: tc.ID, Name: tc.Function.Name, Args: args})
		default:
			r.ToolCalls = append(r.ToolCalls, ai.ToolUse{ID: tc.ID, Name: tc.Custom.Name, Args: json.RawMessage(`{}`)})
		}
	}
	switch {
	case msg.Refusal != "":
		r.Stop, r.Refusal = ai.StopRefusal, msg.Refusal
	case choice.FinishReason == "content_filter":
		r.Stop, r.Refusal = ai.StopRefusal, "the reply was withheld by the content filter"
	case choice.FinishReason == "length":
		r.Stop = ai.StopMaxTokens
	case len(r.ToolCalls) > 0:
		r.Stop = ai.StopToolUse
	case choice.FinishReason == "stop":
		r.Stop = ai.StopEndTurn
	default:
		r.Stop = ai.StopOther
	}
	return r, nil
}

// convertError keeps the provider's status, type, code and message and
// drops the rest.
func convertError(err error) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		pe := &ai.ProviderError{
			Provider: Name,
			Status:   apiErr.StatusCode,
			Type:     apiErr.Code,
			Message:  apiErr.Message,
		}
		if pe.Type == "" {
			pe.Type = apiErr.Type
		}
		if apiErr.Response != nil {
			pe.RequestID = apiErr.Response.Header.Get("X-Request-Id")
		}
		if pe.Message == "" {
			pe.Message = http.StatusText(apiErr.StatusCode)
		}
		return pe
	}
	return fmt.Errorf("openai: %w", err)
}
