package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"phonepilot/mcpserver"
	"phonepilot/scene"
	"phonepilot/tools"
)

// The whole tools/list answer, as a client receives it, fits in 2,000
// tokens by the project's estimate, and names every tool.
func TestToolsListFitsTheBudget(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "budget", nil)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	n := scene.EstimateTokens(string(raw))
	t.Logf("tools/list: %d tools, %d bytes, %d tokens (scene.EstimateTokens)", len(res.Tools), len(raw), n)
	if n > 2000 {
		t.Errorf("tools/list is %d tokens; the budget is 2000", n)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	// The server's own tools, and every action tool of the registry.
	wantNames := mcpserver.ToolNames()
	for _, name := range append([]string{"list_devices", "observe", "run_task", "get_task"}, tools.Direct()...) {
		if !slices.Contains(wantNames, name) {
			t.Errorf("ToolNames() = %v lacks %s", wantNames, name)
		}
	}
	slices.Sort(wantNames)
	if got, want := strings.Join(names, " "), strings.Join(wantNames, " "); got != want {
		t.Errorf("tools: %s\nwant:  %s", got, want)
	}
	for _, tl := range res.Tools {
		if tl.Name == "observe" && !(strings.Contains(tl.Description, "[N] index") && strings.Contains(tl.Description, "latest") || strings.Contains(tl.Description, "next observation")) {
			t.Errorf("observe's description does not say what the listing is and how indices work: %s", tl.Description)
		}
		if tl.Name == "tap" && !strings.Contains(tl.Description, "new listing") {
			t.Errorf("tap's description does not say it answers with the new listing: %s", tl.Description)
		}
	}
}

// Every direct tool on the simulator: each action answers whether the
// screen changed, what appeared, and the new listing, so the next action
// needs no observe in between.
func TestDirectToolsOnTheSimulator(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "direct", nil)

	if out := must(t, cs, "list_devices", nil); !strings.Contains(out, "sim (sim, device) free") {
		t.Errorf("list_devices before any lease: %s", out)
	}
	obs := must(t, cs, "observe", nil)
	if !strings.HasPrefix(obs, "observation 1 of sim") || !strings.Contains(obs, "Screen 1080x2400") {
		t.Fatalf("observe: %s", obs)
	}
	if out := must(t, cs, "list_devices", nil); !strings.Contains(out, "sim (sim, device) leased to you") {
		t.Errorf("list_devices after observe: %s", out)
	}
	// A tap that changes nothing is not reported as done.
	out := must(t, cs, "tap", map[string]any{"element": index(t, afterListing(obs), `id=date`)})
	if !strings.Contains(out, "NOT confirmed") || !strings.Contains(out, "the screen did not change") {
		t.Errorf("a tap on the date, which does nothing: %s", out)
	}
	res := toSearchResults(t, cs)
	t.Logf("type_text answer:\n%s", res)
	if !strings.Contains(res, "the screen changed") || !strings.Contains(res, "appeared: ") || !strings.Contains(res, "Mac mini Limited Edition Silver") {
		t.Fatalf("type_text with submit: the results are not in the answer:\n%s", res)
	}
	listing := afterListing(res)
	if !strings.Contains(listing, "Mac mini") {
		t.Fatalf("no results in the new listing:\n%s", listing)
	}

	// The index of the answer's listing is valid at once.
	out = must(t, cs, "scroll", map[string]any{"direction": "down"})
	if !strings.Contains(out, "scrolled") {
		t.Errorf("scroll: %s", out)
	}
	item := index(t, afterListing(out), `id=search_item`)
	out = must(t, cs, "long_press", map[string]any{"element": item})
	// The search result does not handle a long press: it clicks on
	// release, so the product page opens.
	if !strings.HasPrefix(out, fmt.Sprintf("long-pressed [%d] ", item)) || !strings.Contains(out, "Mac mini") ||
		!strings.Contains(out, "the screen changed") || !strings.Contains(afterListing(out), `"Buy now"`) {
		t.Errorf("long_press [%d]: %s", item, out)
	}
	out = must(t, cs, "press_key", map[string]any{"key": "home"})
	if !strings.Contains(out, "the screen changed") || !strings.Contains(out, "launcher") {
		t.Errorf("press_key home: %s", out)
	}
	// wait waits on the injected clock: the fake time moves by the 2 s.
	before := h.clock.Now()
	out = must(t, cs, "wait", map[string]any{"seconds": 2})
	if moved := h.clock.Now().Sub(before); !strings.Contains(out, "waited") || moved < 2*time.Second {
		t.Errorf("wait 2 s moved the injected clock by %s: %s", moved, out)
	}
	if _, isErr := call(t, cs, "scroll", map[string]any{"direction": "sideways"}); !isErr {
		t.Errorf("scroll sideways was accepted")
	}
}

// observe with screenshot: true adds a PNG within the clients' limits;
// without it, and in every action's answer, there is no image.
func TestObserveScreenshotOnlyWhenAsked(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "shot", nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "observe", Arguments: map[string]any{"screenshot": true}})
	if err != nil || res.IsError {
		t.Fatalf("observe: %v %s", err, text(res))
	}
	var img *mcp.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			img = ic
		}
	}
	if img == nil {
		t.Fatalf("observe screenshot:true returned no image: %s", text(res))
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(img.Data))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %dx%d, %d bytes", cfg.Width, cfg.Height, len(img.Data))
	if max(cfg.Width, cfg.Height) > mcpserver.MaxImageEdge || len(img.Data) > mcpserver.MaxImageBytes || img.MIMEType != "image/jpeg" {
		t.Errorf("screenshot %dx%d, %d bytes, %s: beyond the limits", cfg.Width, cfg.Height, len(img.Data), img.MIMEType)
	}
	for _, c := range []struct {
		name string
		args any
	}{{"observe", nil}, {"press_key", map[string]any{"key": "home"}}} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.name, Arguments: c.args})
		if err != nil {
			t.Fatal(err)
		}
		for _, ct := range res.Content {
			if _, ok := ct.(*mcp.ImageContent); ok {
				t.Errorf("%s sent an image nobody asked for", c.name)
			}
		}
	}
}

// An action that names no element starts from the latest observation (the
// previous action's answer) without reading the screen first, and the home
// key on the home screen is done at once, not tried again.
func TestDirectActionsReadNoMoreThanTheyNeed(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "reads", nil)
	must(t, cs, "observe", nil)
	phone, err := h.devs.phone("sim")
	if err != nil {
		t.Fatal(err)
	}
	out := must(t, cs, "press_key", map[string]any{"key": "home"})
	if !strings.Contains(out, "launcher") {
		t.Fatalf("press_key home: %s", out)
	}
	before := phone.Dumps()
	out = must(t, cs, "press_key", map[string]any{"key": "home"})
	if !strings.Contains(out, "· done") || strings.Contains(out, "attempt") {
		t.Errorf("press_key home on the home screen is not done at once: %s", out)
	}
	reads := phone.Dumps() - before
	// The settle after the key reads the screen once: the effect was
	// there before the press, so there is no change to wait for with a
	// second read (a dump is 0.9–3.2 s on a phone). Nothing reads it
	// before, and no attempt is repeated.
	if reads > 1 {
		t.Errorf("press_key home on the home screen read the screen %d times, want 1", reads)
	}
	t.Logf("press_key home on home: %d reads: %s", reads, out)
}
