package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"phonepilot/internal/npmtest"
	"phonepilot/mcpserver"
)

// Bound beyond loopback without a token, mcp --http refuses to start, with
// serve's check and message.
func TestMCPRefusesOpenBindWithoutToken(t *testing.T) {
	t.Setenv("PHONEPILOT_TOKEN", "")
	code := run(t.Context(), []string{"mcp", "--http", "0.0.0.0:0", "--db", filepath.Join(t.TempDir(), "x.db")})
	if code != 2 {
		t.Errorf("mcp --http 0.0.0.0:0 without a token exited %d; want 2", code)
	}
}

// mcpProcess is `phonepilot mcp --http` as a child process.
type mcpProcess struct {
	url   string
	token string
}

// startMCPHTTP starts it on the simulator (sim unless extra names another
// --device) with the token.
func startMCPHTTP(t *testing.T, token string, extra ...string) *mcpProcess {
	t.Helper()
	bin := buildPhonepilot(t)
	ctx, cancel := context.WithCancel(context.Background())
	args := append([]string{"mcp", "--http", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "mcp.db"), "--device", "sim"}, extra...)
	if token != "" {
		args = append(args, "--token", token)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "PHONEPILOT_CONFIG=", "PHONEPILOT_TOKEN=")
	stderr := &safeBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "serving on ") {
				lines <- sc.Text()
			}
		}
	}()
	select {
	case l := <-lines:
		return &mcpProcess{url: l[strings.Index(l, "http://"):], token: token}
	case <-time.After(30 * time.Second):
		t.Fatalf("mcp --http did not start:\n%s", stderr.String())
	}
	return nil
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func (p *mcpProcess) connect(t *testing.T, name string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: p.url, HTTPClient: &http.Client{Transport: bearer{p.token, http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", name, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// Streamable HTTP: the bearer token is required as for serve; two sessions
// at once, each with its own lease; the web page and API beside /mcp.
func TestMCPOverHTTP(t *testing.T) {
	const token = "0123456789abcdef-mcp"
	p := startMCPHTTP(t, token)

	req, _ := http.NewRequest("POST", p.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /mcp without the token: %d; want 401", resp.StatusCode)
	}

	a, b := p.connect(t, "client-a"), p.connect(t, "client-b")
	if out, isErr := callText(t, a, "observe", nil); isErr || !strings.Contains(out, "Screen 1080x2400") {
		t.Fatalf("a observes sim: %s", out)
	}
	if out, isErr := callText(t, b, "observe", nil); !isErr || !strings.Contains(out, "busy, held by") || !strings.Contains(out, "client-a") {
		t.Errorf("b observes sim while a holds it: %s", out)
	}
	if out, isErr := callText(t, b, "observe", map[string]any{"device": "sim:b"}); isErr || !strings.Contains(out, "observation 1 of sim:b") {
		t.Errorf("b observes sim:b: %s", out)
	}
	if out, isErr := callText(t, a, "launch_app", map[string]any{"app": "Settings"}); isErr || !strings.Contains(out, "the screen changed") {
		t.Errorf("a launches Settings: %s", out)
	}

	base := strings.TrimSuffix(p.url, "/mcp")
	for path, want := range map[string]int{"/": 200, "/v1/tasks": 401} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d; want %d", path, resp.StatusCode, want)
		}
	}
}

// tsClientDir is the TypeScript client's sources.
const tsClientDir = "../../mcpserver/testdata/tsclient"

// tsClient installs the client from its lock file (internal/npmtest).
func tsClient(t *testing.T) string {
	t.Helper()
	return npmtest.Dir(t, "tsclient", tsClientDir, []string{"package.json", "package-lock.json", "client.mjs", "bench.mjs"}, "@modelcontextprotocol/sdk")
}

type tsSummary struct {
	OK              bool           `json:"ok"`
	Error           string         `json:"error"`
	Tools           []string       `json:"tools"`
	ResultsInAnswer bool           `json:"resultsInAnswer"`
	Progress        int            `json:"progress"`
	TaskCompleted   bool           `json:"taskCompleted"`
	MS              map[string]int `json:"ms"`
}

func runTSClient(t *testing.T, dir string, args ...string) tsSummary {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{"client.mjs"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PHONEPILOT_CONFIG=", "PHONEPILOT_TOKEN=")
	out, err := cmd.CombinedOutput()
	t.Logf("TypeScript client %s:\n%s", args[0], out)
	var s tsSummary
	for _, l := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(l, "SUMMARY "); ok {
			if jerr := json.Unmarshal([]byte(rest), &s); jerr != nil {
				t.Fatalf("summary: %v", jerr)
			}
		}
	}
	if err != nil || !s.OK {
		t.Fatalf("TypeScript client over %s: %v: %s", args[0], err, s.Error)
	}
	return s
}

// The real TypeScript MCP client from npm, over stdio and over streamable
// HTTP against the simulator: list the tools, observe, tap the search box,
// type a query and submit, see the results in that answer, and run_task
// "open Settings and scroll down" to completion with its progress.
func TestMCPWithTheTypeScriptClient(t *testing.T) {
	if os.Getenv("PHONEPILOT_INTEGRATION") != "1" {
		t.Skip("set PHONEPILOT_INTEGRATION=1 (needs node and npm; installs @modelcontextprotocol/sdk)")
	}
	dir := tsClient(t)
	bin := buildPhonepilot(t)
	// The server's own tools and every action tool of the registry.
	want := mcpserver.ToolNames()
	check := func(over string, s tsSummary) {
		if len(s.Tools) != len(want) || !s.ResultsInAnswer || !s.TaskCompleted || s.Progress < 2 {
			t.Errorf("over %s: %+v", over, s)
		}
		for _, name := range want {
			if !slices.Contains(s.Tools, name) {
				t.Errorf("over %s: tools/list lacks %s: %v", over, name, s.Tools)
			}
		}
	}
	check("stdio", runTSClient(t, dir, "stdio", bin, "mcp", "--device", "sim", "--db", filepath.Join(t.TempDir(), "stdio.db")))
	p := startMCPHTTP(t, "0123456789abcdef-ts")
	check("http", runTSClient(t, dir, "http", p.url, p.token))
}

// In stdio mode stdout is the protocol: every line a JSON-RPC message, the
// logs on stderr.
func TestMCPStdioStdoutIsProtocolOnly(t *testing.T) {
	bin := buildPhonepilot(t)
	reqs := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`this line is not JSON`, // answered with a parse error; the session goes on
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"observe","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"launch_app","arguments":{"app":"Settings"}}}`,
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "mcp", "--device", "sim", "--db", filepath.Join(t.TempDir(), "s.db"))
	cmd.Env = append(os.Environ(), "PHONEPILOT_CONFIG=")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &safeBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if _, err := stdin.Write([]byte(r + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	// Read until the last request is answered, then end the session.
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	ids := map[float64]bool{}
	parseErrors := 0
	for !ids[3] && sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil || m["jsonrpc"] != "2.0" {
			t.Errorf("stdout line is not a JSON-RPC message: %q", sc.Text())
		}
		if id, ok := m["id"].(float64); ok {
			ids[id] = true
		}
		if e, ok := m["error"].(map[string]any); ok && e["code"] == float64(-32700) && m["id"] == nil {
			parseErrors++
		}
	}
	if parseErrors != 1 {
		t.Errorf("%d parse errors answered for the one line that is not JSON", parseErrors)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("mcp after its input ended: %v\n%s", err, stderr.String())
	}
	if !ids[1] || !ids[2] || !ids[3] {
		t.Errorf("answers to %v of requests 1-3", ids)
	}
	if !strings.Contains(stderr.String(), `"msg":"mcp session ended"`) {
		t.Errorf("the server's log lines are not on stderr:\n%s", stderr.String())
	}
}
