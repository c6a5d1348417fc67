package sim

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"phonepilot/scene"
)

// drive wraps a Device with test helpers that act like a careful user:
// find the element, tap its centre.
type drive struct {
	t *testing.T
	d *Device
}

func newDrive(t *testing.T, cfg Config) *drive {
	return &drive{t: t, d: newTestPhone(t, cfg).Device()}
}

func (v *drive) scene() *scene.Scene {
	v.t.Helper()
	sc, err := v.d.Scene(context.Background())
	if err != nil {
		v.t.Fatalf("Scene: %v", err)
	}
	return sc
}

func findID(sc *scene.Scene, id string) *scene.Element {
	for i := range sc.Elements {
		if sc.Elements[i].ResourceID == id {
			return &sc.Elements[i]
		}
	}
	return nil
}

func findLabel(sc *scene.Scene, label string) *scene.Element {
	for i := range sc.Elements {
		if sc.Elements[i].Label() == label {
			return &sc.Elements[i]
		}
	}
	return nil
}

func (v *drive) tapElem(e *scene.Element, what string) {
	v.t.Helper()
	if e == nil {
		v.t.Fatalf("no %s on screen: %s", what, v.labels())
	}
	x, y := e.Bounds.Center()
	if err := v.d.Tap(context.Background(), x, y); err != nil {
		v.t.Fatalf("tap %s: %v", what, err)
	}
}

func (v *drive) tapID(id string)       { v.t.Helper(); v.tapElem(findID(v.scene(), id), id) }
func (v *drive) tapLabel(label string) { v.t.Helper(); v.tapElem(findLabel(v.scene(), label), label) }

func (v *drive) has(label string) bool { return findLabel(v.scene(), label) != nil }

func (v *drive) labels() string {
	sc, err := v.d.Scene(context.Background())
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, e := range sc.Elements {
		if l := e.Label(); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, " | ")
}

func (v *drive) launch(app string) {
	v.t.Helper()
	if err := v.d.LaunchApp(context.Background(), app); err != nil {
		v.t.Fatal(err)
	}
}

func (v *drive) typeText(s string) {
	v.t.Helper()
	if err := v.d.TypeText(context.Background(), s); err != nil {
		v.t.Fatalf("TypeText(%q): %v", s, err)
	}
}

func (v *drive) state() map[string]any {
	v.t.Helper()
	return stateOf(v.t, v.d.p)
}

// sh runs a command line on the phone without a tty (shell,v2).
func sh(t testing.TB, p *Phone, line string) (stdout, stderr string, rc int) {
	t.Helper()
	var o, e bytes.Buffer
	rc = p.Exec(context.Background(), line, false, &o, &e)
	return o.String(), e.String(), rc
}

// searchTaobao takes the Taobao app from launch to results for q.
func (v *drive) searchTaobao(q string) {
	v.t.Helper()
	v.launch("Taobao")
	v.tapID("com.taobao.taobao:id/poplayer_close")
	v.tapID("com.taobao.taobao:id/home_searchbar")
	v.typeText(q)
	v.tapID("com.taobao.taobao:id/search_button")
}
