package api

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"phonepilot/lifecycle"
)

// The API's own cost on SQLite, with a runner that records nothing: what a
// client waits for besides the phone. go test -run - -bench . ./api
func BenchmarkCreateTask(b *testing.B) {
	h := newHarness(b, newFakeRunner(0), nil)
	body := `{"goal":"open Taobao and search Mac mini","device":"sim"}`
	b.ResetTimer()
	for b.Loop() {
		resp, err := http.Post(h.ts.URL+"/v1/tasks", "application/json", strings.NewReader(body))
		if err != nil || resp.StatusCode != http.StatusAccepted {
			b.Fatalf("POST: %v %v", err, resp)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func BenchmarkGetTask(b *testing.B) {
	h := newHarness(b, newFakeRunner(2), nil)
	task := h.create("open Taobao and search Mac mini", "sim")
	h.waitStatus(task.ID, lifecycle.Completed)
	b.ResetTimer()
	for b.Loop() {
		resp, err := http.Get(h.ts.URL + "/v1/tasks/" + task.ID)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("GET: %v %v", err, resp)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func BenchmarkListTasks(b *testing.B) {
	h := newHarness(b, newFakeRunner(0), nil)
	for range 100 {
		h.create("open Taobao and search Mac mini", "sim")
	}
	b.ResetTimer()
	for b.Loop() {
		resp, err := http.Get(h.ts.URL + "/v1/tasks?limit=50")
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("GET: %v %v", err, resp)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
