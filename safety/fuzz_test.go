package safety_test

import (
	"testing"
	"unicode/utf8"

	"phonepilot/safety"
	"phonepilot/tools"
)

// FuzzCheck: any label, in any app, typed or tapped, gives a decision
// without panicking, and a gated one always names its category and why.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"Pay", "ＢＵＹ　ＮＯＷ", "ﾁｬｰｼﾞﾞﾟ", "ﾟ", "Don’t allow", "'", "'''", "支付宝付款", "İstanbul", "\u0e2a\u0e48\u0e07", "", "a\x00b", "\xff"} {
		f.Add(s, "com.eg.android.AlipayGphone")
		f.Add(s, "com.google.android.permissioncontroller")
	}
	f.Fuzz(func(t *testing.T, label, pkg string) {
		sc := screen(pkg, button(label), n{class: "android.widget.EditText", text: label, editable: true, focused: true, password: len(label)%2 == 0, b: box(3)})
		var g *safety.Gate
		for _, call := range []tools.Call{
			tapOn(&sc.Elements[1]),
			tools.NewCall(tools.TypeText, map[string]any{"text": label, "submit": true}),
			tools.NewCall(tools.LaunchApp, map[string]string{"app": label}),
			tools.NewCall(tools.PressKey, map[string]string{"key": "enter"}),
		} {
			d := g.Check(safety.Input{Scene: sc, Call: call, Element: nil})
			if d.Verdict != safety.Allow && (d.Category == "" || d.Reason == "" || !utf8.ValidString(d.Reason)) {
				t.Fatalf("%s on %q: %+v", call.Name, label, d)
			}
		}
	})
}
