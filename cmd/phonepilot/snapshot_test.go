package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestSnapshotUsesTheAPIStyleAndThePlannerThatRan(t *testing.T) {
	c := defaultAppConfig()
	c.Runtime.PollInterval = 200 * time.Millisecond
	c.AI.APIKey = "sk-ant-secret-value"
	c.Serve.Token = "a-serve-token-of-some-length"
	c.Storage.DB = "postgres://pp:hunter2@db.example:5432/pp"

	raw, err := snapshotFor(c, "sim:a", "")
	if err != nil {
		t.Fatal(err)
	}
	var rule map[string]any
	if err := json.Unmarshal(raw, &rule); err != nil {
		t.Fatal(err)
	}
	if rule["planner"] != "rule" {
		t.Errorf("planner = %v, want rule (the planner that ran)", rule["planner"])
	}
	if _, ok := rule["ai"]; ok {
		t.Errorf("a rule task's snapshot carries AI settings: %s", raw)
	}
	rt, _ := rule["runtime"].(map[string]any)
	if rt["poll_interval"] != "200ms" || rt["wait_timeout"] != "10s" {
		t.Errorf("runtime durations = %v, %v; want \"200ms\", \"10s\"", rt["poll_interval"], rt["wait_timeout"])
	}
	if _, ok := rule["sim"]; !ok {
		t.Errorf("a sim task's snapshot has no sim section: %s", raw)
	}

	raw, err = snapshotFor(c, "adb", "ai")
	if err != nil {
		t.Fatal(err)
	}
	var ai struct {
		Planner string `json:"planner"`
		AI      struct {
			Provider, Model string
			Timeout         string `json:"timeout"`
		} `json:"ai"`
	}
	if err := json.Unmarshal(raw, &ai); err != nil {
		t.Fatal(err)
	}
	if ai.Planner != "ai" || ai.AI.Provider != "anthropic" || ai.AI.Model == "" || ai.AI.Timeout != "1m0s" {
		t.Errorf("ai snapshot = %+v (%s); want planner ai, provider anthropic, its default model, timeout 1m0s", ai, raw)
	}
	for _, secret := range []string{"sk-ant-secret-value", "a-serve-token-of-some-length", "hunter2"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("snapshot leaks %q: %s", secret, raw)
		}
	}
	for _, key := range []string{"MaxSteps", "WaitTimeout", "APIKey"} {
		if strings.Contains(string(raw), key) {
			t.Errorf("snapshot has Go field name %s: %s", key, raw)
		}
	}
}

// A task records the safety policy it ran under, from phonepilot.toml.
func TestSnapshotCarriesTheSafetyPolicy(t *testing.T) {
	path := writeFile(t, "[safety]\npayment = \"deny\"\napproval_timeout = \"5m\"\n[safety.apps.\"com.tencent.mm\"]\nsend = \"allow\"\n")
	c, err := loadConfig(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := snapshotFor(c, "sim", "rule")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Safety struct {
			Payment         string                       `json:"payment"`
			Send            string                       `json:"send"`
			Apps            map[string]map[string]string `json:"apps"`
			ApprovalTimeout string                       `json:"approval_timeout"`
			AnswerTimeout   string                       `json:"answer_timeout"`
		} `json:"safety"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.Safety.Payment != "deny" || s.Safety.Send != "" || s.Safety.Apps["com.tencent.mm"]["send"] != "allow" ||
		s.Safety.ApprovalTimeout != "5m0s" || s.Safety.AnswerTimeout != "10m0s" {
		t.Errorf("safety snapshot %+v (%s); want the policy as written and the waits", s.Safety, raw)
	}
}

// The leaks: a key=value DSN's password and a key in the base
// URL's query are stored in the task's config (which the API returns) and
// printed by serve; neither is, and a key=value DSN opens PostgreSQL, not
// a SQLite file of that name.
func TestSnapshotAndLogKeepNoDSNOrURLSecret(t *testing.T) {
	c := defaultAppConfig()
	c.Storage.DB = "host=db.example dbname=pp user=pp password=hunter2 sslmode=disable"
	c.AI.BaseURL = "https://llm.example/v1?key=sk-query-secret"
	raw, err := snapshotFor(c, "sim", "ai")
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2", "sk-query-secret"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("snapshot keeps %q: %s", secret, raw)
		}
	}
	if !strings.Contains(string(raw), "host=db.example") || !strings.Contains(string(raw), "llm.example/v1") {
		t.Errorf("snapshot lost what is not secret: %s", raw)
	}
	if l := dbLabel(c.Storage.DB); strings.Contains(l, "hunter2") || !strings.Contains(l, "dbname=pp") {
		t.Errorf("serve's log label %q", l)
	}
	if l := dbLabel("postgres://pp:hunter2@db/pp"); strings.Contains(l, "hunter2") {
		t.Errorf("serve's log label %q", l)
	}
	if !isPostgres(c.Storage.DB) {
		t.Errorf("%q is not taken for PostgreSQL", c.Storage.DB)
	}
}
