package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An index the latest observation does not list, an action before any
// observation, and an index whose element changed on the phone since the
// client read it: each is a tool error that says to observe again, and
// nothing touches the phone.
func TestStaleAndUnknownIndex(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "stale", nil)

	out, isErr := call(t, cs, "tap", map[string]any{"element": 3})
	if !isErr || !strings.Contains(out, "no observation yet") || !strings.Contains(out, "call observe") {
		t.Errorf("tap before observe: error=%v %s", isErr, out)
	}
	obs := must(t, cs, "observe", nil)
	out, isErr = call(t, cs, "tap", map[string]any{"element": 999})
	if !isErr || !strings.Contains(out, "no element 999 in your latest observation") || !strings.Contains(out, "observe again") {
		t.Errorf("tap 999: error=%v %s", isErr, out)
	}

	// Behind the client's back the phone opens Messages (a notification, a
	// person's hand): the launcher's icon index now names something else.
	taobao := index(t, afterListing(obs), `"Taobao"`)
	p, err := h.devs.phone("sim")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Device().LaunchApp(t.Context(), "Messages"); err != nil {
		t.Fatal(err)
	}
	out, isErr = call(t, cs, "tap", map[string]any{"element": taobao})
	// The app switch is what it says (the element branch is
	// TestStaleIndexInTheSameApp's).
	if !isErr || !strings.Contains(out, "stale index: the app in front changed from com.google.android.apps.nexuslauncher to com.google.android.apps.messaging") ||
		!strings.Contains(out, "Observe again") || !strings.Contains(out, "nothing was done") {
		t.Fatalf("tap on a stale index: error=%v %s", isErr, out)
	}
	sc, err := p.Device().Scene(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sc.Package, "messag") {
		t.Errorf("after the refused stale tap the phone shows %s; want Messages untouched", sc.Package)
	}
	// The error carried the screen now: its indices are the session's.
	now := afterListing(out)
	if !strings.Contains(now, "messag") {
		t.Errorf("the stale error does not show the screen now:\n%s", out)
	}
}

