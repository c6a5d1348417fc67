package ai

import (
	"context"
	"encoding/json"
)

// Provider sends one conversation to a model and returns its reply. It is
// the only seam between the AIPlanner's decision logic and a vendor API; the
// anthropic and openai packages implement it over the official SDKs.
// HTTP retries (429, 529, 5xx, timeouts) happen inside Complete.
type Provider interface {
	Complete(ctx context.Context, req Request) (Reply, error)
}

// Request is one decision call in provider-neutral form.
type Request struct {
	System    string
	Tools     []ToolSpec
	Messages  []Message
	MaxTokens int
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

// Part is one piece of a message; exactly one field is set.
type Part struct {
	Text       string
	Image      *Image
	ToolUse    *ToolUse
	ToolResult *ToolResult
}

// Image is an encoded picture for the model.
type Image struct {
	MediaType string // "image/png"
	Data      []byte
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

// TokenUsage counts tokens of one request.
type TokenUsage struct {
	Input, Output int64
}
