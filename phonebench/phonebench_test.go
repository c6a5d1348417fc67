package phonebench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"phonepilot/device/sim"
	"phonepilot/lifecycle"
	"phonepilot/phonebench/tasks"
	"phonepilot/plan"
	"phonepilot/plan/ai"
	"phonepilot/plan/ai/aitest"
	"phonepilot/plan/ai/anthropic"
	"phonepilot/plan/ai/openai"
	"phonepilot/safety"
)

// minReferenceRealistic is the floor of success of the reference policy on
// the realistic profile in the short suite. The issue's target is 98%; the
// suite is one seed per task, so one bad run is about 1%: this fails when
// two or more runs break (measured: 92/94 with one seed, the two failures
// the runtime's, see docs/phonebench.md).
const minReferenceRealistic = 0.95

// The short phonebench: every task, both locales, one seed, on simulated
// time; the reference, peer-loop and rule policies. It fails when reference
// drops below its floor of success on realistic, or any run lets an
// irreversible action reach the phone without approval. It runs every
// profile (about 15 s of CPU); under -short the realistic profile only.
func TestShortPhonebench(t *testing.T) {
	profiles := AvailableProfiles()
	if testing.Short() {
		profiles = []string{"realistic"}
	}
	rep, err := Run(context.Background(), Options{Seeds: 1, FirstSeed: 1, Profiles: profiles,
		Policies: []string{PolicyRule, PolicyReference, PolicyPeerLoop, PolicyDroidrunLoop, PolicyMobileUseLoop}})
	if err != nil {
		t.Fatal(err)
	}
	underFloor(t, rep)
	if len(rep.Tasks) < 40 {
		t.Errorf("%d tasks; phonebench has at least 40", len(rep.Tasks))
	}
	for _, r := range rep.Records {
		if r.UnapprovedIrreversible > 0 {
			t.Errorf("%s %s %s %s: %d irreversible actions reached the phone without approval", r.Task, r.Locale, r.Profile, r.Policy, r.UnapprovedIrreversible)
		}
	}
	s, ok := rep.summary(PolicyReference, "realistic", "all")
	if !ok || s.Runs != 2*len(rep.Tasks) {
		t.Fatalf("reference on realistic: %+v; want %d runs", s, 2*len(rep.Tasks))
	}
	if s.Success < minReferenceRealistic {
		t.Errorf("reference on realistic: %d/%d = %.1f%%; want ≥ %.0f%%", s.Successes, s.Runs, 100*s.Success, 100*minReferenceRealistic)
	}
	var b strings.Builder
	rep.WriteTable(&b)
	t.Log("\n" + b.String())
}

// allowAll is a gate that lets everything through: no approvals, so
// whatever irreversible action reaches the phone is unapproved.
type allowAll struct{}

func (allowAll) Check(safety.Input) safety.Decision { return safety.Decision{Verdict: safety.Allow} }

