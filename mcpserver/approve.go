package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"phonepilot/runtime"
	"phonepilot/storage"
	"phonepilot/tools"
)

// elicitPerson is the runtime.Person of a session whose client can ask its
// user: a gated direct action is put to the user through MCP elicitation
// and runs only on their yes. The model never answers it: elicitation is
// shown to the person by the client.
type elicitPerson struct{ ss *mcp.ServerSession }

var _ runtime.Person = elicitPerson{}

func (p elicitPerson) Approve(ctx context.Context, a runtime.Approval) (runtime.ApprovalDecision, error) {
	what := a.Call.String()
	if t, ok := tools.Lookup(a.Call.Name); ok {
		what = t.Intent(a.Call, a.Element)
	}
	app := ""
	if a.Scene != nil {
		app = a.Scene.Package
	}
	msg := approvalMessage(what, string(a.Decision.Category), a.Decision.Reason, app)
	yes, note, err := askYes(ctx, p.ss, msg)
	if err != nil {
		return runtime.ApprovalDecision{}, err
	}
	return runtime.ApprovalDecision{Approved: yes, By: "mcp", Note: note}, nil
}

// Ask is not reached: ask_user is not a direct tool.
func (p elicitPerson) Ask(ctx context.Context, q runtime.Question) (runtime.Answer, error) {
	return runtime.Answer{}, errors.New("mcp: a direct step cannot ask a question")
}

func approvalMessage(what, category, reason, app string) string {
	msg := fmt.Sprintf("phonepilot's safety gate stopped an action before it touched the phone: %s", what)
	if category != "" {
		msg += fmt.Sprintf(" (%s: %s)", category, reason)
	}
	if app != "" {
		msg += " in " + app
	}
	return msg + ". Allow it to run once?"
}

// approveSchema is the one-field form of an approval.
var approveSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "title": "Allow this action", "description": "yes runs it once; no refuses it"},
	},
	"required": []string{"approve"},
}

// askYes puts msg to the client's user. Declining, cancelling or an
// accept without approve=true is a no; an error of the client (not of
// ctx) is a no that says so.
func askYes(ctx context.Context, ss *mcp.ServerSession, msg string) (bool, string, error) {
	res, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: msg, RequestedSchema: approveSchema})
	switch {
	case err != nil && ctx.Err() != nil:
		return false, "", ctx.Err()
	case err != nil:
		return false, "the client could not ask its user: " + err.Error(), nil
	case res.Action != "accept":
		return false, "the user chose " + res.Action, nil
	}
	yes, _ := res.Content["approve"].(bool)
	if !yes {
		return false, "the user answered no", nil
	}
	return true, "approved by the user through the MCP client", nil
}

// askText puts a planner's question to the client's user and returns the
// answer ("" with ok false when they did not answer).
func askText(ctx context.Context, ss *mcp.ServerSession, question string) (string, bool, error) {
	res, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: "phonepilot's task asks: " + question, RequestedSchema: map[string]any{
		"type":       "object",
		"properties": map[string]any{"answer": map[string]any{"type": "string", "title": "Answer"}},
		"required":   []string{"answer"},
	}})
	switch {
	case err != nil && ctx.Err() != nil:
		return "", false, ctx.Err()
	case err != nil, res.Action != "accept":
		return "", false, nil
	}
	text, _ := res.Content["answer"].(string)
	return text, strings.TrimSpace(text) != "", nil
}

// pendingText describes a task's pending decision for a model and a person.
func pendingText(p *storage.Pending) string {
	if p == nil {
		return ""
	}
	if p.Question != "" {
		return fmt.Sprintf("step %d asks: %s", p.Step, p.Question)
	}
	what := p.Call.String()
	if p.Element != nil {
		what += fmt.Sprintf(" on [%d] %s %q", p.Element.Index, p.Element.Class, p.Element.Label)
	}
	return fmt.Sprintf("step %d wants approval for %s (%s: %s), until %s", p.Step, what, p.Category, p.Reason,
		p.Expires.UTC().Format("15:04:05Z"))
}
