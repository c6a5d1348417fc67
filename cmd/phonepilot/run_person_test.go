package main

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"testing"

	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/runtime"
	"phonepilot/safety"
	"phonepilot/scene"
	"phonepilot/storage"
	"phonepilot/tools"
)

// recordingDecider records the decisions a person makes.
type recordingDecider struct{ calls []string }

func (d *recordingDecider) Approve(ctx context.Context, id, by, note string) (storage.Task, error) {
	d.calls = append(d.calls, "approve "+id+" "+by+" "+note)
	return storage.Task{}, nil
}
func (d *recordingDecider) Deny(ctx context.Context, id, by, note string) (storage.Task, error) {
	d.calls = append(d.calls, "deny "+id+" "+by+" "+note)
	return storage.Task{}, nil
}
func (d *recordingDecider) Answer(ctx context.Context, id, by, text string) (storage.Task, error) {
	d.calls = append(d.calls, "answer "+id+" "+by+" "+text)
	return storage.Task{}, nil
}
func (d *recordingDecider) Cancel(ctx context.Context, id string) (storage.Task, error) {
	d.calls = append(d.calls, "cancel "+id)
	return storage.Task{}, nil
}

var payPending = storage.Pending{Kind: lifecycle.PendingApproval, Step: 5,
	Call:     tools.NewCall(tools.Tap, map[string]int{"element": 12}),
	Element:  &storage.PendingElement{Index: 12, Class: "Button", Label: "Pay", ID: "com.taobao.taobao:id/pay", Bounds: scene.Bounds{Left: 40, Top: 2100, Right: 1040, Bottom: 2250}},
	Category: "payment", Reason: `"Pay" on [12] Button, in com.taobao.taobao`}

// On a terminal the person sees the action (element, label, category,
// reason) and only "y"/"yes" approves; without one every approval is
// refused with a note that says what to do.
func TestPersonDecides(t *testing.T) {
	question := storage.Pending{Kind: lifecycle.PendingQuestion, Step: 2, Question: "What is the verification code?"}
	for _, tc := range []struct {
		name     string
		terminal bool
		input    string
		pending  storage.Pending
		want     string
		shows    []string
	}{
		{"yes", true, "y\n", payPending, "approve t1 cli approved at the terminal",
			[]string{"[12] Button", `"Pay"`, "com.taobao.taobao:id/pay", "category: payment", `reason:   "Pay" on [12] Button, in com.taobao.taobao`, "Approve? [y/N]"}},
		{"YES", true, " YES \n", payPending, "approve t1 cli approved at the terminal", nil},
		{"no", true, "n\n", payPending, "deny t1 cli denied at the terminal", []string{"Approve? [y/N]"}},
		{"enter", true, "\n", payPending, "deny t1 cli denied at the terminal", nil},
		{"eof", true, "", payPending, "deny t1 cli denied at the terminal", nil},
		{"other", true, "sure\n", payPending, "deny t1 cli denied at the terminal", nil},
		// Nobody is asked: nothing is printed here (the step's reason says
		// it, once), and the refusal is recorded as nobody's.
		{"no terminal", false, "y\n", payPending, "deny t1 nobody no terminal to ask; rerun with --allow payment or from a terminal", nil},
		{"answer", true, "493817\n", question, "answer t1 cli 493817", []string{"What is the verification code?", "Answer:"}},
		{"answer eof", true, "", question, "cancel t1", []string{"no answer"}},
		{"question, no terminal", false, "", question, "cancel t1", []string{"no terminal to answer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			p := &person{out: &out}
			if tc.terminal {
				p.in = bufio.NewReader(strings.NewReader(tc.input))
			}
			d := &recordingDecider{}
			p.decide(t.Context(), d, "t1", tc.pending)
			if len(d.calls) != 1 || d.calls[0] != tc.want {
				t.Errorf("decisions %q, want %q", d.calls, tc.want)
			}
			for _, s := range tc.shows {
				if !strings.Contains(out.String(), s) {
					t.Errorf("the person was not shown %q:\n%s", s, out.String())
				}
			}
		})
	}
}

func TestParseAllow(t *testing.T) {
	got, err := parseAllow([]string{"payment, Send", "delete"})
	if err != nil || len(got) != 3 || got[0] != safety.Payment || got[1] != safety.Send || got[2] != safety.Delete {
		t.Errorf("parseAllow = %v, %v", got, err)
	}
	if _, err := parseAllow([]string{"payment,paymnt"}); err == nil || !strings.Contains(err.Error(), `"paymnt"`) || !strings.Contains(err.Error(), "payment, delete, send") {
		t.Errorf("a misspelt category: %v", err)
	}
}

// --allow lets exactly the named categories through, over the file's rules
// and its per-app ones; the others keep theirs.
func TestAllowCategories(t *testing.T) {
	base := safety.Policy{Rules: safety.Rules{Payment: safety.Deny, Send: safety.Deny},
		Apps: map[string]safety.Rules{"com.taobao.taobao": {Payment: safety.Confirm}}}
	for _, c := range safety.Categories() {
		p := allowCategories(base, []safety.Category{c})
		for _, pkg := range []string{"", "com.taobao.taobao"} {
			if v := p.Verdict(pkg, c); v != safety.Allow {
				t.Errorf("--allow %s: in %q the verdict is %s", c, pkg, v)
			}
		}
		if c != safety.Send && p.Verdict("", safety.Send) != safety.Deny {
			t.Errorf("--allow %s changed send", c)
		}
	}
	if base.Apps["com.taobao.taobao"].Payment != safety.Confirm {
		t.Error("allowCategories changed the policy it was given")
	}
}

// Without a terminal the refusal is said once: under its step; the task's
// last line points at it instead of repeating it (issue 23: it was
// printed three times, as "a person (cli) denied").
func TestNoTerminalRefusalSaidOnce(t *testing.T) {
	why := "not approved: " + noTerminal("payment") + ` (tap {"element":17} (payment: …))`
	res := runtime.Result{Status: lifecycle.Failed, Reason: `step 6 (tap "Buy now") failed: ` + why,
		Steps: []plan.StepRecord{{Number: 6, Status: lifecycle.StepFailed, Reason: why}}}
	if got := withoutRepeat(res); got != `step 6 (tap "Buy now") failed: see above` {
		t.Errorf("last line %q", got)
	}
	if strings.Contains(why, "person") || !strings.Contains(why, "--allow payment") {
		t.Errorf("reason %q", why)
	}
}