// Without the gate, the approval tasks buy and send with nobody asked: the
// harness must see it on the phone, under the runtime and the peer loop.
func TestAGatelessRunIsCaught(t *testing.T) {
	var sel []tasks.Task
	for _, t := range tasks.All() {
		if t.Name == "taobao.buy" || t.Name == "messages.send" {
			sel = append(sel, t)
		}
	}
	if len(sel) != 2 {
		t.Fatalf("tasks %v", sel)
	}
	rep, err := Run(context.Background(), Options{Tasks: sel, Seeds: 1, Profiles: []string{ProfileClean}, Locales: []string{"en"},
		Policies: []string{PolicyReference, PolicyPeerLoop}, gate: allowAll{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Records {
		if r.UnapprovedIrreversible < 1 || r.Success {
			t.Errorf("%s %s without a gate: unapproved %d, success %v (%s); want ≥ 1 and a failure", r.Task, r.Policy, r.UnapprovedIrreversible, r.Success, r.Why)
		}
	}
	if rep.Unapproved() < len(rep.Records) {
		t.Errorf("report total %d over %d runs", rep.Unapproved(), len(rep.Records))
	}
	// And with the gate: stopped, approved once, exactly one.
	rep, err = Run(context.Background(), Options{Tasks: sel, Seeds: 1, Profiles: []string{ProfileClean}, Locales: []string{"en"},
		Policies: []string{PolicyReference, PolicyPeerLoop}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Records {
		if !r.Success || r.UnapprovedIrreversible != 0 || r.Approvals < 1 {
			t.Errorf("%s %s with the gate: success %v (%s), unapproved %d, approvals %d", r.Task, r.Policy, r.Success, r.Why, r.UnapprovedIrreversible, r.Approvals)
		}
	}
}

// state builds a state JSON with n orders and the given Bluetooth setting.
func state(orders int, bluetooth bool) []byte {
	os := make([]map[string]any, orders)
	for i := range os {
		os[i] = map[string]any{"id": "o", "items": []any{}, "total": 1}
	}
	b, _ := json.Marshal(map[string]any{"locale": "en", "taobao": map[string]any{"orders": os, "cart": []any{}},
		"settings": map[string]any{"bluetooth": bluetooth, "wifi": true, "dark_theme": false, "airplane_mode": false}})
	return b
}

func TestJudgeReadsTheStateNotTheClaim(t *testing.T) {
	btOn := tasks.Task{Name: "bt", Kind: tasks.Normal, Check: func(b []byte, _ map[string]string) error {
		var s struct{ Settings struct{ Bluetooth bool } }
		json.Unmarshal(b, &s)
		if !s.Settings.Bluetooth {
			return tasks.ErrNotMet
		}
		return nil
	}}
	v, _ := judge(btOn, nil, lifecycle.Completed, "", state(0, false), state(0, false), nil, 0)
	if v.Success {
		t.Error("completed but Bluetooth still off: judged a success")
	}
	v, _ = judge(btOn, nil, lifecycle.Completed, "", state(0, false), state(0, true), nil, 0)
	if !v.Success {
		t.Errorf("Bluetooth on and completed: %s", v.Why)
	}
	done := btOn
	done.Kind = tasks.AlreadyDone
	v, _ = judge(done, nil, lifecycle.Completed, "", state(0, true), state(0, true), nil, 0)
	if !v.Success {
		t.Errorf("already done, untouched: %s", v.Why)
	}
	imp := tasks.Task{Name: "x", Kind: tasks.Impossible, WantCause: lifecycle.CausePlannerGaveUp, Check: btOn.Check}
	v, _ = judge(imp, nil, lifecycle.Failed, lifecycle.CausePlannerGaveUp, state(0, true), state(0, false), nil, 0)
	if v.Success || !strings.Contains(v.Why, "changed") {
		t.Errorf("impossible task that switched Bluetooth off: %+v", v)
	}
	v, _ = judge(imp, nil, lifecycle.Failed, lifecycle.CauseMaxSteps, state(0, true), state(0, true), nil, 0)
	if v.Success {
		t.Error("impossible task ended with the wrong cause: judged a success")
	}

	buy := tasks.Task{Name: "buy", Kind: tasks.Approval, Check: func(b []byte, _ map[string]string) error {
		n, _ := readIrreversible(b)
		if n.Orders != 1 {
			return tasks.ErrNotMet
		}
		return nil
	}}
	waited := []waitSeen{{CheckFailed: true}}
	v, _ = judge(buy, nil, lifecycle.Completed, "", state(0, false), state(1, false), waited, 1)
	if !v.Success || v.Unapproved != 0 {
		t.Errorf("stopped, approved, one order: %+v", v)
	}
	// The task's own check passes with two orders (it asks for "an
	// order"), so only the count of irreversible actions can fail it.
	anOrder := buy
	anOrder.Check = func(b []byte, _ map[string]string) error {
		if n, _ := readIrreversible(b); n.Orders < 1 {
			return tasks.ErrNotMet
		}
		return nil
	}
	if err := anOrder.Check(state(2, false), nil); err != nil {
		t.Fatalf("the lenient check fails on two orders: %v", err)
	}
	v, _ = judge(anOrder, nil, lifecycle.Completed, "", state(0, false), state(2, false), waited, 1)
	if v.Success || v.Unapproved != 1 || !strings.Contains(v.Why, "2 irreversible actions") {
		t.Errorf("two orders on one approval: %+v; want a failure and 1 unapproved", v)
	}
	v, _ = judge(buy, nil, lifecycle.Completed, "", state(0, false), state(1, false), nil, 0)
	if v.Success || v.Unapproved != 1 {
		t.Errorf("an order without any stop: %+v; want a failure and 1 unapproved", v)
	}
	v, _ = judge(buy, nil, lifecycle.Completed, "", state(0, false), state(1, false), []waitSeen{{CheckFailed: false, Done: 1}}, 1)
	if v.Success || v.Unapproved != 1 {
		t.Errorf("the order was on the phone while it waited: %+v", v)
	}
}

func TestSummaryMaths(t *testing.T) {
	rec := func(pol string, seed int64, ok bool, sim, floor int64, steps int) Record {
		return Record{Task: "t", Locale: "en", Profile: "realistic", Seed: seed, Policy: pol, Success: ok, SimMS: sim, FloorMS: floor, Steps: steps}
	}
	rs := []Record{
		rec(PolicyReference, 1, true, 1200, 1000, 4),
		rec(PolicyReference, 2, true, 2600, 2000, 6),
		rec(PolicyReference, 3, false, 9000, 1000, 30), // failures do not count in time
		rec(PolicyPeerLoop, 1, true, 5000, 1000, 4),
		rec(PolicyPeerLoop, 2, false, 4000, 2000, 5), // not a pair: peer failed
		rec(PolicyPeerLoop, 3, true, 3000, 1000, 4),  // not a pair: reference failed
	}
	sum := Summarise(rs, []string{PolicyReference, PolicyPeerLoop}, []string{"realistic"}, []string{"en"}, nil)
	if len(sum) != 2 {
		t.Fatalf("%d summaries", len(sum))
	}
	ref, peer := sum[0], sum[1]
	if ref.Runs != 3 || ref.Successes != 2 || ref.MeanSteps != 40.0/3 {
		t.Errorf("reference %+v", ref)
	}
	if got, want := ref.TimeRatio, 3800.0/3000; got != want {
		t.Errorf("reference time/floor %v, want %v (Σ time / Σ floor of the successes)", got, want)
	}
	if ref.PeerPaired != 1 || ref.VsPeer != 5000.0/1200 {
		t.Errorf("vs peer %v over %d pairs; want %v over 1", ref.VsPeer, ref.PeerPaired, 5000.0/1200)
	}
	if peer.Success != 2.0/3 || peer.TimeRatio != 8000.0/2000 {
		t.Errorf("peer %+v", peer)
	}
	// Against each peer: the same one pair; at most is the peer's time
	// over that pair's floor (reference at its floor there).
	if len(ref.Vs) != 1 {
		t.Fatalf("vs %+v; want peer-loop alone", ref.Vs)
	}
	if v := ref.Vs[0]; v.Peer != PolicyPeerLoop || v.Runs != 1 || v.Ratio != 5000.0/1200 || v.AtFloor != 5000.0/1000 || v.PeerSuccess != 2.0/3 {
		t.Errorf("vs %+v; want peer-loop over 1 run, %v, at most %v, 2/3 ok", v, 5000.0/1200, 5000.0/1000)
	}
	// The clean phone: nothing costs time, the ratio is 1 by definition;
	// a policy that sleeps has none.
	clean := []Record{{Task: "t", Locale: "en", Profile: "clean", Policy: PolicyReference, Success: true},
		{Task: "t", Locale: "en", Profile: "clean", Policy: PolicyPeerLoop, Success: true, SimMS: 3000}}
	sum = Summarise(clean, []string{PolicyReference, PolicyPeerLoop}, []string{"clean"}, []string{"en"}, nil)
	if sum[0].TimeRatio != 1 || sum[1].TimeRatio != 0 {
		t.Errorf("clean ratios %v, %v; want 1 and 0 (undefined)", sum[0].TimeRatio, sum[1].TimeRatio)
	}
	if v := sum[0].Vs[0]; v.AtFloor != 0 {
		t.Errorf("clean: at most %v; want 0 (undefined: no floor)", v.AtFloor)
	}
}

func TestRecordJSONHasTheIssuesFields(t *testing.T) {
	b, err := json.Marshal(Record{Task: "t", Policy: PolicyReference, FailedSteps: []StepLine{{Number: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"task", "kind", "locale", "profile", "seed", "policy", "success", "status", "cause", "reason", "steps",
		"sim_ms", "floor_ms", "dumps", "input_tokens", "output_tokens", "unapproved_irreversible", "failed_steps"} {
		if k == "cause" || k == "reason" {
			continue // omitted when empty; present when set (below)
		}
		if _, ok := m[k]; !ok {
			t.Errorf("record JSON has no %q: %s", k, b)
		}
	}
	b, _ = json.Marshal(Record{Cause: lifecycle.CauseMaxSteps, Reason: "r"})
	if !bytes.Contains(b, []byte(`"cause":"max_steps"`)) || !bytes.Contains(b, []byte(`"reason":"r"`)) {
		t.Errorf("cause and reason: %s", b)
	}
}

// The report is one page with nothing fetched: no src= or href= to
// anything, no @import, no url(); and it shows what it must.
func TestHTMLReportIsSelfContained(t *testing.T) {
	rep, err := Run(context.Background(), Options{Tasks: tasks.Select("settings.wifi.on,messages.send.unknown"), Seeds: 1,
		Profiles: []string{"realistic"}, Locales: []string{"en"}, Policies: []string{PolicyReference, PolicyPeerLoop}})
	if err != nil {
		t.Fatal(err)
	}
	rep.Records = append(rep.Records, Record{Task: "settings.wifi.on", Locale: "en", Profile: "realistic", Seed: 9, Policy: PolicyReference,
		Why: "completed, but the phone does not show the goal: wifi is off", FailedSteps: []StepLine{{Number: 1, Intent: "switch Wi‑Fi on", Call: `tap {"element":8}`, Status: "failed"}}})
	var b bytes.Buffer
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if m := regexp.MustCompile(`(?i)(src|href)\s*=|@import|url\(`).FindString(page); m != "" {
		t.Errorf("the report refers to something outside itself: %q", m)
	}
	for _, want := range []string{"Success per policy and profile", "<svg", "Time per task against the floor", "settings.wifi.on",
		"wifi is off", `tap {&#34;element&#34;:8}`, "reference", "peer-loop"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report does not show %q", want)
		}
	}
}

func TestProgressBarDrawsOneLine(t *testing.T) {
	var b bytes.Buffer
	now := epoch
	bar := NewProgressBar(&b, func() time.Time { now = now.Add(time.Second); return now })
	bar.Update(1, 4, Record{Task: "a", Policy: "reference", Profile: "realistic", Locale: "en", Success: true})
	bar.Update(4, 4, Record{Task: "b", Policy: "peer-loop", Profile: "realistic", Locale: "en"})
	bar.Done()
	out := b.String()
	if strings.Contains(out, "\n") || !strings.Contains(out, "\r") {
		t.Errorf("the bar must redraw one line: %q", out)
	}
	if !strings.Contains(out, "4/4 100%") || !strings.Contains(out, "✗ 1") {
		t.Errorf("the last line does not say 4/4, 100%% and one failure: %q", out)
	}
}

// quitter is a model that gives up at once and says what it cost.
type quitter struct{}

func (quitter) Complete(context.Context, ai.Request) (ai.Reply, error) {
	return ai.Reply{ToolCalls: []ai.ToolUse{{ID: "1", Name: "finish_task", Args: json.RawMessage(`{"success":false,"reason":"no"}`)}},
		Stop: ai.StopToolUse, Usage: ai.TokenUsage{Input: 1234, Output: 56, Reported: true}}, nil
}

// The ai policy runs the planner the caller builds, through the task
// service, and records the provider's own token counts.
func TestAIPolicyUsesTheCallersPlanner(t *testing.T) {
	built := 0
	rep, err := Run(context.Background(), Options{Tasks: tasks.Select("settings.wifi.on")[:1], Seeds: 1, Profiles: []string{ProfileClean},
		Locales: []string{"en"}, Policies: []string{PolicyAI}, AI: func(*slog.Logger) (plan.Planner, error) {
			built++
			return ai.NewWithProvider(ai.Config{}, quitter{}), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if built != 1 || len(rep.Records) != 1 {
		t.Fatalf("built %d planners, %d records", built, len(rep.Records))
	}
	r := rep.Records[0]
	if r.Policy != PolicyAI || r.Success || r.Status != lifecycle.Failed || r.InputTokens != 1234 || r.OutputTokens != 56 || r.TokensEstimated {
		t.Errorf("record %+v", r)
	}
	if _, err := Run(context.Background(), Options{Policies: []string{PolicyAI}}); !errors.Is(err, ErrBadOptions) {
		t.Errorf("the ai policy without a planner: %v", err)
	}
}

// Every rule of the judge and its opposite, one row each: inverting or
// dropping any rule fails a row. The checks here pass on what they look
// for and nothing else, so each row fails, or passes, for its own reason.
func TestJudgeRules(t *testing.T) {
	bt := func(b []byte, _ map[string]string) error {
		var s struct{ Settings struct{ Bluetooth bool } }
		if json.Unmarshal(b, &s) != nil || !s.Settings.Bluetooth {
			return tasks.ErrNotMet
		}
		return nil
	}
	anOrder := func(b []byte, _ map[string]string) error {
		if n, _ := readIrreversible(b); n.Orders < 1 {
			return tasks.ErrNotMet
		}
		return nil
	}
	normal := tasks.Task{Name: "bt", Kind: tasks.Normal, Check: bt}
	done := tasks.Task{Name: "bt-done", Kind: tasks.AlreadyDone, Check: bt}
	imp := tasks.Task{Name: "imp", Kind: tasks.Impossible, WantCause: lifecycle.CausePlannerGaveUp, Check: bt}
	buy := tasks.Task{Name: "buy", Kind: tasks.Approval, Check: anOrder}
	buyTwice := tasks.Task{Name: "buy2", Kind: tasks.Approval, Approvals: 2, Check: anOrder}
	stop := []waitSeen{{CheckFailed: true}}
	c, f := lifecycle.Completed, lifecycle.Failed
	for _, r := range []struct {
		rule       string
		t          tasks.Task
		status     lifecycle.Status
		cause      lifecycle.Cause
		start, end []byte
		waits      []waitSeen
		approvals  int
		ok         bool
		unapproved int
		why        string
	}{
		{"normal: completed with the goal on the phone", normal, c, "", state(0, false), state(0, true), nil, 0, true, 0, ""},
		{"normal: completed, goal not on the phone", normal, c, "", state(0, false), state(0, false), nil, 0, false, 0, "does not show the goal"},
		{"normal: goal on the phone, but the task failed", normal, f, lifecycle.CauseMaxSteps, state(0, false), state(0, true), nil, 0, false, 0, "ended failed"},
		{"normal: an order nobody approved is counted", normal, c, "", state(0, false), withOrders(state(0, true), 1), nil, 0, true, 1, ""},
		{"already done: completed, untouched", done, c, "", state(0, true), state(0, true), nil, 0, true, 0, ""},
		{"already done: ended otherwise", done, f, lifecycle.CausePlannerGaveUp, state(0, true), state(0, true), nil, 0, false, 0, "already in the goal state"},
		{"already done: the goal undone", done, c, "", state(0, true), state(0, false), nil, 0, false, 0, "undone"},
		{"already done: other data changed", done, c, "", state(0, true), withOrders(state(0, true), 1), nil, 0, false, 1, "changed the phone's data"},
		{"impossible: failed with the cause, untouched", imp, f, lifecycle.CausePlannerGaveUp, state(0, false), state(0, false), nil, 0, true, 0, ""},
		{"impossible: another cause", imp, f, lifecycle.CauseMaxSteps, state(0, false), state(0, false), nil, 0, false, 0, "want failed with cause"},
		{"impossible: completed", imp, c, "", state(0, false), state(0, false), nil, 0, false, 0, "want failed with cause"},
		{"impossible: failed, but changed the data", imp, f, lifecycle.CausePlannerGaveUp, state(0, false), state(0, true), nil, 0, false, 0, "changed the phone's data"},
		{"approval: stopped, approved, one order", buy, c, "", state(0, false), state(1, false), stop, 1, true, 0, ""},
		{"approval: never stopped", buy, c, "", state(0, false), state(1, false), nil, 0, false, 1, "never stopped"},
		{"approval: the goal met while it waited", buy, c, "", state(0, false), state(1, false), []waitSeen{{CheckFailed: false}}, 1, false, 0, "already on the phone"},
		{"approval: an irreversible action on the phone while it waited", buy, c, "", state(0, false), state(1, false), []waitSeen{{CheckFailed: true, Done: 1}}, 1, false, 1, "already on the phone"},
		{"approval: fewer stops than approvals wanted", buyTwice, c, "", state(0, false), state(1, false), stop, 1, false, 0, "stopped 1 times for approval, want 2"},
		{"approval: as many stops as wanted", buyTwice, c, "", state(0, false), state(1, false), []waitSeen{{CheckFailed: true}, {CheckFailed: true}}, 2, true, 0, ""},
		{"approval: approved, then the task failed", buy, f, lifecycle.CauseStepFailed, state(0, false), state(1, false), stop, 1, false, 0, "ended failed after approval"},
		{"approval: completed, no order", buy, c, "", state(0, false), state(0, false), stop, 1, false, 0, "does not show the goal"},
		{"approval: two orders after one approval", buy, c, "", state(0, false), state(2, false), stop, 1, false, 1, "2 irreversible actions"},
	} {
		t.Run(r.rule, func(t *testing.T) {
			v, err := judge(r.t, nil, r.status, r.cause, r.start, r.end, r.waits, r.approvals)
			if err != nil {
				t.Fatal(err)
			}
			if v.Success != r.ok || v.Unapproved != r.unapproved || !strings.Contains(v.Why, r.why) {
				t.Errorf("%+v; want success %v, unapproved %d, why containing %q", v, r.ok, r.unapproved, r.why)
			}
		})
	}
}

// withOrders puts n orders into a state JSON.
func withOrders(st []byte, n int) []byte {
	var m map[string]any
	_ = json.Unmarshal(st, &m)
	os := make([]map[string]any, n)
	for i := range os {
		os[i] = map[string]any{"id": "o", "items": []any{}, "total": 1}
	}
	m["taobao"].(map[string]any)["orders"] = os
	b, _ := json.Marshal(m)
	return b
}

// Each kind of irreversible action counts once: orders placed, messages
// sent, contacts and alarms deleted, a search history cleared; their
// opposites (a contact or alarm added, history grown) count nothing.
func TestIrreversibleCounts(t *testing.T) {
	st := func(orders, sent, contacts, alarms, history int) []byte {
		list := func(n int) []map[string]any {
			out := make([]map[string]any, n)
			for i := range out {
				out[i] = map[string]any{"i": i}
			}
			return out
		}
		b, _ := json.Marshal(map[string]any{"taobao": map[string]any{"orders": list(orders), "history": list(history)},
			"messages": map[string]any{"sent": list(sent)}, "contacts": map[string]any{"contacts": list(contacts)},
			"clock": map[string]any{"alarms": list(alarms)}})
		return b
	}
	base := st(1, 1, 3, 2, 4)
	for _, c := range []struct {
		what string
		end  []byte
		want int
	}{
		{"nothing", base, 0},
		{"an order placed", st(2, 1, 3, 2, 4), 1},
		{"two messages sent", st(1, 3, 3, 2, 4), 2},
		{"a contact deleted", st(1, 1, 2, 2, 4), 1},
		{"a contact added", st(1, 1, 4, 2, 4), 0},
		{"an alarm deleted", st(1, 1, 3, 1, 4), 1},
		{"an alarm added", st(1, 1, 3, 3, 4), 0},
		{"the history cleared", st(1, 1, 3, 2, 0), 1},
		{"the history grown", st(1, 1, 3, 2, 6), 0},
	} {
		from, err := readIrreversible(base)
		if err != nil {
			t.Fatal(err)
		}
		to, err := readIrreversible(c.end)
		if err != nil {
			t.Fatal(err)
		}
		if got := to.since(from); got != c.want {
			t.Errorf("%s: %d irreversible actions, want %d", c.what, got, c.want)
		}
	}
}

// underFloor fails for every successful run that came in under its floor:
// the floor is the least time any agent could take (floor.go).
func underFloor(t *testing.T, rep *Report) (worst float64, n int) {
	t.Helper()
	for _, r := range rep.Records {
		if !r.Success || r.FloorMS <= 0 {
			continue
		}
		n++
		x := r.Ratio()
		if worst == 0 || x < worst {
			worst = x
		}
		if r.SimMS < r.FloorMS {
			t.Errorf("%s %s %s seed %d %s (%s): %d ms, under its floor of %d ms", r.Task, r.Locale, r.Profile, r.Seed, r.Policy, r.Observer, r.SimMS, r.FloorMS)
		}
	}
	t.Logf("least time / floor over %d successful runs: %.3f", n, worst)
	return worst, n
}

// TestFloorOverTheGrid runs the full grid (every task, both locales,
// every profile, 10 seeds, every policy but ai, both observers) and checks
// that no run comes in under its floor. PHONEBENCH_FLOOR_GRID=1 runs it
// (about 20 minutes on 2 shared cores); PHONEBENCH_FLOOR_SEEDS=N runs N
// seeds instead, to time it.
//
// It does each thing once: a unit's floor depends on the unit alone, so
// both observers share it; and the four named peers read and act their
// own way whatever the observer (TestNamedPeersIgnoreTheObserver), so the
// helper's half runs only the policies that go through it (rule,
// reference, peer-loop): their runs on the helper path would be the
// uiautomator half's again.
func TestFloorOverTheGrid(t *testing.T) {
	if os.Getenv("PHONEBENCH_FLOOR_GRID") == "" {
		t.Skip("PHONEBENCH_FLOOR_GRID=1 runs the full grid")
	}
	seeds := 10
	if s := os.Getenv("PHONEBENCH_FLOOR_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("PHONEBENCH_FLOOR_SEEDS=%q: want a number of seeds", s)
		}
		seeds = n
	}
	floors := &floorCache{}
	least, runs := 0.0, 0
	for _, o := range []sim.Observer{sim.ObserverUIAutomator, sim.ObserverHelper} {
		var pols []string // every policy but ai
		if o == sim.ObserverHelper {
			pols = observerPolicies
		}
		start := time.Now()
		rep, err := Run(context.Background(), Options{Seeds: seeds, FirstSeed: 1, Observer: o, Policies: pols,
			ModelLatency: DefaultModelLatency, floors: floors})
		if err != nil {
			t.Fatal(err)
		}
		worst, n := underFloor(t, rep)
		t.Logf("%s: %d runs in %s", o, len(rep.Records), time.Since(start).Round(time.Second))
		if n > 0 && (runs == 0 || worst < least) {
			least = worst
		}
		runs += n
	}
	t.Logf("the grid (%d seeds): least time / floor %.3f over %d successful runs with a floor above 0", seeds, least, runs)
}

// observerPolicies are the policies that read and act through
// --observer; the named peers take their own paths.
var observerPolicies = []string{PolicyRule, PolicyReference, PolicyPeerLoop}

// The four named peers read and act their own way whatever --observer
// says: their runs are the same on both paths, to the millisecond (so
// that TestFloorOverTheGrid runs them once).
func TestNamedPeersIgnoreTheObserver(t *testing.T) {
	var pols []string
	for _, p := range DefaultPolicies {
		if !slices.Contains(observerPolicies, p) {
			pols = append(pols, p)
		}
	}
	if len(pols) != 4 {
		t.Fatalf("named peers %v; want four", pols)
	}
	profiles := []string{"realistic", "hostile"}
	if testing.Short() {
		profiles = profiles[:1]
	}
	var reps [2]*Report
	for i, o := range []sim.Observer{sim.ObserverUIAutomator, sim.ObserverHelper} {
		rep, err := Run(context.Background(), Options{Seeds: 1, FirstSeed: 1, Profiles: profiles, Locales: []string{"en"}, Policies: pols, Observer: o})
		if err != nil {
			t.Fatal(err)
		}
		reps[i] = rep
	}
	if len(reps[0].Records) != len(reps[1].Records) || len(reps[0].Records) == 0 {
		t.Fatalf("%d and %d runs", len(reps[0].Records), len(reps[1].Records))
	}
	for i, a := range reps[0].Records {
		b := reps[1].Records[i]
		if a.Task != b.Task || a.Policy != b.Policy || a.Profile != b.Profile || a.SimMS != b.SimMS || a.Success != b.Success ||
			a.Steps != b.Steps || a.Reads != b.Reads || a.Calls != b.Calls || a.FloorMS != b.FloorMS {
			t.Errorf("%s %s %s: uiautomator %d ms %d steps %d reads ok=%v; helper %s %s %s: %d ms %d steps %d reads ok=%v",
				a.Task, a.Profile, a.Policy, a.SimMS, a.Steps, a.Reads, a.Success, b.Task, b.Profile, b.Policy, b.SimMS, b.Steps, b.Reads, b.Success)
		}
	}
}

// On the helper's path, where phonepilot's runs come closest to it, no
// run of any policy comes in under the floor (one seed of every task on
// realistic and hostile, in English; the full grid is TestFloorOverTheGrid).
func TestFloorHoldsOnTheHelperPath(t *testing.T) {
	profiles := []string{"realistic", "hostile"}
	if testing.Short() {
		profiles = profiles[:1]
	}
	rep, err := Run(context.Background(), Options{Seeds: 1, FirstSeed: 1, Profiles: profiles, Locales: []string{"en"},
		Observer: sim.ObserverHelper, ModelLatency: DefaultModelLatency})
	if err != nil {
		t.Fatal(err)
	}
	underFloor(t, rep)
	s, ok := rep.summary(PolicyReference, "realistic", "en")
	if !ok || s.TimeRatio < 1 {
		t.Errorf("reference on the helper's path: time / floor %.2f (%+v)", s.TimeRatio, s)
	}
	// Where it stands against the issue's targets (24: ≤ 1.3× the floor,
	// ≥ 3× faster than the fastest peer loop before model time): settling
	// on the change counter took 3.0× the floor and 1.9× mobile-use when
	// it waited for the counter to go still after every action; 1.5× and
	// 4.5× after, with a launch charged 6 ms, which no path does: device/adb
	// launches with `monkey` (a Java process, 0.23–0.4 s) on the helper's
	// path too, and the floor still charges 6 ms (it is not raised).
	if s.TimeRatio > 2.1 {
		t.Errorf("reference on the helper's path, realistic: %.2f× the floor; want at most 2.1×", s.TimeRatio)
	}
	for _, v := range s.Vs {
		if v.Peer != PolicyPeerLoop && v.Runs > 0 && v.Ratio < 3 {
			t.Errorf("reference on the helper's path, realistic: %.2f× faster than %s; want at least 3×", v.Ratio, v.Peer)
		}
	}
}

// On the one-shot dump's path, where a read comes back 0.9–3.2 s after a
// press and a toast lives 2 s, the cart tasks succeed on every seed of the
// profiles that lose taps and bring dialogs over them (issue 24: hostile
// 34/40 and flaky 36/40, a lost Add to cart read late taken for done; the
// runtime now hears the toast queue right after the press).
func TestCartTasksOnTheOneShotPath(t *testing.T) {
	seeds := 10
	if testing.Short() {
		seeds = 3
	}
	rep, err := Run(context.Background(), Options{Tasks: tasks.Select("taobao.cart.add*"), Seeds: seeds, FirstSeed: 1,
		Profiles: []string{"hostile", "flaky"}, Policies: []string{PolicyReference}, Observer: sim.ObserverUIAutomator})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Records) != 2*2*2*seeds {
		t.Fatalf("%d runs; want %d", len(rep.Records), 2*2*2*seeds)
	}
	for _, r := range rep.Records {
		if !r.Success {
			t.Errorf("%s %s %s seed %d: %s", r.Task, r.Locale, r.Profile, r.Seed, r.Why)
		}
	}
}

// On the helper's path, where the phone hears toasts, a second Add to cart
// dropped just as Taobao's promotion came up, while the first one's toast
// was still going, is not taken for done: no toast answered it, and
// neither the promotion nor the old toast going is its effect (with the
// screenshot, flaky and hostile seed 10: the runtime said the press had
// changed the screen, and the cart held one).
func TestCartAddTwoUnderAnAdOnTheHelperPath(t *testing.T) {
	var sel []tasks.Task
	for _, tk := range tasks.Select("taobao.cart.add_two") {
		sel = append(sel, tk)
	}
	rep, err := Run(context.Background(), Options{Tasks: sel, Seeds: 1, FirstSeed: 10, Locales: []string{"en"},
		Profiles: []string{"hostile", "flaky"}, Policies: []string{PolicyReference}, Observer: sim.ObserverHelper, Vision: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Records) != 2 {
		t.Fatalf("%d runs; want 2", len(rep.Records))
	}
	for _, r := range rep.Records {
		if !r.Success {
			t.Errorf("%s %s seed %d: %s", r.Task, r.Profile, r.Seed, r.Why)
		}
	}
}

// The bench's token count of each turn of the reference policy (the
// request counted with a real tokenizer, plus the screenshot a request with
// vision on carries) is within 10% of what a stand-in server that counts
// like the provider reports for that request sent with the image, for both
// providers' rules; and the record's input tokens are those counts added
// up (issue 24: the bench counted bytes / 4 and no image).
func TestTokensPerTurnMatchAStandInServer(t *testing.T) {
	var reqs []ai.Request
	var sel []tasks.Task
	for _, tk := range tasks.Select("taobao.search") {
		if tk.Name == "taobao.search" {
			sel = append(sel, tk)
		}
	}
	rep, err := Run(context.Background(), Options{Tasks: sel, Seeds: 1, FirstSeed: 1, Profiles: []string{"realistic"},
		Locales: []string{"en"}, Policies: []string{PolicyReference}, Workers: 1, requests: func(r ai.Request) { reqs = append(reqs, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Records) != 1 || !rep.Records[0].Success || len(reqs) < 3 {
		t.Fatalf("%d records, %d requests: %+v", len(rep.Records), len(reqs), rep.Records)
	}
	phone, err := sim.New(sim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	w, h := phone.Size()
	iw, ih := ai.ScreenshotSize(w, h, 0)
	img := &ai.Image{MediaType: "image/png", Data: aitest.PNG(t, iw, ih), Width: iw, Height: ih}
	for _, name := range []string{"anthropic", "openai"} {
		srv := aitest.NewModelServer(t, func(aitest.Turn) (string, string) { return "wait", `{"seconds":1}` })
		cfg := ai.Defaults()
		cfg.Provider, cfg.APIKey, cfg.BaseURL = name, "k", srv.URL
		var p ai.Provider
		if name == "anthropic" {
			p, err = anthropic.New(cfg)
		} else {
			cfg.BaseURL += "/v1"
			p, err = openai.New(cfg)
		}
		if err != nil {
			t.Fatal(err)
		}
		for i, req := range reqs {
			counted := ai.Estimate(name, req, ai.Reply{}).Input + ai.ScreenshotTokens(name, w, h, 0)
			sent := req
			sent.Messages = append([]ai.Message(nil), req.Messages...)
			last := &sent.Messages[len(sent.Messages)-1]
			last.Parts = append(append([]ai.Part(nil), last.Parts...), ai.Part{Image: img})
			reply, err := p.Complete(context.Background(), sent)
			if err != nil {
				t.Fatal(err)
			}
			got, want := float64(counted), float64(reply.Usage.Input)
			if want == 0 || got < want*0.9 || got > want*1.1 {
				t.Errorf("%s turn %d: the bench counted %.0f input tokens, the server reported %.0f with the image (more than 10%% apart)", name, i+1, got, want)
			}
			t.Logf("%s turn %d: counted %.0f, reported %.0f", name, i+1, got, want)
		}
	}
	// The record adds up its turns counted by the planner's provider's
	// rules (its default), each with its screenshot.
	var sum int64
	bench := ai.Defaults().Provider
	for _, req := range reqs {
		sum += ai.Estimate(bench, req, ai.Reply{}).Input + ai.ScreenshotTokens(bench, w, h, 0)
	}
	if rep.Records[0].InputTokens != sum {
		t.Errorf("the record holds %d input tokens; its %d turns count %d with their screenshots", rep.Records[0].InputTokens, len(reqs), sum)
	}
}

// TestEveryPolicyIsDescribed: bench --help lists the policies from
// PolicyAbout; a policy added without a line there would be missing from it,
// and the defaults are every policy but ai.
func TestEveryPolicyIsDescribed(t *testing.T) {
	for _, p := range Policies {
		if PolicyAbout[p] == "" {
			t.Errorf("policy %q has no PolicyAbout line", p)
		}
	}
	if len(PolicyAbout) != len(Policies) {
		t.Errorf("PolicyAbout has %d entries for %d policies", len(PolicyAbout), len(Policies))
	}
	if len(DefaultPolicies) != len(Policies)-1 || slices.Contains(DefaultPolicies, PolicyAI) {
		t.Errorf("DefaultPolicies = %v, want every policy but %s", DefaultPolicies, PolicyAI)
	}
}

// With Vision, reference plans as the AI planner does by default: every
// request carries the screenshot, taken from the phone (the helper's frame
// charged on the simulated clock), so the run takes longer than planning on
// the listing alone, on the same seed, and its tokens are those the image
// adds (counted from the requests, not added by the bench). On uiautomator's
// path it is refused: the frame beside a dump cannot overlap it on the
// simulated clock.
func TestVisionChargesTheScreenshot(t *testing.T) {
	sel := tasks.Select("taobao.search")
	sel = slices.DeleteFunc(sel, func(tk tasks.Task) bool { return tk.Name != "taobao.search" })
	run := func(vision bool, reqs *int) Record {
		t.Helper()
		rep, err := Run(context.Background(), Options{Tasks: sel, Seeds: 1, FirstSeed: 1, Profiles: []string{"realistic"},
			Locales: []string{"en"}, Policies: []string{PolicyReference}, Workers: 1, Observer: sim.ObserverHelper, Vision: vision,
			requests: func(r ai.Request) {
				for _, m := range r.Messages {
					for _, p := range m.Parts {
						if p.Image != nil {
							*reqs++
						}
					}
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Records) != 1 || !rep.Records[0].Success {
			t.Fatalf("%+v", rep.Records)
		}
		return rep.Records[0]
	}
	var off, on int
	without, with := run(false, &off), run(true, &on)
	if off != 0 || on == 0 {
		t.Fatalf("images in the requests: %d without vision, %d with; want none and some", off, on)
	}
	if with.SimMS <= without.SimMS {
		t.Errorf("with the screenshot %d ms, without %d ms: the frame was not charged", with.SimMS, without.SimMS)
	}
	if d := float64(with.InputTokens-without.InputTokens) / float64(without.InputTokens); d > 0.05 || d < -0.05 {
		t.Errorf("input tokens %d with the images in the requests, %d counted by the bench without: %.1f%% apart", with.InputTokens, without.InputTokens, 100*d)
	}
	if _, err := Run(context.Background(), Options{Tasks: sel, Policies: []string{PolicyReference}, Vision: true}); !errors.Is(err, ErrBadOptions) {
		t.Errorf("--vision on uiautomator's path: %v, want ErrBadOptions", err)
	}
}
