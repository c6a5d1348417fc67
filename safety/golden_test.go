package safety_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"phonepilot/internal/golden"
	"phonepilot/perception"
	"phonepilot/safety"
	"phonepilot/scene"
	"phonepilot/tools"
)

// dumpDir holds the real uiautomator dumps (the same files as
// ../shared/fixtures/uidump).
var dumpDir = filepath.Join("..", "perception", "testdata", "uidump")

func loadDump(t testing.TB, name string) *scene.Scene {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dumpDir, name))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := perception.Parse(data, perception.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return sc
}

func dumps(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dumpDir, "*.xml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dumps in %s: %v", dumpDir, err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	return files
}

// flagged is what the gate says about every tap a person could make on
// the dump (every visible clickable or long-clickable element), plus
// typing with Enter into the focused field: the lines it does not allow,
// after a count.
func flagged(t testing.TB, g *safety.Gate, sc *scene.Scene) (lines []string, clickable int) {
	for _, e := range sc.Elements {
		if !(e.Clickable || e.LongClickable) || !sc.Visible(e) {
			continue
		}
		clickable++
		el := e
		d := g.Check(safety.Input{Scene: sc, Call: tools.NewCall(tools.Tap, map[string]int{"element": e.Index}), Element: &el})
		if d.Verdict == safety.Allow {
			continue
		}
		f := d.Findings[0]
		lines = append(lines, fmt.Sprintf("tap [%d] %s %q → %s %s (%s): %s",
			e.Index, scene.SimpleClass(e.Class), cut(e.Label()), d.Verdict, d.Category, f.Signal, d.Reason))
	}
	d := g.Check(safety.Input{Scene: sc, Call: tools.NewCall(tools.TypeText, map[string]any{"text": "hello", "submit": true})})
	if d.Verdict != safety.Allow {
		lines = append(lines, fmt.Sprintf("type_text (focused field, submit) → %s %s (%s): %s", d.Verdict, d.Category, d.Findings[0].Signal, d.Reason))
	}
	return lines, clickable
}

func cut(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

// TestGoldenRealDumps pins what the default gate flags on every real
// dump. Review the diff: a new line is a new alarm; it must be a real
// irreversible action or an explainable false alarm (docs/safety.md).
func TestGoldenRealDumps(t *testing.T) {
	g, err := safety.New(safety.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	total, flags := 0, 0
	for _, name := range dumps(t) {
		sc := loadDump(t, name)
		lines, n := flagged(t, g, sc)
		taps := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "tap ") {
				taps++
			}
		}
		total += n
		flags += taps
		fmt.Fprintf(&b, "== %s (%s): %d clickable, %d taps flagged\n", name, sc.Package, n, taps)
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	fmt.Fprintf(&b, "== total: %d clickable, %d taps flagged\n", total, flags)
	golden.Check(t, filepath.Join("testdata", "golden", "uidump_flags.txt"), []byte(b.String()))
}

// Benign actions on the real dumps: every icon of three launchers, every
// row of Settings › Security & privacy, the Play Store's and the dialer's
// search boxes, and typing a search query with Enter.
func TestBenignOnRealDumps(t *testing.T) {
	g, err := safety.New(safety.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pixel_launcher_home.xml", "vivo_launcher_home_zh.xml", "vivo_launcher_drawer_zh.xml",
		"settings_security_privacy.xml", "playstore_search_suggestions_zh.xml", "google_tasks_list.xml", "gmail_inbox.xml"} {
		sc := loadDump(t, name)
		lines, n := flagged(t, g, sc)
		if n == 0 || len(lines) > 0 {
			t.Errorf("%s: %d clickable, flagged:\n%s", name, n, strings.Join(lines, "\n"))
		}
	}
	for _, tc := range []struct{ dump, field string }{
		{"playstore_search_suggestions_zh.xml", ""}, // the focused search box
		{"google_dialer_home_empty.xml", "Search contacts"},
		{"chrome_google_groups_zh.xml", ""},
	} {
		sc := loadDump(t, tc.dump)
		var e *scene.Element
		if tc.field != "" {
			for i := range sc.Elements {
				if sc.Elements[i].Label() == tc.field {
					e = &sc.Elements[i]
				}
			}
			if e == nil {
				t.Fatalf("%s: no %q", tc.dump, tc.field)
			}
			if d := g.Check(safety.Input{Scene: sc, Call: tools.NewCall(tools.Tap, map[string]int{"element": e.Index}), Element: e}); d.Verdict != safety.Allow {
				t.Errorf("%s: tap the search box: %s %s", tc.dump, d.Verdict, d.Reason)
			}
		}
		args := map[string]any{"text": "calculator", "submit": true}
		if e != nil {
			args["element"] = e.Index
		}
		if d := g.Check(safety.Input{Scene: sc, Call: tools.NewCall(tools.TypeText, args), Element: e}); d.Verdict != safety.Allow {
			t.Errorf("%s: typing a search query: %s %s", tc.dump, d.Verdict, d.Reason)
		}
	}
}
