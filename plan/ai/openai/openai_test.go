package openai

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"phonepilot/plan/ai"
	"phonepilot/plan/ai/aitest"
)

const testKey = "sk-proj-test-0123456789abcdef"

func newProvider(t *testing.T, srv *aitest.ReplayServer, mutate ...func(*ai.Config)) *Provider {
	t.Helper()
	cfg := ai.Defaults()
	cfg.Provider, cfg.APIKey, cfg.BaseURL = Name, testKey, srv.URL+"/v1"
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

// toolCalls rewrites a recorded tool-call reply to call our tools, keeping
// the rest of the real body.
func toolCalls(t *testing.T, calls ...[2]string) []byte {
	t.Helper()
	var resp map[string]any
	if err := json.Unmarshal(aitest.Fixture(t, "openai_response_tool_call_single.json"), &resp); err != nil {
		t.Fatal(err)
	}
	var tcs []any
	for i, c := range calls {
		tcs = append(tcs, map[string]any{"id": "call_" + string(rune('a'+i)), "type": "function",
			"function": map[string]any{"name": c[0], "arguments": c[1]}})
	}
	msg := resp["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	msg["tool_calls"] = tcs
	b, _ := json.Marshal(resp)
	return b
}

func TestRequestBodyGolden(t *testing.T) {
	srv := aitest.NewReplayServer(t, "/v1/chat/completions", aitest.OK(aitest.Fixture(t, "openai_response_tool_call_single.json")))
	req := aitest.SampleRequest(t)
	aitest.CheckPairing(t, req.Messages)
	if _, err := newProvider(t, srv).Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	body := srv.Body(0)
	aitest.Golden(t, "request_sample.golden.json", aitest.PrettyJSON(t, body))

	var got struct {
		Model             string `json:"model"`
		ToolChoice        any    `json:"tool_choice"`
		ParallelToolCalls *bool  `json:"parallel_tool_calls"`
		MaxTokens         int    `json:"max_tokens"`
		Tools             []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string         `json:"name"`
				Parameters map[string]any `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		Messages []struct {
			Role       string `json:"role"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.ToolChoice != "required" || got.ParallelToolCalls == nil || *got.ParallelToolCalls {
		t.Errorf("tool_choice %v parallel_tool_calls %v, want required and false", got.ToolChoice, got.ParallelToolCalls)
	}
	if got.MaxTokens != 512 {
		t.Errorf("max_tokens = %d, want 512 for a compatible server", got.MaxTokens)
	}
	if len(got.Tools) != 2 || got.Tools[0].Type != "function" || got.Tools[0].Function.Parameters["additionalProperties"] != false {
		t.Errorf("tools = %+v", got.Tools)
	}
	roles := []string{}
	for _, m := range got.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,user" {
		t.Fatalf("roles = %v, want system,user,assistant,tool,user", roles)
	}
	if tc := got.Messages[2].ToolCalls; len(tc) != 1 || tc[0].ID != "step_1" || tc[0].Function.Arguments != `{"app":"Taobao"}` {
		t.Errorf("assistant tool calls = %+v", tc)
	}
	if got.Messages[3].ToolCallID != "step_1" {
		t.Errorf("tool message answers %q, want step_1", got.Messages[3].ToolCallID)
	}
	parts, _ := got.Messages[4].Content.([]any)
	img, _ := parts[0].(map[string]any)
	url, _ := img["image_url"].(map[string]any)["url"].(string)
	if img["type"] != "image_url" || !strings.HasPrefix(url, "data:image/png;base64,iVBOR") {
		t.Errorf("image part = %v", parts[0])
	}
	if h := srv.Header(0).Get("Authorization"); h != "Bearer "+testKey {
		t.Errorf("Authorization = %q", h)
	}
}

func TestHostedAPIUsesMaxCompletionTokens(t *testing.T) {
	cfg := ai.Defaults()
	cfg.APIKey = testKey
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	params, err := p.params(aitest.SampleRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(params)
	if !strings.Contains(string(b), `"max_completion_tokens":512`) || strings.Contains(string(b), `"max_tokens"`) {
		t.Errorf("hosted request = %s", b)
	}
}

func TestRepliesParse(t *testing.T) {
	cases := []struct {
		name, fixture string
		body          []byte
		stop          ai.StopReason
		calls         []string
		refusal       string
		in, out       int64
	}{
		{name: "single", fixture: "openai_response_tool_call_single.json", stop: ai.StopToolUse,
			calls: []string{`GetWeatherArgs {"city":"Edinburgh","country":"UK","units":"c"}`}, in: 76, out: 24},
		{name: "parallel", fixture: "openai_response_tool_calls_parallel.json", stop: ai.StopToolUse,
			calls: []string{`GetWeatherArgs {"city":"Edinburgh","country":"GB","units":"c"}`, `get_stock_price {"ticker":"AAPL","exchange":"NASDAQ"}`}, in: 149, out: 60},
		{name: "spec", fixture: "openai_response_tool_calls_spec_example.json", stop: ai.StopToolUse},
		{name: "refusal", fixture: "openai_response_refusal.json", stop: ai.StopRefusal,
			refusal: "I'm very sorry, but I can't assist with that.", in: 79, out: 12},
		{name: "length", fixture: "openai_response_finish_length.json", stop: ai.StopMaxTokens, in: 79, out: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := aitest.NewReplayServer(t, "/v1/chat/completions", aitest.OK(aitest.Fixture(t, c.fixture)))
			r, err := newProvider(t, srv).Complete(context.Background(), aitest.SampleRequest(t))
			if err != nil {
				t.Fatal(err)
			}
			if r.Stop != c.stop || r.Refusal != c.refusal {
				t.Errorf("stop %s refusal %q, want %s %q", r.Stop, r.Refusal, c.stop, c.refusal)
			}
			if c.calls != nil {
				var got []string
				for _, tc := range r.ToolCalls {
					got = append(got, tc.Name+" "+string(tc.Args))
				}
				if strings.Join(got, "|") != strings.Join(c.calls, "|") {
					t.Errorf("calls = %q, want %q", got, c.calls)
				}
			} else if c.stop == ai.StopToolUse && len(r.ToolCalls) != 1 {
				t.Errorf("calls = %+v, want one", r.ToolCalls)
			}
			if c.in != 0 && (r.Usage.Input != c.in || r.Usage.Output != c.out) {
				t.Errorf("usage = %+v", r.Usage)
			}
		})
	}
}

func TestInvalidArgumentsArePassedOn(t *testing.T) {
	srv := aitest.NewReplayServer(t, "/v1/chat/completions", aitest.OK(toolCalls(t, [2]string{"tap", `{"element": 3`})))
	r, err := newProvider(t, srv).Complete(context.Background(), aitest.SampleRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ToolCalls) != 1 || json.Valid(r.ToolCalls[0].Args) || string(r.ToolCalls[0].Args) != `{"element": 3` {
		t.Errorf("tool call = %+v, want the broken arguments as sent (the planner re-asks)", r.ToolCalls)
	}
}

func TestNoToolCall(t *testing.T) {
	srv := aitest.NewReplayServer(t, "/v1/chat/completions", aitest.OK([]byte(`{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Done!","refusal":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`)))
	r, err := newProvider(t, srv).Complete(context.Background(), aitest.SampleRequest(t))
	if err != nil || len(r.ToolCalls) != 0 || r.Stop != ai.StopEndTurn || r.Text != "Done!" {
		t.Errorf("reply %+v err %v", r, err)
	}
}

func TestToolCallsWithStopFinishReason(t *testing.T) {
	// Some compatible servers report "stop" beside tool calls.
	body := strings.Replace(string(toolCalls(t, [2]string{"tap", `{"element":3}`})), `"tool_calls","index"`, `"stop","index"`, 1)
	body = strings.Replace(body, `"finish_reason":"tool_calls"`, `"finish_reason":"stop"`, 1)
	srv := aitest.NewReplayServer(t, "/v1/chat/completions", aitest.OK([]byte(body)))
	r, err := newProvider(t, srv).Complete(context.Background(), aitest.SampleRequest(t))
	if err != nil || len(r.ToolCalls) != 1 || r.Stop != ai.StopToolUse || r.RawStop != "stop" {
		t.Errorf("reply %+v err %v", r, err)
	}
}

func Test429ExhaustedGivesTheProvidersMessage(t *testing.T) {
	h := aitest.LoadErrorFixture(t, "openai_error_429_headers.json")
	h.Headers["retry-after-ms"] = "10"
	srv := aitest.NewReplayServer(t, "/v1/chat/completions", aitest.Fail(429, h.Headers, aitest.Fixture(t, "openai_error_429_rate_limit_tokens.json")))
	_, err := newProvider(t, srv).Complete(context.Background(), aitest.SampleRequest(t))
	var pe *ai.ProviderError
	if !errors.As(err, &pe) || pe.Status != 429 || pe.Type != "rate_limit_exceeded" || !strings.HasPrefix(pe.Message, "Rate limit reached for gpt-4o-mini") {
		t.Fatalf("err = %v", err)
	}
	if srv.Requests() != 2 {
		t.Errorf("requests = %d, want 2", srv.Requests())
	}
}

func Test429RetryAfterBeyondTheCapStopsRetrying(t *testing.T) {
	// openai-go does not wait longer than MaxRetryDelay: a longer
	// retry-after ends the call with the provider's error at once.
	srv := aitest.NewReplayServer(t, "/v1/chat/completions", aitest.Fail(429, map[string]string{"retry-after": "16"}, aitest.Fixture(t, "openai_error_429_rate_limit_tokens.json")))
	_, err := newProvider(t, srv, func(c *ai.Config) { c.MaxRetryDelay = time.Second }).Complete(context.Background(), aitest.SampleRequest(t))
	var pe *ai.ProviderError
	if !errors.As(err, &pe) || pe.Status != 429 || pe.Type != "rate_limit_exceeded" {
		t.Fatalf("err = %v, want the provider's 429", err)
	}
	// Not asked again: the 16 s were neither waited for nor cut short.
	if n := srv.Requests(); n != 1 {
		t.Errorf("requests = %d, want 1: a retry-after beyond the cap ends the call", n)
	}
}

func Test529And500AreRetried(t *testing.T) {
	for _, status := range []int{529, 500, 503} {
		srv := aitest.NewReplayServer(t, "/v1/chat/completions",
			aitest.Fail(status, map[string]string{"retry-after-ms": "10"}, []byte(`{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":null}}`)),
			aitest.OK(aitest.Fixture(t, "openai_response_tool_call_single.json")))
		r, err := newProvider(t, srv).Complete(context.Background(), aitest.SampleRequest(t))
		if err != nil || len(r.ToolCalls) != 1 || srv.Requests() != 2 {
			t.Errorf("status %d: reply %+v err %v after %d requests", status, r, err, srv.Requests())
		}
	}
}

func Test500ExhaustsRetries(t *testing.T) {
	srv := aitest.NewReplayServer(t, "/v1/chat/completions", aitest.Fail(500, map[string]string{"retry-after-ms": "10", "x-request-id": "req_abc"}, []byte(`{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`)))
	_, err := newProvider(t, srv, func(c *ai.Config) { c.MaxRetries = 2 }).Complete(context.Background(), aitest.SampleRequest(t))
	var pe *ai.ProviderError
	if !errors.As(err, &pe) || pe.Status != 500 || pe.Type != "server_error" || pe.RequestID != "req_abc" ||
		!strings.Contains(err.Error(), "The server had an error") {
		t.Fatalf("err = %v", err)
	}
	if srv.Requests() != 3 {
		t.Errorf("requests = %d, want 3", srv.Requests())
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	srv := aitest.NewReplayServer(t, "/v1/chat/completions", aitest.Fail(401, nil, []byte(`{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)))
	_, err := newProvider(t, srv).Complete(context.Background(), aitest.SampleRequest(t))
	if err == nil || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "invalid_api_key") {
		t.Fatalf("err = %v", err)
	}
}

func TestEnvironmentIsIgnored(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_ORG_ID", "org-from-env")
	srv := aitest.NewReplayServer(t, "/v1/chat/completions", aitest.OK(aitest.Fixture(t, "openai_response_tool_call_single.json")))
	if _, err := newProvider(t, srv).Complete(context.Background(), aitest.SampleRequest(t)); err != nil {
		t.Fatal(err)
	}
	h := srv.Header(0)
	if h.Get("Authorization") != "Bearer "+testKey || h.Get("OpenAI-Organization") != "" {
		t.Errorf("headers: Authorization=%q OpenAI-Organization=%q", h.Get("Authorization"), h.Get("OpenAI-Organization"))
	}
}

func TestBadBaseURL(t *testing.T) {
	cfg := ai.Defaults()
	cfg.BaseURL = "localhost:11434"
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "not an absolute URL") {
		t.Errorf("err = %v", err)
	}
}

func TestRegistered(t *testing.T) {
	cfg := ai.Defaults()
	cfg.Provider, cfg.BaseURL = "openai", "http://127.0.0.1:11434/v1"
	if _, err := ai.New(cfg); err != nil {
		t.Fatalf("ai.New with provider openai and a local base URL: %v", err)
	}
}

// TestShared runs the tests every provider shares.
func TestShared(t *testing.T) {
	aitest.TestProvider(t, aitest.ProviderUnderTest{
		Path:             "/v1/chat/completions",
		Success:          aitest.Fixture(t, "openai_response_tool_call_single.json"),
		RateLimitHeaders: aitest.LoadErrorFixture(t, "openai_error_429_headers.json").Headers,
		RateLimitBody:    aitest.Fixture(t, "openai_error_429_rate_limit_tokens.json"),
		New: func(t *testing.T, srv *aitest.ReplayServer, mutate ...func(*ai.Config)) ai.Provider {
			return newProvider(t, srv, mutate...)
		},
	})
}
