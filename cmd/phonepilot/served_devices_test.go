package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
)

// A served task names only devices the server knows: a simulated phone,
// the bare kind, one the operator configured, or one a backend lists. An
// adb:HOST:PORT (or a wda:URL) from a client is refused before the adb
// server is asked to connect anywhere.
func TestServedDevicesAreOnlyKnownOnes(t *testing.T) {
	d := newServeDevices(deviceOptions{SimLocale: "en", ADBServer: "127.0.0.1:1"}, "adb:10.0.0.9:5555")
	for name, ok := range map[string]bool{
		"sim": true, "sim:a": true, "adb": true, "adb:10.0.0.9:5555": true,
		"adb:10.0.0.7:5555": false, "adb:127.0.0.1:5555": false, "adb:emulator-5554": false,
		"wda:http://10.0.0.7:8100": false, "toaster": false,
	} {
		if err := d.Check(name); (err == nil) != ok {
			t.Errorf("Check(%q) = %v, want ok=%v", name, err, ok)
		}
	}

	// Through the API: POST /v1/tasks and /v1/flows/run with an address
	// are 400 naming the device field, and the address is never dialled.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dialled := make(chan struct{}, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			select {
			case dialled <- struct{}{}:
			default:
			}
		}
	}()
	a := startServedAPI(t, openTestSQLite(t), "")
	addr := "adb:" + ln.Addr().String()
	for path, body := range map[string]any{
		"/v1/tasks":     map[string]any{"goal": "open Settings", "device": addr},
		"/v1/flows/run": map[string]any{"flow": "version: 1\nname: f\ngoal: open Settings\nsteps:\n  - intent: open Settings\n    tool: launch_app\n    args: {app: Settings}\n", "device": addr},
	} {
		raw, _ := json.Marshal(body)
		resp, err := http.Post(a.url+path, "application/json", bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct{ Field, Message string } `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != 400 || e.Error.Field != "device" || !strings.Contains(e.Error.Message, "not a device this server knows") {
			t.Errorf("POST %s on %s = %d %+v, want 400 device", path, addr, resp.StatusCode, e)
		}
	}
	select {
	case <-dialled:
		t.Error("the address a client named was dialled")
	default:
	}
}
