package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"phonepilot/lifecycle"
	"phonepilot/storage"
)

// A body must be exactly one JSON object: data after it (garbage, a second
// object) is refused before any task is created, and a non-object body is
// named in JSON's words, not Go's.
func TestBodyMustBeOneJSONObject(t *testing.T) {
	h := newHarness(t, newFakeRunner(0), nil)
	for _, tc := range []struct {
		body, want string
	}{
		{`{"goal":"open Settings"}garbage`, "after the JSON object"},
		{`{"goal":"open Settings"}{"goal":"open Taobao"}`, "after the JSON object"},
		{`{"goal":"open Settings"} 7`, "after the JSON object"},
		{`[{"goal":"open Settings"}]`, "must be a JSON object {...}, got an array"},
		{`"open Settings"`, "got a string"},
		{`42`, "got a number"},
		{`null`, "got null"},
		{`true`, "got a boolean"},
		{`{"goal":"g","max_steps":"ten"}`, "must be a whole number, got string"},
		{`{"goal":["g"]}`, "must be a string, got array"},
		{`{"goal":"g"`, "cut short"},
	} {
		var e apiError
		resp := h.do("POST", "/v1/tasks", tc.body, &e)
		if resp.StatusCode != http.StatusBadRequest || e.Error.Code != "bad_request" || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("body %s: %d %+v, want 400 saying %q", tc.body, resp.StatusCode, e.Error, tc.want)
		}
		if strings.Contains(e.Error.Message, "api.") || strings.Contains(e.Error.Message, "taskRequest") {
			t.Errorf("body %s: message %q names a Go type", tc.body, e.Error.Message)
		}
	}
	page, err := h.store.ListTasks(t.Context(), storage.Query{})
	if err != nil || len(page.Tasks) != 0 {
		t.Errorf("refused bodies created %d tasks (%v)", len(page.Tasks), err)
	}
	// Whitespace around the one object is fine.
	var task storage.Task
	if resp := h.do("POST", "/v1/tasks", " \n{\"goal\":\"open Settings\"}\r\n\t ", &task); resp.StatusCode != http.StatusAccepted || task.Goal != "open Settings" {
		t.Errorf("object with surrounding whitespace: %d %+v", resp.StatusCode, task)
	}
	// A body over the limit is 413 whatever follows the object.
	var e apiError
	if resp := h.do("POST", "/v1/tasks", `{"goal":"g"}`+strings.Repeat(" ", 70<<10), &e); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("object + 70 KiB of spaces: %d %+v, want 413", resp.StatusCode, e)
	}
}

// get sends GET path with an Authorization header (none when empty).
func getAuth(t *testing.T, url, auth string) (int, apiError) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e apiError
	if resp.StatusCode != http.StatusOK {
		json.NewDecoder(resp.Body).Decode(&e)
	} else {
		io.Copy(io.Discard, resp.Body)
	}
	return resp.StatusCode, e
}

// ?access_token= is taken by the event stream only; everywhere else it is
// refused, and the 401 says why.
func TestQueryTokenOnlyOnEventStream(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	h := newHarness(t, newFakeRunner(1), func(c *Config) { c.Token = token })
	task := h.create("with token", "sim")
	h.waitStatus(task.ID, lifecycle.Completed)

	q := "?access_token=" + token
	if code, e := getAuth(t, h.ts.URL+"/v1/tasks/"+task.ID+"/events"+q, ""); code != http.StatusOK {
		t.Errorf("event stream with ?access_token= = %d %+v, want 200", code, e)
	}
	for _, path := range []string{"/v1/tasks", "/v1/tasks/" + task.ID, "/v1/tasks/" + task.ID + "/steps", "/v1/devices"} {
		code, e := getAuth(t, h.ts.URL+path+q, "")
		if code != http.StatusUnauthorized || e.Error.Code != "unauthorized" || !strings.Contains(e.Error.Message, "event stream") {
			t.Errorf("GET %s with ?access_token= = %d %+v, want 401 naming the event stream", path, code, e)
		}
	}
	req, _ := http.NewRequestWithContext(t.Context(), "POST", h.ts.URL+"/v1/tasks/"+task.ID+"/cancel"+q, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST cancel with ?access_token= = %d, want 401", resp.StatusCode)
	}
}

// The "Bearer" scheme word is case-insensitive (RFC 9110 §11.1); the token
// itself is not.
func TestBearerSchemeCaseInsensitive(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	h := newHarness(t, newFakeRunner(0), func(c *Config) { c.Token = token })
	for _, auth := range []string{"Bearer " + token, "bearer " + token, "BEARER " + token, "bEaReR  " + token} {
		if code, e := getAuth(t, h.ts.URL+"/v1/tasks", auth); code != http.StatusOK {
			t.Errorf("Authorization %q = %d %+v, want 200", auth[:8], code, e)
		}
	}
	for _, auth := range []string{"Bearer " + strings.ToUpper(token), "Bearer", "Bearer" + token, "Basic " + token, token} {
		if code, _ := getAuth(t, h.ts.URL+"/v1/tasks", auth); code != http.StatusUnauthorized {
			t.Errorf("Authorization %.20q… = %d, want 401", auth, code)
		}
	}
}

