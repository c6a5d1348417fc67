package api

import (
	"regexp"
	"strings"
	"testing"

	"phonepilot/lifecycle"
)

// The page spells no word of a task's life by hand: every status, cause,
// event type, step status and pending kind it names as a string literal is
// named through ev() or kind(), which check it against GET /v1/lifecycle at
// boot; the stylesheet colours tones, never a status.
func TestPageSpellsNoLifecycleWord(t *testing.T) {
	js, err := webFiles.ReadFile("web/app.js")
	if err != nil {
		t.Fatal(err)
	}
	css, err := webFiles.ReadFile("web/style.css")
	if err != nil {
		t.Fatal(err)
	}
	html, err := webFiles.ReadFile("web/index.html")
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	add := func(ws ...string) { words = append(words, ws...) }
	for _, s := range lifecycle.Statuses {
		add(string(s))
	}
	for _, c := range lifecycle.Causes {
		add(string(c))
	}
	for _, e := range lifecycle.EventTypes {
		add(string(e))
	}
	for _, s := range lifecycle.StepStatuses {
		add(string(s))
	}
	for _, k := range lifecycle.PendingKinds {
		add(string(k))
	}
	checked := 0
	for _, w := range words {
		lit := regexp.MustCompile("(\\w*\\(?)[\"'`]" + regexp.QuoteMeta(w) + "[\"'`]")
		for _, m := range lit.FindAllSubmatch(js, -1) {
			if f := string(m[1]); f != "ev(" && f != "kind(" {
				t.Errorf("app.js spells %q by hand (%s); take it from the vocabulary through ev() or kind()", w, m[0])
			} else {
				checked++
			}
		}
		if regexp.MustCompile(`[.=]` + regexp.QuoteMeta(w) + `\b`).Match(css) {
			t.Errorf("style.css names the word %q; colour by tone", w)
		}
		if regexp.MustCompile(`(class|data-[\w-]+)="([^"]*\s)?` + regexp.QuoteMeta(w) + `(\s[^"]*)?"`).Match(html) {
			t.Errorf("index.html names the word %q", w)
		}
	}
	// The events and kinds of a pending decision are among those checked.
	for _, w := range []lifecycle.EventType{lifecycle.EventApprovalRequested, lifecycle.EventApprovalDecided, lifecycle.EventQuestionAsked, lifecycle.EventQuestionAnswered} {
		if !strings.Contains(string(js), `ev("`+string(w)+`")`) {
			t.Errorf("app.js does not follow %s", w)
		}
	}
	if checked < 10 {
		t.Errorf("only %d words named through ev()/kind()", checked)
	}
}
