package aitest

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"phonepilot/plan/ai"
)

// Reply writes one scripted HTTP response.
type Reply func(w http.ResponseWriter)

// OK answers 200 with a JSON body.
func OK(body []byte) Reply {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}
}

// Fail answers with an error response: status, headers (a recorded
// content-length or set-cookie is left out: the body here is not the
// recorded one) and a JSON body.
func Fail(status int, headers map[string]string, body []byte) Reply {
	return func(w http.ResponseWriter) {
		for k, v := range headers {
			if strings.EqualFold(k, "content-length") || strings.EqualFold(k, "set-cookie") {
				continue
			}
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

// ReplayServer is a loopback model API for one provider's tests: it answers
// the n-th POST to its path with the n-th scripted Reply (the last one again
// once the script runs out) and records what each request carried.
type ReplayServer struct {
	*httptest.Server
	mu       sync.Mutex
	bodies   [][]byte
	headers  []http.Header
	arrivals []time.Time
}

// NewReplayServer starts a ReplayServer answering POST path; it stops when
// the test ends. Any other method or path gets a 404.
func NewReplayServer(t testing.TB, path string, replies ...Reply) *ReplayServer {
	t.Helper()
	if len(replies) == 0 {
		t.Fatal("NewReplayServer: no replies")
	}
	s := &ReplayServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, body)
		s.headers = append(s.headers, r.Header.Clone())
		s.arrivals = append(s.arrivals, time.Now())
		s.mu.Unlock()
		if r.Method != http.MethodPost || r.URL.Path != path {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		replies[min(n, len(replies)-1)](w)
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests is how many requests arrived so far.
func (s *ReplayServer) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

// Body is the body of request i (0-based).
func (s *ReplayServer) Body(i int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[i]
}

// Header is the headers of request i (0-based).
func (s *ReplayServer) Header(i int) http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.headers[i]
}

// Gap is the time between the arrivals of requests i and j.
func (s *ReplayServer) Gap(i, j int) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.arrivals[j].Sub(s.arrivals[i])
}

// ProviderUnderTest is what the shared provider tests need of one provider.
type ProviderUnderTest struct {
	// Path is the API path the provider posts to ("/v1/messages").
	Path string
	// Success is a recorded 200 body with exactly one tool call.
	Success []byte
	// RateLimitHeaders and RateLimitBody are a recorded 429 response.
	RateLimitHeaders map[string]string
	RateLimitBody    []byte
	// New builds the provider against srv with the test's defaults, then
	// applies mutate to the Config.
	New func(t *testing.T, srv *ReplayServer, mutate ...func(*ai.Config)) ai.Provider
}

// TestProvider runs the tests every provider shares, each as a subtest.
func TestProvider(t *testing.T, p ProviderUnderTest) {
	t.Run("SlowAttemptTimesOutAndIsRetried", func(t *testing.T) { slowAttemptTimesOutAndIsRetried(t, p) })
	t.Run("429HonoursRetryAfter", func(t *testing.T) { rateLimitHonoursRetryAfter(t, p) })
	t.Run("LocalServerWithoutKey", func(t *testing.T) { localServerWithoutKey(t, p) })
}

// slowAttemptTimesOutAndIsRetried checks that Config.Timeout bounds one
// attempt, not the whole call: an attempt slower than it is abandoned and
// retried.
func slowAttemptTimesOutAndIsRetried(t *testing.T, p ProviderUnderTest) {
	slow := func(w http.ResponseWriter) {
		time.Sleep(600 * time.Millisecond)
		OK(p.Success)(w)
	}
	srv := NewReplayServer(t, p.Path, slow, OK(p.Success))
	r, err := p.New(t, srv, func(c *ai.Config) { c.Timeout = 150 * time.Millisecond }).Complete(context.Background(), SampleRequest(t))
	if err != nil || len(r.ToolCalls) != 1 || srv.Requests() != 2 {
		t.Fatalf("reply %+v err %v after %d requests; want the timed-out attempt retried", r, err, srv.Requests())
	}
}

// rateLimitHonoursRetryAfter checks that a 429 is retried after the server's
// retry-after-ms, and that the retry says it is one.
func rateLimitHonoursRetryAfter(t *testing.T, p ProviderUnderTest) {
	headers := maps.Clone(p.RateLimitHeaders)
	if headers == nil {
		headers = map[string]string{}
	}
	headers["retry-after-ms"] = "300"
	srv := NewReplayServer(t, p.Path, Fail(http.StatusTooManyRequests, headers, p.RateLimitBody), OK(p.Success))
	r, err := p.New(t, srv).Complete(context.Background(), SampleRequest(t))
	if err != nil || len(r.ToolCalls) != 1 || srv.Requests() != 2 {
		t.Fatalf("reply %+v err %v after %d requests, want success on the retry", r, err, srv.Requests())
	}
	if gap := srv.Gap(0, 1); gap < 300*time.Millisecond {
		t.Errorf("retried after %v, want at least the 300 ms retry-after", gap)
	}
	if got := srv.Header(1).Get("X-Stainless-Retry-Count"); got != "1" {
		t.Errorf("retry count header = %q, want 1", got)
	}
}

// localServerWithoutKey checks that an empty APIKey (a local server)
// works and sends no Authorization header.
func localServerWithoutKey(t *testing.T, p ProviderUnderTest) {
	srv := NewReplayServer(t, p.Path, OK(p.Success))
	if _, err := p.New(t, srv, func(c *ai.Config) { c.APIKey = "" }).Complete(context.Background(), SampleRequest(t)); err != nil {
		t.Fatal(err)
	}
	if got := srv.Header(0).Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none", got)
	}
}