// Paths with "." or ".." segments or "//" get the API's JSON error, not
// ServeMux's redirect with an HTML body, and reach no handler.
func TestUncleanPathsGetJSONError(t *testing.T) {
	h := newHarness(t, newFakeRunner(0), nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/tasks/../.."},
		{"GET", "/v1/tasks/.."},
		{"GET", "/v1/tasks/x/../../tasks"},
		{"GET", "/v1//tasks"},
		{"GET", "/v1/./tasks"},
		{"GET", "/v1/tasks/%2e%2e/%2e%2e"},
		{"POST", "/v1/tasks/../tasks"},
		{"GET", "/tasks/../"},
		{"GET", "/assets/../index.html"},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), c.method, h.ts.URL, strings.NewReader(`{"goal":"open Settings"}`))
		req.URL.Opaque = c.path // sent as typed: no client-side cleaning
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e apiError
		if err := json.Unmarshal(data, &e); err != nil || resp.StatusCode != http.StatusBadRequest || e.Error.Code != "bad_request" || !strings.Contains(e.Error.Message, "..") {
			t.Errorf("%s %s = %d %s %q, want 400 with the JSON error shape", c.method, c.path, resp.StatusCode, resp.Header.Get("Content-Type"), data)
		}
		if loc := resp.Header.Get("Location"); loc != "" {
			t.Errorf("%s %s redirects to %q", c.method, c.path, loc)
		}
	}
	page, err := h.store.ListTasks(t.Context(), storage.Query{})
	if err != nil || len(page.Tasks) != 0 {
		t.Errorf("unclean POSTs created %d tasks (%v)", len(page.Tasks), err)
	}
	// Clean paths still work, trailing-slash page routes included.
	for _, p := range []string{"/", "/v1/tasks", "/healthz", "/assets/app.js"} {
		if code, e := getAuth(t, h.ts.URL+p, ""); code != http.StatusOK {
			t.Errorf("GET %s = %d %+v", p, code, e)
		}
	}
}

// A token short enough to guess is refused at start, whatever the address;
// the message says how long it must be.
func TestCheckBindRefusesShortTokens(t *testing.T) {
	for _, c := range []struct {
		addr, token string
		want        string // "" = accepted
	}{
		{"127.0.0.1:8080", "x", "at least 16"},
		{"0.0.0.0:8080", "x", "at least 16"},
		{"0.0.0.0:8080", "0123456789abcde", "15 characters"},
		{"0.0.0.0:8080", "0123456789abcdef", ""},
		{"0.0.0.0:8080", "0123456789abcdef0123456789abcdef", ""},
		{"0.0.0.0:8080", "0123456789 abcdef", "space"},
		{"0.0.0.0:8080", "0123456789abcdef\n", "space"},
		{"127.0.0.1:8080", "", ""},
		{"0.0.0.0:8080", "", "set a token"},
	} {
		err := CheckBind(c.addr, c.token)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckBind(%q, %q) = %v, want accepted", c.addr, c.token, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("CheckBind(%q, %q) = %v, want an error saying %q", c.addr, c.token, err, c.want)
		}
	}
}

// The input gaps, each refused with 400 before any task exists:
// a key given twice (encoding/json would let the last win, matching case
// freely: "GOAL" overrode "goal"), a body that is not UTF-8, a goal with a
// NUL or another control character, and a flow whose parameter makes the
// bound goal 60,000 characters long (past the 2,000 limit).
func TestInputGapsRefused(t *testing.T) {
	h := newHarness(t, newFakeRunner(0), nil)
	longFlow := `{"flow":{"version":1,"name":"f","goal":"search ${q}","params":{"q":{"default":"x"}},` +
		`"steps":[{"intent":"open Settings","tool":"launch_app","args":{"app":"Settings"}}]},"params":{"q":"` + strings.Repeat("a", 60000) + `"}}`
	for _, tc := range []struct {
		path, body, field, want string
	}{
		{"/v1/tasks", `{"goal":"open Settings","GOAL":"open Taobao, tap Buy now"}`, "GOAL", `given twice (as "goal" and "GOAL"`},
		{"/v1/tasks", `{"goal":"open Settings","goal":"open Taobao"}`, "goal", "given twice"},
		{"/v1/tasks", `{"goal":"open Settings","device":"sim","Device":"sim:other"}`, "Device", "given twice"},
		{"/v1/flows/run", `{"flow":"x","params":{"q":"a","Q":"b"}}`, "Q", "given twice in params"},
		{"/v1/tasks", "{\"goal\":\"open Settings\xff\"}", "body", "not valid UTF-8"},
		{"/v1/tasks", "{\"goal\":\"open Settings\\u0000 and pay\"}", "goal", "control character U+0000"},
		{"/v1/tasks", "{\"goal\":\"open Settings\\u001b[2J\"}", "goal", "control character U+001B"},
		{"/v1/tasks", "{\"goal\":\"open \\ud800Settings\"}", "goal", "U+FFFD"},
		{"/v1/flows/run", longFlow, "params", "longer than 2000 characters (60007)"},
	} {
		var e apiError
		resp := h.do("POST", tc.path, tc.body, &e)
		if resp.StatusCode != http.StatusBadRequest || e.Error.Field != tc.field || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("%s %.80q: %d %+v, want 400 on %q saying %q", tc.path, tc.body, resp.StatusCode, e.Error, tc.field, tc.want)
		}
	}
	page, err := h.store.ListTasks(t.Context(), storage.Query{})
	if err != nil || len(page.Tasks) != 0 {
		t.Errorf("refused bodies created %d tasks (%v)", len(page.Tasks), err)
	}
	// Tabs and newlines are text; the same flow with a short parameter runs.
	var task storage.Task
	if resp := h.do("POST", "/v1/tasks", `{"goal":"open Settings\n\tthen Wi-Fi"}`, &task); resp.StatusCode != http.StatusAccepted {
		t.Errorf("goal with a newline and a tab: %d", resp.StatusCode)
	}
	short := strings.Replace(longFlow, strings.Repeat("a", 60000), "cats", 1)
	if resp := h.do("POST", "/v1/flows/run", short, &task); resp.StatusCode != http.StatusAccepted || task.Goal != "search cats" {
		t.Errorf("the flow with a short parameter: %d %+v", resp.StatusCode, task)
	}
}
