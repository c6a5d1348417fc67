package mcpserver_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// run_flow replays a flow file as a task with its parameters: the phone's
// own state shows the search the parameter asked for; a bad flow or an
// undeclared parameter is refused before anything runs.
func TestRunFlowReplaysWithParams(t *testing.T) {
	h := newHarness(t)
	var p progress
	cs := h.connect(t, "flows", &mcp.ClientOptions{ProgressNotificationHandler: p.handler})
	yaml, err := os.ReadFile("../flow/testdata/taobao_search_ai_en.yaml")
	if err != nil {
		t.Fatal(err)
	}
	params := &mcp.CallToolParams{Name: "run_flow", Arguments: map[string]any{"flow": string(yaml), "params": map[string]string{"query": "iPhone 16"}}}
	params.SetProgressToken("flow-1")
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	if out := text(res); res.IsError || !strings.Contains(out, " completed") {
		t.Fatalf("run_flow: %s", out)
	}
	ph, err := h.devs.phone("sim")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := ph.State()
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Taobao struct {
			LastSearch string `json:"last_search"`
		} `json:"taobao"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	if st.Taobao.LastSearch != "iPhone 16" {
		t.Errorf("last_search %q after run_flow with query=iPhone 16", st.Taobao.LastSearch)
	}
	if out, isErr := call(t, cs, "run_flow", map[string]any{"flow": "version: 1\nsteps: [oops"}); !isErr || !strings.Contains(out, `"flow"`) {
		t.Errorf("run_flow of bad YAML: %s", out)
	}
	if out, isErr := call(t, cs, "run_flow", map[string]any{"flow": string(yaml), "params": map[string]string{"colour": "red"}}); !isErr || !strings.Contains(out, "colour") {
		t.Errorf("run_flow with an undeclared parameter: %s", out)
	}
}
