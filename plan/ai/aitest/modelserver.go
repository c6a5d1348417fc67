package aitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"phonepilot/plan/ai/tokens"
)

// Turn is one decision request as a scripted model sees it.
type Turn struct {
	N        int    // 1-based
	Provider string // "anthropic" or "openai"
	Listing  string // the current screen listing (between <screen> and </screen>)
	Text     string // all text of the current user turn
	Images   int    // images anywhere in the request
	Auth     string // the Authorization header received
	Body     []byte
	Usage    Usage // what the server reported for the request
}

// Lines returns the listing's element lines by index.
func (t Turn) Lines() map[int]string {
	out := map[int]string{}
	for _, m := range listingLine.FindAllStringSubmatch(t.Listing, -1) {
		var i int
		fmt.Sscan(m[1], &i)
		out[i] = m[0]
	}
	return out
}

// Find returns the index of the first listed line matching re.
func (t Turn) Find(re string) (int, bool) {
	r := regexp.MustCompile(re)
	best, found := 0, false
	for i, line := range t.Lines() {
		if r.MatchString(line) && (!found || i < best) {
			best, found = i, true
		}
	}
	return best, found
}

var listingLine = regexp.MustCompile(`(?m)^\[(\d+)\] .*$`)

// Script decides one turn: a tool name and its JSON arguments.
type Script func(Turn) (tool string, args string)

// ModelServer is a loopback model API speaking both the Anthropic Messages
// API (POST /v1/messages) and OpenAI Chat Completions (POST
// /v1/chat/completions), answering every request with one tool call chosen
// by a Script, in the shape of the recorded replies. It reports usage as
// the real APIs do, prompt caching included: it counts the request's tokens
// (package tokens) and keeps a prompt cache by each provider's documented
// rules, so a request that repeats an earlier one's prefix is told so.
type ModelServer struct {
	*httptest.Server
	mu    sync.Mutex
	turns []Turn
	anth  cache
	oai   map[string][][]block
}

// NewModelServer starts a ModelServer; it stops when the test ends.
func NewModelServer(t testing.TB, script Script) *ModelServer {
	t.Helper()
	anth := Fixture(t, "anthropic_response_tool_use_only.json")
	oai := Fixture(t, "openai_response_tool_call_single.json")
	var shape struct {
		Usage map[string]any `json:"usage"`
	}
	if err := json.Unmarshal(Fixture(t, "openai_response_image_input.json"), &shape); err != nil {
		t.Fatal(err)
	}
	oaiUsage := shape.Usage
	s := &ModelServer{anth: cache{}, oai: map[string][][]block{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var provider string
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
			provider = "anthropic"
		case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
			provider = "openai"
		default:
			http.Error(w, "no route "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		turn, err := readTurn(provider, body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		turn.Auth = r.Header.Get("Authorization")
		s.mu.Lock()
		if provider == "anthropic" {
			turn.Usage, err = anthropicUsage(body, s.anth)
		} else {
			turn.Usage, err = openaiUsage(body, s.oai)
		}
		if err != nil {
			s.mu.Unlock()
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		turn.N = len(s.turns) + 1
		s.turns = append(s.turns, turn)
		s.mu.Unlock()
		name, args := script(turn)
		u := turn.Usage
		u.Output = tokens.Text(name) + tokens.Text(args) + perMessage
		id := fmt.Sprintf("call_%d", turn.N)
		var out []byte
		if provider == "anthropic" {
			out = rewrite(anth, func(m map[string]any) {
				m["content"] = []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": json.RawMessage(args)}}
				usage := m["usage"].(map[string]any)
				usage["input_tokens"] = u.Uncached()
				usage["cache_read_input_tokens"] = u.CacheRead
				usage["cache_creation_input_tokens"] = u.CacheWrite
				usage["cache_creation"] = map[string]any{"ephemeral_5m_input_tokens": u.CacheWrite, "ephemeral_1h_input_tokens": 0}
				usage["output_tokens"] = u.Output
			})
		} else {
			out = rewrite(oai, func(m map[string]any) {
				msg := m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
				msg["tool_calls"] = []any{map[string]any{"id": id, "type": "function",
					"function": map[string]any{"name": name, "arguments": args}}}
				// The usage shape of a recorded reply with its details
				// (openai_response_image_input.json).
				m["usage"] = rewriteMap(oaiUsage, func(usage map[string]any) {
					usage["prompt_tokens"] = u.Input
					usage["completion_tokens"] = u.Output
					usage["total_tokens"] = u.Input + u.Output
					usage["prompt_tokens_details"].(map[string]any)["cached_tokens"] = u.CacheRead
				})
			})
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	}))
	t.Cleanup(s.Close)
	return s
}

// Turns returns the requests seen so far.
func (s *ModelServer) Turns() []Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Turn(nil), s.turns...)
}

// rewriteMap returns a deep copy of m changed by f.
func rewriteMap(m map[string]any, f func(map[string]any)) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	f(out)
	return out
}

func rewrite(fixture []byte, f func(map[string]any)) []byte {
	var m map[string]any
	_ = json.Unmarshal(fixture, &m)
	f(m)
	b, _ := json.Marshal(m)
	return b
}

// readTurn pulls the current turn's text and the image count out of either
// API's request body.
func readTurn(provider string, body []byte) (Turn, error) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Turn{}, fmt.Errorf("request is not JSON: %v", err)
	}
	t := Turn{Provider: provider, Body: body}
	for i, m := range req.Messages {
		var parts []map[string]any
		var text strings.Builder
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			var s string
			_ = json.Unmarshal(m.Content, &s)
			text.WriteString(s)
		}
		for _, p := range parts {
			switch p["type"] {
			case "image", "image_url":
				t.Images++
			case "text":
				s, _ := p["text"].(string)
				text.WriteString(s)
			}
		}
		if i == len(req.Messages)-1 {
			if m.Role != "user" {
				return t, fmt.Errorf("the last message is %q, want user", m.Role)
			}
			t.Text = text.String()
		}
	}
	if a, b := strings.Index(t.Text, "<screen>\n"), strings.Index(t.Text, "</screen>"); a >= 0 && b > a {
		t.Listing = t.Text[a+len("<screen>\n") : b]
	}
	return t, nil
}
