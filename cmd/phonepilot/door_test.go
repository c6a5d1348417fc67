package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// startListening runs `phonepilot ARGS…` in-process with run as the
// command's RunE (given the ready callback) and returns the bound address;
// the command is stopped when the test ends.
func startListening(t *testing.T, name string, args []string, run func(cmd *cobra.Command, ready func(string)) error) string {
	t.Helper()
	t.Setenv("PHONEPILOT_CONFIG", "")
	t.Setenv("PHONEPILOT_TOKEN", "")
	root := newRootCmd()
	sub, _, err := root.Find([]string{name})
	if err != nil || sub.Name() != name {
		t.Fatalf("no %s command: %v", name, err)
	}
	started := make(chan string, 1)
	sub.RunE = func(cmd *cobra.Command, _ []string) error {
		return run(cmd, func(addr string) { started <- addr })
	}
	var out bytes.Buffer
	root.SetOut(io.Discard)
	root.SetErr(&out)
	stdin, stdinW := io.Pipe() // mcp's stdio session stays open until the test ends
	root.SetIn(stdin)
	root.SetArgs(append([]string{name}, args...))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		stdinW.Close()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Errorf("%s did not stop", name)
		}
	})
	select {
	case addr := <-started:
		return addr
	case err := <-done:
		t.Fatalf("%s exited: %v\n%s", name, err, out.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not listen", name)
	}
	return ""
}

// knock sends one request to addr with the Host, headers and body given
// and returns the status.
func knock(t *testing.T, addr, method, path, host string, header map[string]string, body string) int {
	t.Helper()
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, "http://"+addr+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// Every listener phonepilot opens (serve, mcp --http with /mcp beside the
// API, mcp --api, sim --control, sim --wda) has the door: a Host it is not known by is
// 421 on every path, a state-changing request from another origin is 403,
// one whose body is not JSON is 415; its own requests pass.
func TestEveryListenerHasTheDoor(t *testing.T) {
	db := func() string { return filepath.Join(t.TempDir(), "pp.db") }
	listeners := map[string]struct {
		addr  string
		read  string   // a GET that answers 200
		posts []string // state-changing paths
	}{
		"serve": {startListening(t, "serve", []string{"--addr", "127.0.0.1:0", "--db", db()}, func(cmd *cobra.Command, ready func(string)) error {
			return runServe(cmd, serveOptions{}, ready)
		}), "/healthz", []string{"/v1/tasks", "/v1/flows/run", "/v1/tasks/x/approve"}},
		"mcp --http": {startListening(t, "mcp", []string{"--http", "127.0.0.1:0", "--db", db()}, func(cmd *cobra.Command, ready func(string)) error {
			return runMCP(cmd, mcpOptions{http: "127.0.0.1:0"}, ready)
		}), "/healthz", []string{"/mcp", "/v1/tasks", "/v1/tasks/x/approve"}},
		"mcp --api": {startListening(t, "mcp", []string{"--api", "127.0.0.1:0", "--db", db()}, func(cmd *cobra.Command, ready func(string)) error {
			return runMCP(cmd, mcpOptions{apiAddr: "127.0.0.1:0"}, ready)
		}), "/healthz", []string{"/v1/tasks", "/v1/tasks/x/answer"}},
		"sim --control": {startListening(t, "sim", []string{"--adb", "127.0.0.1:0", "--control", "127.0.0.1:0"}, func(cmd *cobra.Command, ready func(string)) error {
			return runSim(cmd.Context(), simOptions{adbAddr: "127.0.0.1:0", controlAddr: "127.0.0.1:0", locale: "en", seed: 1, size: "1080x2400"},
				io.Discard, io.Discard, func(_, control, _ string) { ready(control) })
		}), "/state", []string{"/reset"}},
		"sim --wda": {startListening(t, "sim", []string{"--wda", "127.0.0.1:0"}, func(cmd *cobra.Command, ready func(string)) error {
			return runSim(cmd.Context(), simOptions{wdaAddr: "127.0.0.1:0", locale: "en", seed: 1, size: "1080x2400"},
				io.Discard, io.Discard, func(_, _, wda string) { ready(wda) })
		}), "/status", []string{"/session", "/wda/homescreen"}},
	}
	for name, l := range listeners {
		_, port, _ := net.SplitHostPort(l.addr)
		if got := knock(t, l.addr, "GET", l.read, "localhost:"+port, nil, ""); got != 200 {
			t.Errorf("%s: GET %s as localhost:%s = %d, want 200", name, l.read, port, got)
		}
		for _, host := range []string{"rebind.example:" + port, "localhost:" + port + "0"} {
			for _, p := range append([]string{l.read}, l.posts...) {
				if got := knock(t, l.addr, "GET", p, host, nil, ""); got != http.StatusMisdirectedRequest {
					t.Errorf("%s: GET %s with Host %s = %d, want 421", name, p, host, got)
				}
				if got := knock(t, l.addr, "POST", p, host, map[string]string{"Content-Type": "application/json"}, "{}"); got != http.StatusMisdirectedRequest {
					t.Errorf("%s: POST %s with Host %s = %d, want 421", name, p, host, got)
				}
			}
		}
		for _, p := range l.posts {
			for _, h := range []map[string]string{
				{"Origin": "http://127.0.0.1:1", "Content-Type": "application/json"},
				{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"},
			} {
				if got := knock(t, l.addr, "POST", p, "", h, `{"goal":"buy"}`); got != http.StatusForbidden {
					t.Errorf("%s: POST %s with %v = %d, want 403", name, p, h, got)
				}
			}
			for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded"} {
				if got := knock(t, l.addr, "POST", p, "", map[string]string{"Content-Type": ct}, `{"goal":"buy"}`); got != http.StatusUnsupportedMediaType {
					t.Errorf("%s: POST %s as %s = %d, want 415", name, p, ct, got)
				}
			}
		}
	}
}
