package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"phonepilot/flow"
	"phonepilot/task"
)

type runFlowArgs struct {
	Flow   string            `json:"flow"`
	Params map[string]string `json:"params"`
	Device string            `json:"device"`
}

// runFlow replays a flow (docs/flows.md) as a task: no model is called;
// progress, approvals and cancellation are run_task's.
func (s *Server) runFlow(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if s.cfg.Tasks == nil {
		return errorResult("run_flow: this server runs no tasks"), nil
	}
	var a runFlowArgs
	if err := decodeArgs(req.Params.Arguments, &a); err != nil {
		return errorResult("run_flow: %v", err), nil
	}
	if strings.TrimSpace(a.Flow) == "" {
		return errorResult(`run_flow: argument "flow": required: the flow file's YAML text`), nil
	}
	f, err := flow.Parse([]byte(a.Flow))
	if err != nil {
		return errorResult(`run_flow: argument "flow": %v`, err), nil
	}
	return s.submitAndFollow(ctx, req, "run_flow", a.Device, s.cfg.MaxSteps, func(dev string) (task.Request, error) {
		r, err := flow.Request(f, a.Params, dev)
		if err != nil {
			return task.Request{}, fmt.Errorf(`argument "params": %w`, err)
		}
		r.MaxSteps = s.cfg.MaxSteps
		return r, nil
	})
}
