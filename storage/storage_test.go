package storage_test

import (
	"time"

	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"phonepilot/lifecycle"
	"phonepilot/scene"
	"phonepilot/storage"
)

func TestRedactConfig(t *testing.T) {
	type ai struct {
		Provider  string
		APIKey    string
		MaxTokens int
	}
	cfg := map[string]any{
		"AI":      ai{Provider: "anthropic", APIKey: "sk-ant-123456", MaxTokens: 1024},
		"serve":   map[string]any{"addr": "0.0.0.0:8080", "token": "hunter2"},
		"db":      map[string]any{"postgres_dsn": "postgres://u:pw@h/db", "password": ""},
		"list":    []any{map[string]any{"access-token": "x", "keyboard": "adb"}},
		"Planner": "rule",
		"Storage": map[string]any{"DB": "postgres://pp:s3cr3t@db:5432/pp"},
	}
	raw, err := storage.RedactConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"sk-ant-123456", "hunter2", "pw@h", `"x"`, "s3cr3t"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("snapshot keeps secret %s: %s", secret, raw)
		}
	}
	var got map[string]any
	json.Unmarshal(raw, &got)
	want := map[string]any{
		"AI":      map[string]any{"Provider": "anthropic", "APIKey": "[redacted]", "MaxTokens": 1024.0},
		"serve":   map[string]any{"addr": "0.0.0.0:8080", "token": "[redacted]"},
		"db":      map[string]any{"postgres_dsn": "[redacted]", "password": ""},
		"list":    []any{map[string]any{"access-token": "[redacted]", "keyboard": "adb"}},
		"Planner": "rule",
		"Storage": map[string]any{"DB": "postgres://pp:xxxxx@db:5432/pp"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("snapshot = %s", raw)
	}
	if _, err := storage.RedactConfig(func() {}); err == nil {
		t.Error("a value that does not marshal was accepted")
	}
}

func TestNewIDUniqueAndURLSafe(t *testing.T) {
	seen := map[string]bool{}
	for range 2000 {
		id := storage.NewID()
		if len(id) != 21 || strings.Trim(id, "0123456789abcdefghjkmnpqrstvwxyz") != "" {
			t.Fatalf("id %q is not 21 lower-case base32 characters", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
	}
}

// A Change with a cause or final scene the store could not keep is refused
// before it reaches a database.
func TestChangeValidate(t *testing.T) {
	ok := storage.Change{From: []lifecycle.Status{lifecycle.Running}, To: lifecycle.Failed, Cause: lifecycle.CauseStuck, At: time.Unix(1, 0)}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]storage.Change{
		"cause":       {From: ok.From, To: ok.To, Cause: "exploded", At: ok.At},
		"final scene": {From: ok.From, To: ok.To, FinalScene: []byte("{"), At: ok.At},
		"to":          {From: ok.From, To: "done", At: ok.At},
		"from":        {From: []lifecycle.Status{"x"}, To: ok.To, At: ok.At},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("bad %s accepted", name)
		}
	}
}

// A pending element's bounds are written the way the Scene JSON writes
// bounds, so a client reads both with the same code, and they round-trip.
func TestPendingElementJSON(t *testing.T) {
	in := storage.PendingElement{Index: 17, Class: "android.widget.Button", Label: "Buy now", ID: "buy_now",
		Bounds: scene.Bounds{Left: 720, Top: 2123, Right: 1060, Bottom: 2243}}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"index":17,"class":"android.widget.Button","label":"Buy now","id":"buy_now","bounds":[720,2123,1060,2243]}`; string(raw) != want {
		t.Errorf("json = %s\nwant  %s", raw, want)
	}
	var out storage.PendingElement
	if err := json.Unmarshal(raw, &out); err != nil || out != in {
		t.Errorf("round trip = %+v, %v; want %+v", out, err, in)
	}
	if err := json.Unmarshal([]byte(`{"index":1,"bounds":"wide"}`), &out); err == nil || !strings.Contains(err.Error(), "pending element") {
		t.Errorf("bad bounds: %v", err)
	}
}
