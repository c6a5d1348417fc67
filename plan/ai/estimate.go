package ai

import (
	"phonepilot/perception/shot"
	"phonepilot/plan/ai/tokens"
)

// Counting a request the way the providers bill it, for servers that report
// no usage (package tokens: a real tokenizer for text, each provider's rule
// for images).
const (
	// Tokens around each message (OpenAI's cookbook counts 3 per message).
	perMessageTokens = 3
	// The tool-use system prompt Anthropic adds to a request with tools
	// and tool_choice any (its "Tool use" pricing table, Claude Sonnet).
	anthropicToolPromptTokens = 313
)

// Estimate counts what req costs on provider ("anthropic": Anthropic's
// image rule and tool prompt; anything else: OpenAI's tile rule) and what
// reply's output is, with nothing read from or written to a cache. The
// planner uses it for a reply that carries no usage.
func Estimate(provider string, req Request, reply Reply) TokenUsage {
	in := tokens.Text(req.System)
	for _, t := range req.Tools {
		in += tokens.Text(t.Name) + tokens.Text(t.Description) + tokens.Text(string(t.Schema))
	}
	if provider == "anthropic" && len(req.Tools) > 0 {
		in += anthropicToolPromptTokens
	}
	for _, m := range req.Messages {
		in += perMessageTokens
		for _, p := range m.Parts {
			switch {
			case p.Image != nil:
				in += imageTokens(provider, p.Image.Width, p.Image.Height)
			case p.ToolUse != nil:
				in += tokens.Text(p.ToolUse.Name) + tokens.Text(string(p.ToolUse.Args))
			case p.ToolResult != nil:
				in += tokens.Text(p.ToolResult.Content)
			default:
				in += tokens.Text(p.Text)
			}
		}
	}
	out := tokens.Text(reply.Text)
	for _, tc := range reply.ToolCalls {
		out += tokens.Text(tc.Name) + tokens.Text(string(tc.Args)) + perMessageTokens
	}
	return TokenUsage{Input: int64(in + perMessageTokens), Output: int64(out)}
}

// imageTokens is what a w×h image costs on provider (Anthropic's rule, or
// OpenAI's tiles for anything else).
func imageTokens(provider string, w, h int) int {
	if provider == "anthropic" {
		return tokens.AnthropicImage(w, h)
	}
	return tokens.OpenAIImage(w, h, "auto")
}

// ScreenshotTokens is what the screenshot of a w×h screen adds to a
// request on provider when the planner sends it with the long side at
// edge (0: DefaultImageEdge), the way screenshot fits it: for a count of a
// turn whose image was not rendered (phonebench's reference policy).
func ScreenshotTokens(provider string, w, h, edge int) int64 {
	iw, ih := ScreenshotSize(w, h, edge)
	return int64(imageTokens(provider, iw, ih))
}

// ScreenshotSize is the size the planner sends the screenshot of a w×h
// screen at with the long side at edge (0: DefaultImageEdge).
func ScreenshotSize(w, h, edge int) (int, int) {
	if edge <= 0 {
		edge = DefaultImageEdge
	}
	return shot.Size(w, h, min(edge, MaxImageEdge), MaxImagePixels)
}
