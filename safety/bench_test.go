package safety_test

import (
	"strings"
	"testing"

	"phonepilot/safety"
	"phonepilot/scene"
	"phonepilot/tools"
)

// largeDump is the 504-node dump: the gate runs before every action, so
// its cost on a big screen is what matters.
const largeDump = "jukandian_news_article_large.xml"

// BenchmarkCheckTap is one tap decision on the large dump, on its last
// clickable element (the share bar: it is flagged, so every signal runs).
func BenchmarkCheckTap(b *testing.B) {
	sc := loadDump(b, largeDump)
	g, err := safety.New(safety.Policy{})
	if err != nil {
		b.Fatal(err)
	}
	var target *scene.Element
	for i := range sc.Elements {
		if sc.Elements[i].Clickable {
			target = &sc.Elements[i]
		}
	}
	in := safety.Input{Scene: sc, Call: tools.NewCall(tools.Tap, map[string]int{"element": target.Index}), Element: target}
	b.ReportAllocs()
	for b.Loop() {
		_ = g.Check(in)
	}
}

// BenchmarkCheckAllowedTap is a tap the gate allows that is not a way
// out (back, close): it scans the whole screen for a payment sheet before
// saying so.
func BenchmarkCheckAllowedTap(b *testing.B) {
	sc := loadDump(b, largeDump)
	g, err := safety.New(safety.Policy{})
	if err != nil {
		b.Fatal(err)
	}
	var target *scene.Element
	for i := range sc.Elements {
		e := sc.Elements[i]
		if e.Clickable && sc.Visible(e) && e.Label() != "" && !strings.Contains(e.ResourceID, "back") && g.Check(safety.Input{Scene: sc, Call: tools.NewCall(tools.Tap, map[string]int{"element": i}), Element: &e}).Verdict == safety.Allow {
			target = &sc.Elements[i]
			break
		}
	}
	if target == nil {
		b.Fatal("no allowed tap on the large dump")
	}
	b.Logf("tapping [%d] %q", target.Index, target.Label())
	in := safety.Input{Scene: sc, Call: tools.NewCall(tools.Tap, map[string]int{"element": target.Index}), Element: target}
	b.ReportAllocs()
	for b.Loop() {
		_ = g.Check(in)
	}
}

// BenchmarkCheckType is type_text with Enter into the focused field.
func BenchmarkCheckType(b *testing.B) {
	sc := loadDump(b, largeDump)
	var g *safety.Gate
	in := safety.Input{Scene: sc, Call: tools.NewCall(tools.TypeText, map[string]any{"text": "hello", "submit": true})}
	b.ReportAllocs()
	for b.Loop() {
		_ = g.Check(in)
	}
}
