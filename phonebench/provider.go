package phonebench

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"phonepilot/plan/ai"
)

// scripted is the reference policy's model: an ai.Provider whose replies
// come from the decision-maker. It reads only the Request the AIPlanner
// would send a real model — the screen listing of the turn between
// <screen> and </screen>, and the tool result answering its previous call —
// so what fails under it is the runtime's fault, not a model's.
type scripted struct {
	d     *decider
	turns int
	// provider is the provider whose rules count its requests.
	provider string
	// seen, in tests, hears each request.
	seen func(ai.Request)
}

var _ ai.Provider = (*scripted)(nil)

// errNoScreen: a request without the turn's screen listing (the AIPlanner
// always sends one; a request without it is a harness bug).
var errNoScreen = errors.New("phonebench: the request has no <screen> listing")

// Complete implements ai.Provider.
func (s *scripted) Complete(ctx context.Context, req ai.Request) (ai.Reply, error) {
	if err := ctx.Err(); err != nil {
		return ai.Reply{}, err
	}
	if s.seen != nil {
		s.seen(req)
	}
	listing, prev, err := readRequest(req)
	if err != nil {
		return ai.Reply{}, err
	}
	m := s.d.next(listing, prev)
	s.turns++
	id := fmt.Sprintf("call_%d", s.turns)
	return ai.Reply{
		ToolCalls: []ai.ToolUse{{ID: id, Name: m.Call.Name, Args: m.Call.Args}},
		Text:      m.Intent,
		Stop:      ai.StopToolUse,
		RawStop:   "tool_use",
		Model:     "phonebench-reference",
		// No usage: a stand-in reports none, and the planner counts the
		// request with a real tokenizer (ai.Estimate), marked estimated;
		// the bench adds each turn's screenshot (ai.ScreenshotTokens).
	}, nil
}

// readRequest finds, in the request's last user message, the listing of
// the current screen and the result of the previous tool call (nil on the
// first turn).
func readRequest(req ai.Request) (string, *outcome, error) {
	if len(req.Messages) == 0 {
		return "", nil, errNoScreen
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != ai.RoleUser {
		return "", nil, fmt.Errorf("phonebench: the request ends with a %s message, not the user's turn", last.Role)
	}
	var listing string
	var prev *outcome
	for _, p := range last.Parts {
		switch {
		case p.ToolResult != nil:
			// With several results (a re-ask), the first answers the call.
			if prev == nil {
				prev = &outcome{OK: !p.ToolResult.IsError && !strings.HasPrefix(p.ToolResult.Content, "failed"), Text: p.ToolResult.Content}
			}
		case p.Text != "":
			if l, ok := screenOf(p.Text); ok {
				listing = l
			}
		}
	}
	if listing == "" {
		return "", nil, errNoScreen
	}
	return listing, prev, nil
}

// screenOf cuts the listing out of the turn's text.
func screenOf(text string) (string, bool) {
	_, rest, ok := strings.Cut(text, "<screen>\n")
	if !ok {
		return "", false
	}
	l, _, ok := strings.Cut(rest, "\n</screen>")
	return l, ok
}
