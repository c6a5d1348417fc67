package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// runBuy runs the purchase goal on the simulator with --json and
// extra arguments, and returns the exit code, the status, the cause and
// the orders the phone holds afterwards.
func runBuy(t *testing.T, extra ...string) (int, string, string, int) {
	t.Helper()
	args := append([]string{"run", "--json", "--device", "sim"}, extra...)
	args = append(args, "open Taobao, search Mac mini, tap Mac mini Limited Edition Silver, tap Buy now, tap Pay")
	code, out, stderr := capture(t, context.Background(), args...)
	var doc struct {
		Status      string `json:"status"`
		Cause       string `json:"cause"`
		DeviceState struct {
			Taobao struct {
				Orders []json.RawMessage `json:"orders"`
			} `json:"taobao"`
		} `json:"device_state"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d: output is not one JSON document: %v\nstdout %s\nstderr %s", code, err, out, stderr)
	}
	return code, doc.Status, doc.Cause, len(doc.DeviceState.Taobao.Orders)
}

// Without a person to ask, run refuses the payment: nothing is bought and
// the task fails approval_denied, recorded or not.
func TestRunRefusesPaymentWithoutAPerson(t *testing.T) {
	t.Setenv("PHONEPILOT_CONFIG", "")
	for _, extra := range [][]string{nil, {"--no-record"}} {
		code, status, cause, orders := runBuy(t, extra...)
		if code == 0 || status != "failed" || cause != "approval_denied" || orders != 0 {
			t.Errorf("%v: exit %d, %s (%s), %d orders; want a failure, approval_denied, no order", extra, code, status, cause, orders)
		}
	}
}

// The [safety] policy is data the user writes: payment = "allow" lets the
// purchase through (exactly one order), payment = "deny" ends the task
// policy_denied, and a bad value is refused by name before anything runs.
func TestRunSafetyPolicyFromConfig(t *testing.T) {
	t.Setenv("PHONEPILOT_CONFIG", "")
	allow := writeFile(t, "[safety]\npayment = \"allow\"\n")
	if code, status, cause, orders := runBuy(t, "--config", allow); code != 0 || status != "completed" || orders != 1 {
		t.Errorf("payment allowed: exit %d, %s (%s), %d orders; want completed with exactly one order", code, status, cause, orders)
	}
	deny := writeFile(t, "[safety]\npayment = \"deny\"\n")
	if code, status, cause, orders := runBuy(t, "--config", deny); code == 0 || cause != "policy_denied" || orders != 0 {
		t.Errorf("payment denied: exit %d, %s (%s), %d orders; want policy_denied, no order", code, status, cause, orders)
	}
	app := writeFile(t, "[safety.apps.\"com.taobao.taobao\"]\npayment = \"allow\"\n")
	if code, status, cause, orders := runBuy(t, "--config", app); code != 0 || orders != 1 {
		t.Errorf("payment allowed in Taobao: exit %d, %s (%s), %d orders; want exactly one order", code, status, cause, orders)
	}
	bad := writeFile(t, "[safety]\npayment = \"maybe\"\n")
	code, _, errOut := capture(t, context.Background(), "run", "--config", bad, "--device", "sim", "open Taobao")
	if code != 2 || !strings.Contains(errOut, "payment") {
		t.Errorf("bad verdict: exit %d, stderr %s; want 2 naming payment", code, errOut)
	}
	unknown := writeFile(t, "[safety]\npayments = \"allow\"\n")
	code, _, errOut = capture(t, context.Background(), "run", "--config", unknown, "--device", "sim", "open Taobao")
	if code != 2 || !strings.Contains(errOut, "safety.payments") {
		t.Errorf("unknown key: exit %d, stderr %s; want 2 naming safety.payments", code, errOut)
	}
}
