package api

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"phonepilot/lifecycle"
	"phonepilot/storage"
)

// doorReq sends method path with the given headers and body and returns
// the status and the API error code.
func (h *harness) doorReq(method, path, body string, header map[string]string) (int, string) {
	h.t.Helper()
	req, err := http.NewRequestWithContext(h.t.Context(), method, h.ts.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	if body == "" {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var e apiError
	_ = json.Unmarshal(data, &e)
	return resp.StatusCode, e.Error.Code
}

// routePath fills a route pattern's {id} with id.
func routePath(rt route, id string) string {
	p := strings.ReplaceAll(rt.pattern, "{id}", id)
	if strings.HasPrefix(rt.pattern, "/v1/devices/") {
		p = strings.ReplaceAll(rt.pattern, "{id}", "sim")
	}
	return p
}

// Every route of the table, behind the door: a Host this server is not
// known by is 421 before any handler; a state-changing request from another
// origin is 403; one whose body is not JSON is 415. None of them reaches a
// handler: no task is created, nothing is cancelled.
func TestDoorOnEveryRoute(t *testing.T) {
	h := newHarness(t, newFakeRunner(1), nil)
	done := h.create("the only task", "sim")
	h.waitStatus(done.ID, lifecycle.Completed)
	_, port, _ := net.SplitHostPort(h.ts.Listener.Addr().String())
	body := `{"goal":"buy it","text":"yes","flow":"steps: []"}`
	for _, rt := range h.srv.routeTable() {
		path := routePath(rt, done.ID)
		for _, host := range []string{"evil.example:" + port, "evil.example", "localhost.evil.example:" + port, "127.0.0.1.nip.io:" + port, "localhost:1"} {
			status, code := h.doorReq(rt.method, path, "", map[string]string{"Host": host})
			if status != http.StatusMisdirectedRequest || code != "wrong_host" {
				t.Errorf("%s %s with Host %s = %d %s, want 421 wrong_host", rt.method, path, host, status, code)
			}
		}
		if safeMethod(rt.method) {
			continue
		}
		for name, hdr := range map[string]map[string]string{
			"Sec-Fetch-Site: cross-site":     {"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"},
			"Sec-Fetch-Site: same-site":      {"Sec-Fetch-Site": "same-site", "Content-Type": "application/json"},
			"Origin of another port":         {"Origin": "http://127.0.0.1:1", "Content-Type": "application/json"},
			"Origin https://evil.example":    {"Origin": "https://evil.example", "Content-Type": "application/json"},
			"text/plain from another origin": {"Origin": "https://evil.example", "Content-Type": "text/plain"},
		} {
			status, code := h.doorReq(rt.method, path, body, hdr)
			if status != http.StatusForbidden || code != "cross_origin" {
				t.Errorf("%s %s with %s = %d %s, want 403 cross_origin", rt.method, path, name, status, code)
			}
		}
		for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "", "application/json-seq"} {
			status, code := h.doorReq(rt.method, path, body, map[string]string{"Content-Type": ct})
			if status != http.StatusUnsupportedMediaType || code != "not_json" {
				t.Errorf("%s %s with a body of Content-Type %q = %d %s, want 415 not_json", rt.method, path, ct, status, code)
			}
		}
	}
	page, err := h.store.ListTasks(t.Context(), storage.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tasks) != 1 || page.Tasks[0].Status != lifecycle.Completed {
		t.Errorf("the door let a request through: tasks %+v", page.Tasks)
	}
}

// What the door lets through: the loopback names and IP literals with the
// bound port, the configured names, same-origin and header-less requests,
// configured origins, JSON bodies (with parameters) and empty bodies.
func TestDoorLetsTheServersOwnThrough(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	d, err := Door("127.0.0.1:8080", DoorConfig{Hosts: []string{"phone.example.com", "Pilot.Example:8443"}, Origins: []string{"https://phone.example.com"}}, ok)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, host string
		header       map[string]string
		body         string
		want         int
	}{
		{"GET", "localhost:8080", nil, "", 204},
		{"GET", "127.0.0.1:8080", nil, "", 204},
		{"GET", "[::1]:8080", nil, "", 204},
		{"GET", "LOCALHOST:8080", nil, "", 204},
		{"GET", "192.168.1.20:8080", nil, "", 204}, // an IP literal cannot be rebound
		{"GET", "192.168.1.20:8081", nil, "", 421},
		{"GET", "localhost", nil, "", 421}, // port 80 is not this server's
		{"GET", "phone.example.com", nil, "", 204},
		{"GET", "phone.example.com:443", nil, "", 204},
		{"GET", "pilot.example:8443", nil, "", 204},
		{"GET", "pilot.example:8080", nil, "", 421},
		{"GET", "", nil, "", 421},
		{"POST", "localhost:8080", map[string]string{"Content-Type": "application/json; charset=utf-8"}, "{}", 204},
		{"POST", "localhost:8080", map[string]string{"Sec-Fetch-Site": "same-origin", "Content-Type": "application/json"}, "{}", 204},
		{"POST", "localhost:8080", map[string]string{"Origin": "http://localhost:8080", "Content-Type": "application/json"}, "{}", 204},
		{"POST", "phone.example.com", map[string]string{"Origin": "https://phone.example.com", "Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"}, "{}", 204},
		{"POST", "localhost:8080", nil, "", 204}, // no body, no Content-Type (cancel)
		{"POST", "localhost:8080", nil, "{}", 415},
		{"DELETE", "localhost:8080", map[string]string{"Origin": "https://evil.example"}, "", 403},
	} {
		req := httptest.NewRequest(c.method, "/x", strings.NewReader(c.body))
		if c.body == "" {
			req.Body, req.ContentLength = http.NoBody, 0
		}
		req.Host = c.host
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		d.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("%s Host %q %v body %q = %d, want %d (%s)", c.method, c.host, c.header, c.body, rec.Code, c.want, rec.Body)
		}
		if got := rec.Header().Get("Content-Security-Policy"); got != "frame-ancestors 'none'" || rec.Header().Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s Host %q: CSP %q, X-Frame-Options %q: every answer must refuse framing", c.method, c.host, got, rec.Header().Get("X-Frame-Options"))
		}
	}
	for _, bad := range []DoorConfig{{Hosts: []string{"https://phone.example.com"}}, {Hosts: []string{""}}, {Origins: []string{"phone.example.com"}}} {
		if _, err := Door("127.0.0.1:8080", bad, ok); err == nil {
			t.Errorf("Door accepted %+v", bad)
		}
	}
}

// The page refuses to be framed too (its own CSP replaces the door's).
func TestPageRefusesFraming(t *testing.T) {
	h := newHarness(t, newFakeRunner(1), nil)
	resp, err := http.Get(h.ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("page CSP %q has no frame-ancestors 'none'", csp)
	}
}
