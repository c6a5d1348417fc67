package api

import (
	"net/http"
	"strings"
	"testing"

	"phonepilot/task/lifecycle"
)

// GET /v1/devices/{id}/state answers the phone's own JSON; an unknown
// device is 404 and a device that reports none is 409, each saying why.
func TestDeviceState(t *testing.T) {
	h := newHarness(t, newFakeRunner(1), nil)
	task := h.create("open Taobao", "sim:a")
	h.waitStatus(task.ID, lifecycle.Completed)
	h.devices.phones["sim:a"].Tap(t.Context(), 1, 1)

	var st struct {
		Taps *int `json:"taps"`
	}
	resp := h.do("GET", "/v1/devices/sim:a/state", "", &st)
	if resp.StatusCode != http.StatusOK || st.Taps == nil || *st.Taps != 1 {
		t.Fatalf("state of sim:a = %d %+v", resp.StatusCode, st)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
	for _, tc := range []struct {
		path   string
		status int
		code   string
		says   string
	}{
		{"/v1/devices/sim:never/state", 404, "not_found", "no task opened it"},
		{"/v1/devices/pixel7/state", 404, "not_found", `unknown device "pixel7"`},
		{"/v1/devices/sim:nostate/state", 409, "conflict", "does not report its own state"},
	} {
		var e apiError
		resp := h.do("GET", tc.path, "", &e)
		if resp.StatusCode != tc.status || e.Error.Code != tc.code || !strings.Contains(e.Error.Message, tc.says) {
			t.Errorf("GET %s = %d %+v, want %d %s saying %q", tc.path, resp.StatusCode, e, tc.status, tc.code, tc.says)
		}
	}
	var e apiError
	if resp := h.do("POST", "/v1/devices/sim:a/state", "", &e); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST state = %d %+v", resp.StatusCode, e)
	}
}
