package ai

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Provider sends one conversation to a model and returns its reply. It is
// the only seam between the AIPlanner's decision logic and a vendor API; the
// anthropic and openai packages implement it over the official SDKs.
// HTTP retries (429, 529, 5xx, timeouts) happen inside Complete.
type Provider interface {
	Complete(ctx context.Context, req Request) (Reply, error)
}

// Request is one decision call in provider-neutral form.
//
// Caching: System and Tools never change within a task, and Messages only
// grow at their end, so a provider can cache all of it but the newest turn.
// The Part marked CacheBreak ends what is worth caching (everything after
// it, the current screen and its screenshot, is sent once); CacheKey names
// the task's conversation, the same for every request of one task (OpenAI
// routes requests with one prompt_cache_key to the same cache).
type Request struct {
	System    string
	Tools     []ToolSpec
	Messages  []Message
	MaxTokens int
	CacheKey  string
}

// ToolSpec is a tool as a model sees it: name, description and the JSON
// Schema of its arguments, sent as is.
type ToolSpec struct {
	Name        string
	Description string
	Schema      json.RawMessage
}

// Role is who speaks a Message.
type Role string

// The two roles of a conversation (the system prompt is separate).
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one turn. A user turn holds text, at most one image, and tool
// results answering the previous assistant turn's tool uses; an assistant
// turn holds its tool uses (and possibly text).
type Message struct {
	Role  Role
	Parts []Part
}

// Part is one piece of a message; exactly one of Text, Image, ToolUse and
// ToolResult is set. CacheBreak marks the last part of the request's
// cacheable prefix (see Request).
type Part struct {
	Text       string
	Image      *Image
	ToolUse    *ToolUse
	ToolResult *ToolResult
	CacheBreak bool
}

// ToolUse is a tool call the model made (or is shown to have made).
type ToolUse struct {
	ID   string
	Name string
	Args json.RawMessage
}

// ToolResult answers the ToolUse with the same ID.
type ToolResult struct {
	ID      string
	Content string
	IsError bool
}

// StopReason says why the model stopped, normalised across providers.
type StopReason string

// Normalised stop reasons.
const (
	StopToolUse   StopReason = "tool_use"
	StopEndTurn   StopReason = "end_turn"
	StopMaxTokens StopReason = "max_tokens"
	StopRefusal   StopReason = "refusal"
	StopOther     StopReason = "other"
)

// Reply is a model's answer in provider-neutral form.
type Reply struct {
	ToolCalls []ToolUse
	Text      string
	Refusal   string // the model's refusal text, when it refused
	Stop      StopReason
	RawStop   string // the provider's own stop/finish reason
	Model     string
	Usage     TokenUsage
}

// TokenUsage counts tokens of one request as the provider reported them.
// Input is every input token, CacheRead and CacheWrite the parts of it read
// from and written to the prompt cache. Reported is false when the response
// carried no usage at all (some compatible servers send none).
type TokenUsage struct {
	Input, CacheRead, CacheWrite, Output int64
	Reported                             bool
}

// ProviderError is a model API failure that survived the SDK's retries: the
// HTTP status and the provider's own explanation. It never carries the API
// key or request headers.
type ProviderError struct {
	Provider  string // "anthropic", "openai"
	Status    int    // HTTP status, 0 when no response arrived
	Type      string // provider error type or code: "rate_limit_error", "overloaded_error", …
	Message   string // the provider's message
	RequestID string
}

func (e *ProviderError) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
	}
	if e.Type != "" {
		b.WriteString(" " + e.Type)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" (request " + e.RequestID + ")")
	}
	return b.String()
}

// Retryable reports whether the failure was of a kind the SDK retries
// (rate limit, overload, server error); the retries were spent.
func (e *ProviderError) Retryable() bool {
	return e.Status == 408 || e.Status == 409 || e.Status == 429 || e.Status >= 500
}
