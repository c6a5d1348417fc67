package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"phonepilot/internal/testlog"
	"phonepilot/lifecycle"
	"phonepilot/runtime"
	"phonepilot/storage"
	"phonepilot/task"
)

// servedSafety is serve's task service over in-process simulated phones
// with serve's runner (the default gate: confirm every category).
type servedSafety struct {
	svc  *task.Service
	devs *serveDevices
}

func newServedSafety(t *testing.T) *servedSafety {
	t.Helper()
	log := testlog.New(t)
	devs := newServeDevices(deviceOptions{SimLocale: "en", SimSeed: 1, Logger: log, ADBServer: "127.0.0.1:1"})
	svc, err := task.New(task.Config{PollInterval: 50 * time.Millisecond, Logger: log}, openTestSQLite(t), devs,
		&runtimeRunner{base: runtime.Defaults(), planner: plannerSpec{Name: "rule"}, log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		svc.Close(ctx)
	})
	return &servedSafety{svc: svc, devs: devs}
}

// counts reads the orders and the sent messages off a simulated phone.
func (s *servedSafety) counts(t *testing.T, dev string) (orders, sent int) {
	t.Helper()
	raw, err := s.devs.State(context.Background(), dev)
	if err != nil {
		t.Fatalf("no simulated phone %s: %v", dev, err)
	}
	var st struct {
		Taobao struct {
			Orders []json.RawMessage `json:"orders"`
		} `json:"taobao"`
		Messages struct {
			Sent []json.RawMessage `json:"sent"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	return len(st.Taobao.Orders), len(st.Messages.Sent)
}

// untilWaitingOrEnd waits until the task waits for a person or ends.
func (s *servedSafety) untilWaitingOrEnd(t *testing.T, id string) storage.Task {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		tk, err := s.svc.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Status.Waiting() || tk.Status.Terminal() {
			return tk
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still %s", id, tk.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The two goals on serve's runner, on the simulated Android phone
// and the simulated iPhone (sim:ios-…, driven through WebDriverAgent's
// API): each stops at waiting_approval before the order or the message
// exists; approving every pending action makes exactly one; denying the
// first leaves none and fails the task approval_denied.
func TestServedGoalsWaitForApproval(t *testing.T) {
	for _, platform := range []string{"sim:", "sim:ios-"} {
		t.Run(platform, func(t *testing.T) { servedGoalsWaitForApproval(t, platform) })
	}
}

func servedGoalsWaitForApproval(t *testing.T, platform string) {
	s := newServedSafety(t)
	for i, tc := range []struct {
		goal string
		what func(orders, sent int) int
	}{
		{"open Taobao, search Mac mini, tap Mac mini Limited Edition Silver, tap Buy now, tap Pay", func(o, _ int) int { return o }},
		{"open Messages, tap Mom, type hi, tap Send", func(_, m int) int { return m }},
	} {
		for _, approve := range []bool{true, false} {
			dev := platform + string(rune('a'+i)) + map[bool]string{true: "yes", false: "no"}[approve]
			tk, err := s.svc.Submit(t.Context(), task.Request{Goal: tc.goal, Device: dev, Planner: "rule"})
			if err != nil {
				t.Fatal(err)
			}
			asks := 0
			for {
				w := s.untilWaitingOrEnd(t, tk.ID)
				if w.Status.Terminal() {
					tk = w
					break
				}
				asks++
				if w.Status != lifecycle.WaitingApproval || w.Pending == nil || w.Pending.Element == nil || w.Pending.Category == "" {
					t.Fatalf("%q: waiting %s with pending %+v; want an approval naming the element and category", tc.goal, w.Status, w.Pending)
				}
				if n := tc.what(s.counts(t, dev)); n != 0 {
					t.Fatalf("%q: %d done while waiting for approval of %q; want 0", tc.goal, n, w.Pending.Element.Label)
				}
				decide := s.svc.Approve
				if !approve {
					decide = s.svc.Deny
				}
				if _, err := decide(t.Context(), tk.ID, storage.ByAPI, "test"); err != nil {
					t.Fatal(err)
				}
			}
			n := tc.what(s.counts(t, dev))
			switch {
			case asks == 0:
				t.Errorf("%q: never waited for approval", tc.goal)
			case approve && (tk.Status != lifecycle.Completed || n != 1):
				t.Errorf("%q approved: %s (%s), %d done; want completed with exactly one", tc.goal, tk.Status, tk.Reason, n)
			case !approve && (tk.Status != lifecycle.Failed || tk.Cause != lifecycle.CauseApprovalDenied || n != 0 || asks != 1):
				t.Errorf("%q denied: %s (%s: %s), %d done, %d asks; want failed approval_denied, none done, asked once", tc.goal, tk.Status, tk.Cause, tk.Reason, n, asks)
			}
		}
	}
}

// Cancel while waiting: cancelled, nothing bought.
func TestServedCancelWhileWaiting(t *testing.T) {
	s := newServedSafety(t)
	tk, err := s.svc.Submit(t.Context(), task.Request{Goal: "open Taobao, search Mac mini, tap Mac mini Limited Edition Silver, tap Buy now, tap Pay", Device: "sim", Planner: "rule"})
	if err != nil {
		t.Fatal(err)
	}
	if w := s.untilWaitingOrEnd(t, tk.ID); w.Status != lifecycle.WaitingApproval {
		t.Fatalf("%s (%s); want waiting_approval", w.Status, w.Reason)
	}
	got, err := s.svc.Cancel(t.Context(), tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if orders, _ := s.counts(t, "sim"); got.Status != lifecycle.Cancelled || orders != 0 {
		t.Errorf("%s, %d orders; want cancelled, none", got.Status, orders)
	}
}
