package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// surfaceClient talks to a served phonepilot only through its public HTTP
// surface, as raw bytes and loosely decoded JSON, so the tests built on it
// hold whatever the packages behind it look like.
type surfaceClient struct {
	t    *testing.T
	base string
	http *http.Client
}

func newSurfaceClient(t *testing.T, base string) *surfaceClient {
	return &surfaceClient{t: t, base: base, http: &http.Client{Timeout: 30 * time.Second}}
}

// do sends a request and returns the status and the whole body.
func (c *surfaceClient) do(method, path string, body any) (int, []byte) {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return resp.StatusCode, out
}

// object GETs path and decodes a JSON object.
func (c *surfaceClient) object(path string) map[string]any {
	c.t.Helper()
	code, body := c.do(http.MethodGet, path, nil)
	if code != http.StatusOK {
		c.t.Fatalf("GET %s = %d: %s", path, code, body)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		c.t.Fatalf("GET %s: not a JSON object: %v\n%.500s", path, err, body)
	}
	return m
}

// submit POSTs a task and returns its id.
func (c *surfaceClient) submit(goal, device string, extra map[string]any) string {
	c.t.Helper()
	req := map[string]any{"goal": goal, "device": device}
	for k, v := range extra {
		req[k] = v
	}
	code, body := c.do(http.MethodPost, "/v1/tasks", req)
	if code != http.StatusAccepted && code != http.StatusCreated {
		c.t.Fatalf("POST /v1/tasks = %d: %s", code, body)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		c.t.Fatalf("POST /v1/tasks: %v\n%s", err, body)
	}
	id, _ := m["id"].(string)
	if id == "" {
		c.t.Fatalf("POST /v1/tasks answered no id: %s", body)
	}
	return id
}

// finalStatuses are the states a task does not leave.
var finalStatuses = map[string]bool{"completed": true, "failed": true, "cancelled": true, "interrupted": true}

// waitFinal polls the task until it is in a final state or limit passes,
// and returns it (with the status it had at the limit, when it is not final).
func (c *surfaceClient) waitFinal(id string, limit time.Duration) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		task := c.object("/v1/tasks/" + id)
		if st, _ := task["status"].(string); finalStatuses[st] || time.Now().After(deadline) {
			return task
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// str reads a string field of a loosely decoded object ("" when absent).
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// describeTask is a one-line summary for failure messages.
func describeTask(m map[string]any) string {
	return fmt.Sprintf("status %q cause %q reason %q", str(m, "status"), str(m, "cause"), strings.TrimSpace(str(m, "reason")))
}
