// Package aitest holds what the AIPlanner's tests and its providers' tests
// share: the recorded LLM API bodies in plan/ai/testdata/llm, golden-file
// comparison (rewritten with UPDATE_GOLDEN=1), a small PNG, a sample
// provider-neutral request exercising every part kind, a scripted replay
// server for one provider's API, and the tests every provider shares.
package aitest

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"phonepilot/internal/golden"
	"phonepilot/plan/ai"
)

// dir is plan/ai, found from this file's location so any package's test can
// read the shared fixtures.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..")
}

// Fixture returns the bytes of plan/ai/testdata/llm/<name>.
func Fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir(), "testdata", "llm", name))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return b
}

// ErrorFixture is a recorded error response: status, headers, body. The
// fixtures spell the status key two ways and sometimes lack a body.
type ErrorFixture struct {
	Status     int               `json:"status"`
	StatusCode int               `json:"status_code"`
	Headers    map[string]string `json:"headers"`
	Body       json.RawMessage   `json:"body"`
}

// LoadErrorFixture reads an error fixture.
func LoadErrorFixture(t testing.TB, name string) ErrorFixture {
	t.Helper()
	var f ErrorFixture
	if err := json.Unmarshal(Fixture(t, name), &f); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	if f.Status == 0 {
		f.Status = f.StatusCode
	}
	return f
}

// Golden compares got with testdata/<name> of the calling package, or
// rewrites the file when UPDATE_GOLDEN=1.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

// PrettyJSON indents a JSON body for a readable golden file.
func PrettyJSON(t testing.TB, body []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, body, "", "  "); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, body)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// PNG encodes a w×h image: a light background with a dark bar at the top,
// so a scaled copy is still recognisable.
func PNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{240, 240, 240, 255}
			if y < h/10 {
				c = color.RGBA{255, 80, 0, 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Tools is a two-tool subset of the contract, enough to check how schemas
// travel.
func Tools() []ai.ToolSpec {
	return []ai.ToolSpec{
		{Name: "tap", Description: "Tap an element of the current screen.",
			Schema: json.RawMessage(`{"type":"object","properties":{"element":{"type":"integer","minimum":0,"description":"The [N] index."}},"required":["element"],"additionalProperties":false}`)},
		{Name: "finish_task", Description: "End the task.",
			Schema: json.RawMessage(`{"type":"object","properties":{"success":{"type":"boolean"},"reason":{"type":"string"}},"required":["success","reason"],"additionalProperties":false}`)},
	}
}

// SampleRequest has a system prompt, tools, one earlier step replayed as a
// tool call answered by its result, and a current turn with an image and
// the listing: every part kind a provider maps.
func SampleRequest(t testing.TB) ai.Request {
	return ai.Request{
		System:    "You operate an Android phone.",
		Tools:     Tools(),
		MaxTokens: 512,
		Messages: []ai.Message{
			{Role: ai.RoleUser, Parts: []ai.Part{{Text: "Goal: open Taobao and search Mac mini"}}},
			{Role: ai.RoleAssistant, Parts: []ai.Part{
				{Text: "launch Taobao"},
				{ToolUse: &ai.ToolUse{ID: "step_1", Name: "launch_app", Args: json.RawMessage(`{"app":"Taobao"}`)}},
			}},
			{Role: ai.RoleUser, Parts: []ai.Part{
				{ToolResult: &ai.ToolResult{ID: "step_1", Content: "succeeded; the screen changed"}},
				{Image: &ai.Image{MediaType: "image/png", Data: PNG(t, 4, 8), Width: 4, Height: 8, SourceWidth: 4, SourceHeight: 8}},
				{Text: "Current screen:\n<screen>\nScreen 1080x2400 · app com.taobao.taobao\n[3] EditText \"Search products\" id=search_edit clickable editable\n</screen>"},
			}},
		},
	}
}

// CheckPairing fails when a tool call is not answered by a result in the
// next message or a result answers no call of the previous message: the
// pairing both APIs demand.
func CheckPairing(t testing.TB, msgs []ai.Message) {
	t.Helper()
	for i, m := range msgs {
		if want := []ai.Role{ai.RoleUser, ai.RoleAssistant}[i%2]; m.Role != want {
			t.Errorf("message %d is %s, want %s (roles must alternate, starting with user)", i, m.Role, want)
		}
		if len(m.Parts) == 0 {
			t.Errorf("message %d is empty", i)
		}
		var uses, results []string
		for _, p := range m.Parts {
			if p.ToolUse != nil {
				uses = append(uses, p.ToolUse.ID)
			}
			if p.ToolResult != nil {
				results = append(results, p.ToolResult.ID)
			}
		}
		if m.Role == ai.RoleAssistant && len(results) > 0 {
			t.Errorf("message %d: an assistant message carries tool results", i)
		}
		if m.Role == ai.RoleUser && len(uses) > 0 {
			t.Errorf("message %d: a user message carries tool calls", i)
		}
		if len(uses) > 0 {
			if i+1 >= len(msgs) {
				t.Errorf("message %d: tool calls %v are never answered", i, uses)
				continue
			}
			answered := map[string]bool{}
			for _, p := range msgs[i+1].Parts {
				if p.ToolResult != nil {
					answered[p.ToolResult.ID] = true
				}
			}
			for _, id := range uses {
				if !answered[id] {
					t.Errorf("message %d: tool call %s has no result in message %d", i, id, i+1)
				}
			}
		}
		if len(results) > 0 {
			prev := map[string]bool{}
			if i > 0 {
				for _, p := range msgs[i-1].Parts {
					if p.ToolUse != nil {
						prev[p.ToolUse.ID] = true
					}
				}
			}
			for _, id := range results {
				if !prev[id] {
					t.Errorf("message %d: tool result %s answers no call of the previous message (the API rejects it with 400)", i, id)
				}
			}
			// Results come first in their message (Anthropic requires it).
			seenOther := false
			for _, p := range m.Parts {
				if p.ToolResult == nil {
					seenOther = true
				} else if seenOther {
					t.Errorf("message %d: a tool result follows other content", i)
				}
			}
		}
	}
}