// The element an index names is relabelled in the same app behind the
// client's back (a person types into the field): the app in front is the
// same, so only the element comparison can tell; the tap is refused as
// stale, naming what the element was and is, and the phone is untouched.
func TestStaleIndexInTheSameApp(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "stale-same-app", nil)
	must(t, cs, "observe", nil)
	out := must(t, cs, "launch_app", map[string]any{"app": "Taobao"})
	if strings.Contains(out, "poplayer_close") {
		out = must(t, cs, "tap", map[string]any{"element": index(t, afterListing(out), `id=poplayer_close`)})
	}
	out = must(t, cs, "tap", map[string]any{"element": index(t, afterListing(out), `id=home_searchbar`)})
	field := index(t, afterListing(out), `EditText`)
	p, err := h.devs.phone("sim")
	if err != nil {
		t.Fatal(err)
	}
	before, err := p.Device().Scene(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Device().TypeText(t.Context(), "ipad"); err != nil {
		t.Fatal(err)
	}
	mid, err := p.Device().Scene(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if mid.Package != before.Package || !strings.Contains(mid.Listing(), "ipad") {
		t.Fatalf("the setup did not relabel the field in the same app: %s → %s\n%s", before.Package, mid.Package, mid.Listing())
	}
	out, isErr := call(t, cs, "type_text", map[string]any{"element": field, "text": "Mac mini", "submit": true})
	t.Logf("type_text on the relabelled field: %s", out)
	if !isErr || !strings.Contains(out, "stale index") || !strings.Contains(out, fmt.Sprintf("element [%d] was", field)) ||
		!strings.Contains(out, "ipad") || strings.Contains(out, "app in front changed") {
		t.Fatalf("type_text on a field relabelled in the same app: error=%v %s", isErr, out)
	}
	after, err := p.Device().Scene(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if after.Listing() != mid.Listing() {
		t.Errorf("the refused stale type_text touched the phone:\n%s\nwas:\n%s", after.Listing(), mid.Listing())
	}
	// The error's listing is the session's now: the same index acts.
	if out := must(t, cs, "type_text", map[string]any{"element": field, "text": " pro"}); !strings.Contains(out, "typed") {
		t.Errorf("type_text on the index of the stale error's listing: %s", out)
	}
}

func TestUnknownDevice(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "unknown", nil)
	out, isErr := call(t, cs, "observe", map[string]any{"device": "nokia-3310"})
	if !isErr || !strings.Contains(out, "unknown device") || !strings.Contains(out, "list_devices") {
		t.Errorf("observe nokia-3310: error=%v %s", isErr, out)
	}
	out, isErr = call(t, cs, "run_task", map[string]any{"goal": "open Settings", "device": "nokia-3310"})
	if !isErr || !strings.Contains(out, "unknown device") {
		t.Errorf("run_task on nokia-3310: error=%v %s", isErr, out)
	}
	out, isErr = call(t, cs, "observe", map[string]any{"device": 7})
	if !isErr || !strings.Contains(out, "bad arguments") {
		t.Errorf("observe device 7: error=%v %s", isErr, out)
	}
}

// A device is leased to the session that uses it: another session gets
// "busy, held by …"; the lease ends with its session, or after the idle
// time on the injected clock.
func TestBusyDeviceAndLeaseEnd(t *testing.T) {
	h := newHarness(t)
	a := h.connect(t, "client-a", nil)
	b := h.connect(t, "client-b", nil)
	must(t, a, "observe", nil)
	for _, c := range []struct {
		tool string
		args any
	}{{"observe", nil}, {"press_key", map[string]any{"key": "home"}}, {"run_task", map[string]any{"goal": "open Settings"}}} {
		out, isErr := call(t, b, c.tool, c.args)
		if !isErr || !strings.Contains(out, "busy, held by session-1 (client-a 1.0)") {
			t.Errorf("%s by b while a holds sim: error=%v %s", c.tool, isErr, out)
		}
	}
	if out := must(t, b, "list_devices", nil); !strings.Contains(out, "busy, held by session-1 (client-a 1.0)") {
		t.Errorf("list_devices for b: %s", out)
	}
	// Idle past the lease time: b takes it over; then a is the one refused.
	h.clock.Advance(6 * time.Minute)
	must(t, b, "observe", nil)
	if out, isErr := call(t, a, "observe", nil); !isErr || !strings.Contains(out, "busy, held by session-2 (client-b 1.0)") {
		t.Errorf("a after b took the idle lease: error=%v %s", isErr, out)
	}
	// b's session ends: its lease ends with it.
	b.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, isErr := call(t, a, "observe", nil)
		if !isErr {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lease did not end with its session: %s", out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// buyNow drives the sim to a product page and returns the index of its
// "Buy now" button, which the gate stops (payment).
func buyNow(t *testing.T, cs *mcp.ClientSession) int {
	t.Helper()
	res := toSearchResults(t, cs)
	out := must(t, cs, "tap", map[string]any{"element": index(t, afterListing(res), `id=search_item`)})
	return index(t, afterListing(out), `"Buy now"`)
}

func orders(t *testing.T, h *harness) int {
	t.Helper()
	p, err := h.devs.phone("sim")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := p.State()
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Taobao struct {
			Screen string            `json:"screen"`
			Orders []json.RawMessage `json:"orders"`
		} `json:"taobao"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	return len(st.Taobao.Orders)
}

func foreground(t *testing.T, h *harness) string {
	t.Helper()
	p, _ := h.devs.phone("sim")
	sc, err := p.Device().Scene(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return sc.Listing()
}

// A client that cannot ask its user: the gated tap is not performed, and
// the answer says a person must approve and how.
func TestGatedActionWithoutElicitation(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "no-elicitation", nil)
	buy := buyNow(t, cs)
	out, isErr := call(t, cs, "tap", map[string]any{"element": buy})
	t.Logf("gated tap: %s", out)
	if !isErr || !strings.Contains(out, "NOT performed") || !strings.Contains(out, "payment") ||
		!strings.Contains(out, "A person must approve") || !strings.Contains(out, "run_task") || !strings.Contains(out, "web page") ||
		strings.Contains(out, "/approve") || strings.Contains(out, "http") || strings.Contains(out, "phonepilot.toml") {
		t.Errorf("gated tap without elicitation: error=%v %s", isErr, out)
	}
	if l := foreground(t, h); !strings.Contains(l, `"Buy now"`) || strings.Contains(l, "Pay now") {
		t.Errorf("the phone left the product page although the tap was refused:\n%s", l)
	}
}

// A client that can ask: the user is asked through elicitation; yes runs
// the action (the cashier opens), no leaves the phone as it was.
func TestGatedActionWithElicitation(t *testing.T) {
	for _, c := range []struct {
		yes    bool
		answer *mcp.ElicitResult
	}{
		{true, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}},
		{false, &mcp.ElicitResult{Action: "decline"}},
		// A decline is a no whatever the form carries.
		{false, &mcp.ElicitResult{Action: "decline", Content: map[string]any{"approve": true}}},
		{false, &mcp.ElicitResult{Action: "cancel", Content: map[string]any{"approve": true}}},
		{false, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}},
	} {
		yes := c.yes
		h := newHarness(t)
		var asked []string
		cs := h.connect(t, "elicits", &mcp.ClientOptions{
			ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked = append(asked, req.Params.Message)
				return c.answer, nil
			},
		})
		buy := buyNow(t, cs)
		out, isErr := call(t, cs, "tap", map[string]any{"element": buy})
		if len(asked) != 1 || !strings.Contains(asked[0], "Buy now") || !strings.Contains(asked[0], "payment") {
			t.Fatalf("yes=%v: the user was asked %q; want once, naming the element and category", yes, asked)
		}
		l := foreground(t, h)
		switch {
		case yes && (isErr || !strings.Contains(out, "the screen changed") || !strings.Contains(l, "Pay now")):
			t.Errorf("approved: error=%v %s\nphone:\n%s", isErr, out, l)
		case !yes && (!isErr || !strings.Contains(out, "NOT performed") || strings.Contains(l, "Pay now")):
			t.Errorf("declined: error=%v %s\nphone:\n%s", isErr, out, l)
		}
		if n := orders(t, h); n != 0 {
			t.Errorf("yes=%v: %d orders; tapping Buy now must not pay", yes, n)
		}
	}
}
