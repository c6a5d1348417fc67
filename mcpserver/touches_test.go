package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"phonepilot/device"
	"phonepilot/safety"
	"phonepilot/safety/touchtest"
)

// tryOverMCP brings the simulator to tg, then makes way's call on it as an
// MCP client does: observe, then the tool by name with its arguments,
// through the SDK's client and the server's protocol layer. It returns the
// irreversible effects the call had and the tool's answer.
func tryOverMCP(t *testing.T, policy safety.Policy, tg touchtest.Target, way touchtest.Way, opt *mcp.ClientOptions) (touchtest.Effects, string) {
	t.Helper()
	h := newHarnessWith(t, policy)
	p, err := h.devs.phone("sim")
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Reach(t.Context(), p, p.Device()); err != nil {
		t.Fatal(err)
	}
	before, err := touchtest.EffectsOf(p)
	if err != nil {
		t.Fatal(err)
	}
	cs := h.connect(t, "touches", opt)
	obs := must(t, cs, "observe", nil)
	el, err := tg.Index(t.Context(), p.Device())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(obs, fmt.Sprintf("[%d] ", el)) {
		t.Fatalf("%s: the observation does not list [%d]:\n%s", tg.Name, el, obs)
	}
	c := way.Call(el)
	var args map[string]any
	if err := json.Unmarshal(c.Args, &args); err != nil {
		t.Fatal(err)
	}
	out, isErr := call(t, cs, c.Name, args)
	after, err := touchtest.EffectsOf(p)
	if err != nil {
		t.Fatal(err)
	}
	if !isErr {
		out = "done: " + out
	}
	return after.Minus(before), out
}

// TestEveryTouchWaitsForAPersonOverMCP is issue 27's table through MCP's
// own protocol layer (the runtime's tests drive the same table through the
// Stepper, the loop and a flow): each irreversible target on the
// simulator, touched in every way (tap, long press, type_text with and
// without text and with submit, Enter, scroll in each direction inside
// it) by an MCP client calling the tools, with the default policy. A
// client that cannot ask its user (no elicitation) gets a tool error, and
// one whose user declines gets one too: nothing is sent, ordered or
// granted and the cashier does not open. The control, everything allowed,
// shows the ways that click on a phone reach the effects over MCP, so the
// table tests what it says.
func TestEveryTouchWaitsForAPersonOverMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("100 simulated tries over MCP")
	}
	declines := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}
	clients := []struct {
		name string
		opt  *mcp.ClientOptions
	}{{"no elicitation", nil}, {"the user declines", declines}}
	tries := 0
	for _, tg := range touchtest.Targets {
		for _, w := range touchtest.Ways {
			for _, c := range clients {
				tries++
				got, out := tryOverMCP(t, safety.Policy{}, tg, w, c.opt)
				if got != (touchtest.Effects{}) {
					t.Errorf("%s / %s / %s: %s without approval: %s", tg.Name, w.Name, c.name, got, out)
				}
			}
		}
	}
	reached := map[string][]string{}
	for _, tg := range touchtest.Targets {
		for _, w := range touchtest.Ways {
			if got, _ := tryOverMCP(t, touchtest.AllowAll(), tg, w, nil); got != (touchtest.Effects{}) {
				reached[w.Name] = append(reached[w.Name], tg.Name)
			}
		}
	}
	t.Logf("%d tries over MCP, 0 effects without approval; with everything allowed: %v", tries, reached)
	for _, way := range touchtest.Clicking {
		if len(reached[way]) == 0 {
			t.Errorf("control: %s reached no effect over MCP with everything allowed: the table does not test it", way)
		}
	}
}

// TestMCPActsOnTheScreenOfTheMoment: the client observed Settings; a
// permission dialog came up after, its Allow focused; the client's Enter,
// chosen on the screen it saw, would now click Allow. Even with every
// category allowed it is not run: the server checks the call on a read of
// the screen of the moment (the one check every planner's step gets) and
// answers with the screen now. Enter chosen on that screen runs.
func TestMCPActsOnTheScreenOfTheMoment(t *testing.T) {
	h := newHarnessWith(t, touchtest.AllowAll())
	p, err := h.devs.phone("sim")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	tg := touchtest.Targets[len(touchtest.Targets)-1] // the permission dialog's focused Allow
	if err := tg.Reach(ctx, p, p.Device()); err != nil {
		t.Fatal(err)
	}
	cs := h.connect(t, "moment", nil)
	// The dialog goes (a person's hand), the client looks at Settings.
	if err := p.Device().Key(ctx, device.KeyBack); err != nil {
		t.Fatal(err)
	}
	if obs := must(t, cs, "observe", nil); strings.Contains(obs, "permission_allow_button") {
		t.Fatalf("the dialog is still up:\n%s", obs)
	}
	if err := p.ShowPermissionDialog(); err != nil {
		t.Fatal(err)
	}
	granted := func() int {
		e, err := touchtest.EffectsOf(p)
		if err != nil {
			t.Fatal(err)
		}
		return e.Granted
	}
	out, isErr := call(t, cs, "press_key", map[string]any{"key": "enter"})
	if !isErr || !strings.Contains(out, "stale index") || !strings.Contains(out, "nothing was done") || !strings.Contains(out, "permission_allow_button") {
		t.Fatalf("Enter chosen before the dialog came: error=%v %s", isErr, out)
	}
	if n := granted(); n != 0 {
		t.Fatalf("Enter chosen before the dialog came granted %d", n)
	}
	out = must(t, cs, "press_key", map[string]any{"key": "enter"})
	if n := granted(); n != 1 {
		t.Errorf("Enter chosen on the dialog (everything allowed) granted %d, want 1: %s", n, out)
	}
}
