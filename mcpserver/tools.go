package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"phonepilot/internal/jsonin"
	"phonepilot/tools"
)

// actionTools are the tools of the registry a client calls directly (all
// but finish_task and ask_user: tools.Direct); their names, arguments and
// schemas are the tools package's own, so what an MCP client is told and
// what is validated are the same text, and a new tool reaches MCP clients
// with no line here.
var actionTools = tools.Direct()

// actionSuffix is added to each action tool's description: what it answers.
const actionSuffix = " Answers after the screen settles: changed or not, what appeared/disappeared, the new listing."

type toolHandler = func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)

// serverTool is one of the server's own tools, beside the action tools.
type serverTool struct {
	name, desc, schema string
	h                  toolHandler
}

// serverTools are the server's own tools: the ones that look (offered
// before the action tools) and the ones that hand a goal over (after).
// A new one is a row here and its handler; ToolNames, and so the tests
// that check tools/list, take it from here.
func (s *Server) serverTools() (look, delegate []serverTool) {
	look = []serverTool{
		{"list_devices", "List the phones this server drives and which session holds each.",
			`{"type":"object","properties":{},"additionalProperties":false}`, s.listDevices},
		{"observe", "Read the screen: a header line (size, app) and one line per element a finger or reader needs, " +
			`each starting with its [N] index: [3] EditText "Search" id=q clickable. Name elements by these indices in the actions; ` +
			"they stay valid until the next observation or action answer. Leases the device to this session.",
			`{"type":"object","properties":{"device":{"type":"string","description":"sim, sim:NAME or adb:SERIAL (default: the last one observed, else the server's)"},` +
				`"screenshot":{"type":"boolean","description":"also return a PNG of the screen (long side ≤1568 px, ≤1 MB)"}},"additionalProperties":false}`,
			s.observe},
	}
	planners := make([]string, len(s.cfg.Planners))
	for i, p := range s.cfg.Planners {
		planners[i] = fmt.Sprintf("%q", p)
	}
	taskID := `{"type":"object","properties":{"task_id":{"type":"string"}},"required":["task_id"],"additionalProperties":false}`
	delegate = []serverTool{
		{"run_task", "Hand phonepilot a whole goal: its own loop observes, plans and acts until done, " +
			"with progress per step; returns the result and its cause. A gated action waits for a person's approval.",
			fmt.Sprintf(`{"type":"object","properties":{"goal":{"type":"string","description":"what to do, in plain words"},`+
				`"device":{"type":"string"},"planner":{"type":"string","enum":[%s]},"max_steps":{"type":"integer","minimum":1,"maximum":%d}},`+
				`"required":["goal"],"additionalProperties":false}`, strings.Join(planners, ","), s.cfg.MaxSteps),
			s.runTask},
		{"run_flow", "Replay a flow (a YAML script exported by `phonepilot flow export`, docs/flows.md) as a task, without a model: " +
			"each step's target found on the screen of the moment, with run_task's progress, approvals and result.",
			`{"type":"object","properties":{"flow":{"type":"string","description":"the flow file's YAML text"},` +
				`"params":{"type":"object","additionalProperties":{"type":"string"},"description":"values for the flow's ${name} parameters"},` +
				`"device":{"type":"string"}},"required":["flow"],"additionalProperties":false}`,
			s.runFlow},
		{"get_task", "A task's status, cause, steps and pending decision.", taskID, s.getTask},
		{"cancel_task", "Cancel a task.", taskID, s.cancelTask},
	}
	return look, delegate
}

// ToolNames is every tool the server offers in tools/list: its own and
// the registry's action tools.
func ToolNames() []string {
	look, delegate := (&Server{}).serverTools() // names only: a zero server's tables hold them
	var out []string
	for _, t := range look {
		out = append(out, t.name)
	}
	out = append(out, actionTools...)
	for _, t := range delegate {
		out = append(out, t.name)
	}
	return out
}

func (s *Server) addTools() {
	add := func(name, desc, schema string, h toolHandler) {
		s.mcp.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(compact(schema))}, h)
	}
	look, delegate := s.serverTools()
	for _, t := range look {
		add(t.name, t.desc, t.schema, t.h)
	}
	for _, name := range actionTools {
		spec, _ := tools.SpecFor(name)
		add(name, spec.Description+actionSuffix, string(spec.Schema), s.action(name))
	}
	for _, t := range delegate {
		add(t.name, t.desc, t.schema, t.h)
	}
}

func compact(s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		panic("mcpserver: a tool schema is not JSON: " + err.Error())
	}
	return b.String()
}

// decodeArgs reads a call's arguments into v, refusing unknown ones.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := jsonin.Check(raw); err != nil {
		return fmt.Errorf("bad arguments: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("bad arguments: %v", err)
	}
	return nil
}

// errorResult is a tool error the client's model reads.
func errorResult(format string, a ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, a...)}}}
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
