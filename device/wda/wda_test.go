package wda_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"phonepilot/device"
	"phonepilot/device/sim"
	"phonepilot/device/sim/simwda"
	"phonepilot/device/wda"
	"phonepilot/scene"
)

func openSim(t *testing.T, cfg sim.Config) (*wda.Device, *sim.Phone, *simwda.Server) {
	t.Helper()
	p, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := simwda.New(p)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	d, err := wda.Open(context.Background(), hs.URL, hs.Client())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d, p, srv
}

func state(t *testing.T, p *sim.Phone) map[string]any {
	t.Helper()
	b, err := p.State()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func find(t *testing.T, sc *scene.Scene, pred func(scene.Element) bool) scene.Element {
	t.Helper()
	for _, e := range sc.Elements {
		if pred(e) {
			return e
		}
	}
	var b strings.Builder
	for _, e := range sc.Elements {
		b.WriteString(e.Class + " " + e.Label() + " " + e.Bounds.String() + "\n")
	}
	t.Fatalf("no such element on the screen:\n%s", b.String())
	return scene.Element{}
}

func TestSceneIsInPixelsAndSwitchToggles(t *testing.T) {
	ctx := context.Background()
	d, p, _ := openSim(t, sim.Config{})
	if err := d.LaunchApp(ctx, "Settings"); err != nil {
		t.Fatal(err)
	}
	sc, err := d.Scene(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Width != 1080 || sc.Height != 2400 {
		t.Fatalf("scene size %dx%d, want the phone's pixels 1080x2400 (points × scale 3)", sc.Width, sc.Height)
	}
	if sc.Package != "com.apple.Preferences" {
		t.Fatalf("package %q, want Settings' bundle id", sc.Package)
	}
	net := find(t, sc, func(e scene.Element) bool { return strings.Contains(e.Label(), "Network") })
	x, y := net.Bounds.Center()
	if err := d.Tap(ctx, x, y); err != nil {
		t.Fatal(err)
	}
	sc, err = d.Scene(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sw := find(t, sc, func(e scene.Element) bool { return e.Checkable && e.Class == "XCUIElementTypeSwitch" })
	before := state(t, p)["settings"].(map[string]any)["wifi"]
	x, y = sw.Bounds.Center()
	if err := d.Tap(ctx, x, y); err != nil {
		t.Fatal(err)
	}
	after := state(t, p)["settings"].(map[string]any)["wifi"]
	if before == after {
		t.Fatalf("wifi %v after tapping the switch, want it toggled", after)
	}
}

func TestBackIsRefusedWithWhatToDo(t *testing.T) {
	d, _, _ := openSim(t, sim.Config{})
	err := d.Key(context.Background(), device.KeyBack)
	if !errors.Is(err, device.ErrUnsupported) || !strings.Contains(err.Error(), "back button") {
		t.Fatalf("back: %v, want ErrUnsupported saying to tap the back button", err)
	}
}

func TestTypeChineseIntoTaobaoSearch(t *testing.T) {
	ctx := context.Background()
	d, p, _ := openSim(t, sim.Config{Locale: "zh"})
	if err := d.LaunchApp(ctx, "淘宝"); err != nil {
		t.Fatal(err)
	}
	sc, err := d.Scene(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Taobao greets with an ad: close it.
	closeAd := find(t, sc, func(e scene.Element) bool { return e.ResourceID == "poplayer_close" })
	x, y := closeAd.Bounds.Center()
	if err := d.Tap(ctx, x, y); err != nil {
		t.Fatal(err)
	}
	if sc, err = d.Scene(ctx); err != nil {
		t.Fatal(err)
	}
	bar := find(t, sc, func(e scene.Element) bool { return e.Clickable && strings.Contains(e.ResourceID+e.Label(), "search") })
	x, y = bar.Bounds.Center()
	if err := d.Tap(ctx, x, y); err != nil {
		t.Fatal(err)
	}
	sc, err = d.Scene(ctx)
	if err != nil {
		t.Fatal(err)
	}
	field := find(t, sc, func(e scene.Element) bool { return e.Editable && e.Focused })
	if field.Class != "XCUIElementTypeSearchField" {
		t.Errorf("focused field is a %s, want XCUIElementTypeSearchField", field.Class)
	}
	if err := d.TypeText(ctx, "苹果 Mac mini 😀"); err != nil {
		t.Fatal(err)
	}
	if err := d.Key(ctx, device.KeyEnter); err != nil {
		t.Fatal(err)
	}
	tb := state(t, p)["taobao"].(map[string]any)
	if got, _ := json.Marshal(tb); !strings.Contains(string(got), "苹果 Mac mini 😀") {
		t.Fatalf("taobao state %s: the typed query is not there", got)
	}
}

func TestSessionIsRecreatedWhenWDAForgetsIt(t *testing.T) {
	ctx := context.Background()
	d, _, srv := openSim(t, sim.Config{})
	if _, err := d.Scene(ctx); err != nil {
		t.Fatal(err)
	}
	first := srv.Session()
	srv.EndSession()
	if _, err := d.Scene(ctx); err != nil {
		t.Fatalf("scene after WDA dropped the session: %v", err)
	}
	if srv.Session() == "" || srv.Session() == first {
		t.Fatalf("session %q after WDA dropped %q: want a new one", srv.Session(), first)
	}
}

func TestInProcessClientDrivesTheSimulator(t *testing.T) {
	ctx := context.Background()
	p, err := sim.New(sim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := wda.Open(ctx, simwda.InProcessURL, simwda.InProcessClient(simwda.New(p)))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.LaunchApp(ctx, "Clock"); err != nil {
		t.Fatal(err)
	}
	sc, err := d.Scene(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Package != "com.apple.mobiletimer" {
		t.Fatalf("in front: %q, want the Clock's bundle id", sc.Package)
	}
}

// The two forms of /source read into the same Scene.
func TestJSONAndXMLSourcesAgree(t *testing.T) {
	ctx := context.Background()
	p, err := sim.New(sim.Config{Locale: "zh"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(simwda.New(p))
	defer srv.Close()
	if err := p.Device().LaunchApp(ctx, "Settings"); err != nil {
		t.Fatal(err)
	}
	get := func(format string) []byte {
		resp, err := srv.Client().Get(srv.URL + "/source?format=" + format)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var env struct{ Value json.RawMessage }
		if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
			t.Fatal(err)
		}
		return env.Value
	}
	fromJSON, err := wda.ParseJSON(get("json"))
	if err != nil {
		t.Fatal(err)
	}
	var xmlText string
	if err := json.Unmarshal(get("xml"), &xmlText); err != nil {
		t.Fatal(err)
	}
	fromXML, err := wda.ParseXML([]byte(xmlText))
	if err != nil {
		t.Fatal(err)
	}
	a, b := wda.ToScene(fromJSON, 3, "x"), wda.ToScene(fromXML, 3, "x")
	if len(a.Elements) < 10 || len(a.Elements) != len(b.Elements) {
		t.Fatalf("JSON gives %d elements, XML %d", len(a.Elements), len(b.Elements))
	}
	for i := range a.Elements {
		if a.Elements[i] != b.Elements[i] {
			t.Fatalf("element %d differs:\nJSON %+v\nXML  %+v", i, a.Elements[i], b.Elements[i])
		}
	}
}

func TestTooDeepATreeIsRefused(t *testing.T) {
	deep := strings.Repeat(`{"type":"Other","children":[`, 1000) + `{"type":"Button"}` + strings.Repeat(`]}`, 1000)
	if _, err := wda.ParseJSON([]byte(deep)); !errors.Is(err, wda.ErrTreeTooBig) {
		t.Fatalf("a 1000-deep tree: %v, want ErrTreeTooBig", err)
	}
	deepXML := strings.Repeat(`<XCUIElementTypeOther>`, 1000) + strings.Repeat(`</XCUIElementTypeOther>`, 1000)
	if _, err := wda.ParseXML([]byte(deepXML)); !errors.Is(err, wda.ErrTreeTooBig) {
		t.Fatalf("a 1000-deep XML tree: %v, want ErrTreeTooBig", err)
	}
}
