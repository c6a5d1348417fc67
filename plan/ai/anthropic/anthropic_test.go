package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"phonepilot/plan/ai"
	"phonepilot/plan/ai/aitest"
)

const testKey = "sk-ant-test-0123456789abcdef"

func newProvider(t *testing.T, srv *aitest.ReplayServer, mutate ...func(*ai.Config)) *Provider {
	t.Helper()
	cfg := ai.Defaults()
	cfg.Provider, cfg.APIKey, cfg.BaseURL = Name, testKey, srv.URL
	cfg.MaxRetries = 1
	cfg.Timeout = 10 * time.Second
	for _, m := range mutate {
		m(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// toolUse rewrites a recorded tool_use reply to call one of our tools,
// keeping the rest of the real body.
func toolUse(t *testing.T, fixture string, calls ...[2]string) []byte {
	t.Helper()
	var msg map[string]any
	if err := json.Unmarshal(aitest.Fixture(t, fixture), &msg); err != nil {
		t.Fatal(err)
	}
	var content []any
	for _, b := range msg["content"].([]any) {
		if b.(map[string]any)["type"] != "tool_use" {
			content = append(content, b)
		}
	}
	for i, c := range calls {
		var input any
		if err := json.Unmarshal([]byte(c[1]), &input); err != nil {
			t.Fatal(err)
		}
		content = append(content, map[string]any{"type": "tool_use", "id": "toolu_" + string(rune('a'+i)), "name": c[0], "input": input})
	}
	msg["content"] = content
	b, _ := json.Marshal(msg)
	return b
}

func TestRequestBodyGolden(t *testing.T) {
	srv := aitest.NewReplayServer(t, "/v1/messages", aitest.OK(aitest.Fixture(t, "anthropic_response_tool_use_only.json")))
	p := newProvider(t, srv)
	req := aitest.SampleRequest(t)
	aitest.CheckPairing(t, req.Messages)
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	body := srv.Body(0)
	aitest.Golden(t, "request_sample.golden.json", aitest.PrettyJSON(t, body))

	// The facts the golden file pins, asserted by name so a regenerated
	// golden cannot silently drop them.
	var got struct {
		Model      string `json:"model"`
		MaxTokens  int    `json:"max_tokens"`
		ToolChoice struct {
			Type                   string `json:"type"`
			DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
		} `json:"tool_choice"`
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Model != string(DefaultModel) || got.MaxTokens != 512 {
		t.Errorf("model %q max_tokens %d", got.Model, got.MaxTokens)
	}
	if got.ToolChoice.Type != "any" || !got.ToolChoice.DisableParallelToolUse {
		t.Errorf("tool_choice = %+v, want any with disable_parallel_tool_use", got.ToolChoice)
	}
	if len(got.Tools) != 2 || got.Tools[0].InputSchema["type"] != "object" ||
		got.Tools[0].InputSchema["additionalProperties"] != false || got.Tools[0].InputSchema["required"] == nil {
		t.Errorf("tools lost schema keywords: %+v", got.Tools)
	}
	last := got.Messages[2].Content
	if last[0]["type"] != "tool_result" || last[0]["tool_use_id"] != "step_1" {
		t.Errorf("first block of the answer = %v, want the tool_result for step_1", last[0])
	}
	if got.Messages[1].Content[1]["type"] != "tool_use" || got.Messages[1].Content[1]["id"] != "step_1" {
		t.Errorf("assistant turn = %v, want the tool_use step_1", got.Messages[1].Content)
	}
	src, _ := last[1]["source"].(map[string]any)
	if last[1]["type"] != "image" || src["type"] != "base64" || src["media_type"] != "image/png" || src["data"] == "" {
		t.Errorf("image block = %v", last[1])
	}
	if h := srv.Header(0); h.Get("Authorization") != "Bearer "+testKey || h.Get("Anthropic-Version") == "" {
		t.Errorf("auth headers: Authorization=%q Anthropic-Version=%q", h.Get("Authorization"), h.Get("Anthropic-Version"))
	}
}

func TestRepliesParse(t *testing.T) {
	cases := []struct {
		fixture  string
		stop     ai.StopReason
		tool     string
		args     string
		text     string
		in, out  int64
		numCalls int
	}{
		{"anthropic_response_tool_use_only.json", ai.StopToolUse, "get_weather", `{"city":"New York"}`, "", 521, 55, 1},
		{"anthropic_response_text_and_tool_use.json", ai.StopToolUse, "get_weather", `{"city":"San Francisco","units":"fahrenheit"}`, "I'll get the current weather in San Francisco for you in Fahrenheit.", 402, 89, 1},
		{"anthropic_response_end_turn.json", ai.StopEndTurn, "", "", "The current temperature in San Francisco is 68 degrees Fahrenheit.", 514, 19, 0},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			srv := aitest.NewReplayServer(t, "/v1/messages", aitest.OK(aitest.Fixture(t, c.fixture)))
			r, err := newProvider(t, srv).Complete(context.Background(), aitest.SampleRequest(t))
			if err != nil {
				t.Fatal(err)
			}
			if r.Stop != c.stop || len(r.ToolCalls) != c.numCalls || r.Text != c.text {
				t.Fatalf("reply = %+v", r)
			}
			if c.numCalls > 0 && (r.ToolCalls[0].Name != c.tool || string(r.ToolCalls[0].Args) != c.args || r.ToolCalls[0].ID == "") {
				t.Errorf("tool call = %+v, want %s %s", r.ToolCalls[0], c.tool, c.args)
			}
			if r.Usage.Input != c.in || r.Usage.Output != c.out {
				t.Errorf("usage = %+v, want %d in %d out", r.Usage, c.in, c.out)
			}
		})
	}
}

func TestTwoToolUsesAreBothReported(t *testing.T) {
	srv := aitest.NewReplayServer(t, "/v1/messages", aitest.OK(toolUse(t, "anthropic_response_tool_use_only.json", [2]string{"tap", `{"element":3}`}, [2]string{"tap", `{"element":4}`})))
	r, err := newProvider(t, srv).Complete(context.Background(), aitest.SampleRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ToolCalls) != 2 || string(r.ToolCalls[0].Args) != `{"element":3}` {
		t.Fatalf("tool calls = %+v, want both in order (the planner uses the first)", r.ToolCalls)
	}
}

func TestRefusalStop(t *testing.T) {
	var msg map[string]any
	_ = json.Unmarshal(aitest.Fixture(t, "anthropic_response_end_turn.json"), &msg)
	msg["stop_reason"] = "refusal"
	msg["content"] = []any{map[string]any{"type": "text", "text": "I can't help with that."}}
	body, _ := json.Marshal(msg)
	srv := aitest.NewReplayServer(t, "/v1/messages", aitest.OK(body))
	r, err := newProvider(t, srv).Complete(context.Background(), aitest.SampleRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	if r.Stop != ai.StopRefusal || r.Refusal != "I can't help with that." {
		t.Errorf("reply = %+v, want a refusal with its text", r)
	}
}

func TestMaxTokensStop(t *testing.T) {
	var msg map[string]any
	_ = json.Unmarshal(aitest.Fixture(t, "anthropic_response_end_turn.json"), &msg)
	msg["stop_reason"] = "max_tokens"
	body, _ := json.Marshal(msg)
	r, err := newProvider(t, aitest.NewReplayServer(t, "/v1/messages", aitest.OK(body))).Complete(context.Background(), aitest.SampleRequest(t))
	if err != nil || r.Stop != ai.StopMaxTokens {
		t.Errorf("reply = %+v, %v; want a max_tokens stop", r, err)
	}
}

func Test429LongRetryAfterIsCapped(t *testing.T) {
	// The recorded 429 says retry-after: 16 (seconds); MaxRetryDelay caps
	// the wait so a step fails or proceeds instead of hanging.
	hf := aitest.LoadErrorFixture(t, "anthropic_error_429_headers_retry_after.json")
	body := aitest.LoadErrorFixture(t, "anthropic_error_429_rate_limit.json").Body
	srv := aitest.NewReplayServer(t, "/v1/messages", aitest.Fail(hf.Status, hf.Headers, body))
	_, err := newProvider(t, srv, func(c *ai.Config) { c.MaxRetryDelay = 200 * time.Millisecond }).Complete(context.Background(), aitest.SampleRequest(t))
	var pe *ai.ProviderError
	if !errors.As(err, &pe) || pe.Status != 429 || pe.Type != "rate_limit_error" || !strings.Contains(pe.Message, "rate limit") {
		t.Fatalf("err = %v, want the provider's 429 rate_limit_error with its message", err)
	}
	if srv.Requests() != 2 {
		t.Errorf("requests = %d, want 2 (MaxRetries 1)", srv.Requests())
	}
	// It still waits (the cap, not nothing); that the wait is the cap and
	// not 16 s is TestCapRetryAfter's, on the headers the SDK reads.
	if gap := srv.Gap(0, 1); gap < 200*time.Millisecond {
		t.Errorf("waited %v between attempts, want at least the 200 ms cap", gap)
	}
	if pe.RequestID != "req_011CYK5mje9HkutJtmfPzzNC" && pe.RequestID != "" {
		t.Errorf("request id = %q", pe.RequestID)
	}
}

// The SDK waits as long as the reply's retry-after says; capRetryAfter
// rewrites a longer one to MaxRetryDelay in every form a provider sends
// (milliseconds, seconds, an HTTP date) and leaves a shorter one alone.
func TestCapRetryAfter(t *testing.T) {
	const capMs = "200"
	inAnHour := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	for _, c := range []struct {
		name                string
		in                  map[string]string
		wantMs, wantSeconds string
	}{
		{"milliseconds beyond the cap", map[string]string{"Retry-After-Ms": "16000"}, capMs, ""},
		{"milliseconds within it", map[string]string{"Retry-After-Ms": "150"}, "150", ""},
		{"seconds beyond the cap", map[string]string{"Retry-After": "16"}, capMs, ""},
		{"seconds within it", map[string]string{"Retry-After": "0.1"}, "", "0.1"},
		{"a date an hour ahead", map[string]string{"Retry-After": inAnHour}, capMs, ""},
		{"both beyond", map[string]string{"Retry-After-Ms": "16000", "Retry-After": "16"}, capMs, ""},
		{"none", map[string]string{}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "https://api.anthropic.com/v1/messages", nil)
			res, err := capRetryAfter(200*time.Millisecond)(req, func(*http.Request) (*http.Response, error) {
				h := http.Header{}
				for k, v := range c.in {
					h.Set(k, v)
				}
				return &http.Response{StatusCode: 429, Header: h}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if ms, s := res.Header.Get("Retry-After-Ms"), res.Header.Get("Retry-After"); ms != c.wantMs || s != c.wantSeconds {
				t.Errorf("retry-after-ms %q, retry-after %q; want %q, %q", ms, s, c.wantMs, c.wantSeconds)
			}
		})
	}
	// A failed round trip passes through untouched.
	boom := errors.New("connection reset")
	if res, err := capRetryAfter(time.Second)(httptest.NewRequest("POST", "/", nil), func(*http.Request) (*http.Response, error) { return nil, boom }); res != nil || err != boom {
		t.Errorf("failed round trip = %v, %v", res, err)
	}
}

func Test529OverloadedIsRetriedThenFails(t *testing.T) {
	f := aitest.LoadErrorFixture(t, "anthropic_error_529_overloaded_headers.json")
	f.Headers["retry-after-ms"] = "10"
	srv := aitest.NewReplayServer(t, "/v1/messages", aitest.Fail(f.Status, f.Headers, aitest.Fixture(t, "anthropic_error_529_overloaded.json")))
	_, err := newProvider(t, srv).Complete(context.Background(), aitest.SampleRequest(t))
	var pe *ai.ProviderError
	if !errors.As(err, &pe) || pe.Status != 529 || pe.Type != "overloaded_error" || pe.Message != "Overloaded" {
		t.Fatalf("err = %v, want 529 overloaded_error Overloaded", err)
	}
	if srv.Requests() != 2 {
		t.Errorf("requests = %d, want 2 (one retry)", srv.Requests())
	}
	if !strings.Contains(err.Error(), "Overloaded") || strings.Contains(err.Error(), testKey) {
		t.Errorf("error text %q", err)
	}
}

// internalError is a 500 the SDK may retry after 10 ms.
var internalError = aitest.Fail(500, map[string]string{"retry-after-ms": "10"},
	[]byte(`{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`))

func Test500IsRetriedThenSucceeds(t *testing.T) {
	srv := aitest.NewReplayServer(t, "/v1/messages",
		internalError,
		aitest.OK(aitest.Fixture(t, "anthropic_response_tool_use_only.json")))
	r, err := newProvider(t, srv).Complete(context.Background(), aitest.SampleRequest(t))
	if err != nil || len(r.ToolCalls) != 1 || srv.Requests() != 2 {
		t.Fatalf("reply %+v err %v after %d requests; want success on the retry", r, err, srv.Requests())
	}
}

func Test500ExhaustsRetries(t *testing.T) {
	srv := aitest.NewReplayServer(t, "/v1/messages", internalError)
	_, err := newProvider(t, srv, func(c *ai.Config) { c.MaxRetries = 2 }).Complete(context.Background(), aitest.SampleRequest(t))
	var pe *ai.ProviderError
	if !errors.As(err, &pe) || pe.Status != 500 || pe.Message != "Internal server error" || !pe.Retryable() {
		t.Fatalf("err = %v", err)
	}
	if srv.Requests() != 3 {
		t.Errorf("requests = %d, want 3 (MaxRetries 2)", srv.Requests())
	}
}

func TestOrphanToolResult400IsNotRetried(t *testing.T) {
	f := aitest.LoadErrorFixture(t, "anthropic_error_400_orphan_tool_result.json")
	srv := aitest.NewReplayServer(t, "/v1/messages", aitest.Fail(f.Status, f.Headers, f.Body))
	_, err := newProvider(t, srv).Complete(context.Background(), aitest.SampleRequest(t))
	var pe *ai.ProviderError
	if !errors.As(err, &pe) || pe.Status != 400 || pe.Type != "invalid_request_error" || !strings.Contains(pe.Message, "tool_use_id") {
		t.Fatalf("err = %v", err)
	}
	if srv.Requests() != 1 {
		t.Errorf("requests = %d, want 1 (a 400 is not retried)", srv.Requests())
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	// A server that echoes the credential it got must not get it into our
	// error text.
	srv := aitest.NewReplayServer(t, "/v1/messages", aitest.Fail(401, nil,
		[]byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)))
	_, err := newProvider(t, srv).Complete(context.Background(), aitest.SampleRequest(t))
	if err == nil || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "authentication_error") {
		t.Fatalf("err = %v", err)
	}
	if got := srv.Header(0).Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
}

func TestEnvironmentIsIgnored(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	srv := aitest.NewReplayServer(t, "/v1/messages", aitest.OK(aitest.Fixture(t, "anthropic_response_tool_use_only.json")))
	if _, err := newProvider(t, srv).Complete(context.Background(), aitest.SampleRequest(t)); err != nil {
		t.Fatal(err)
	}
	if got := srv.Header(0).Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q, want the configured key only", got)
	}
}

func TestRegistered(t *testing.T) {
	cfg := ai.Defaults()
	cfg.Provider, cfg.APIKey = "anthropic", testKey
	if _, err := ai.New(cfg); err != nil {
		t.Fatalf("ai.New with provider anthropic: %v", err)
	}
}

// TestShared runs the tests every provider shares.
func TestShared(t *testing.T) {
	rl := aitest.LoadErrorFixture(t, "anthropic_error_429_rate_limit.json")
	aitest.TestProvider(t, aitest.ProviderUnderTest{
		Path:             "/v1/messages",
		Success:          aitest.Fixture(t, "anthropic_response_tool_use_only.json"),
		RateLimitHeaders: rl.Headers,
		RateLimitBody:    rl.Body,
		New: func(t *testing.T, srv *aitest.ReplayServer, mutate ...func(*ai.Config)) ai.Provider {
			return newProvider(t, srv, mutate...)
		},
	})
}
