package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"phonepilot/device/sim"
	"phonepilot/device/sim/simwda"
)

// wdaPhone serves a simulated phone as an iPhone over WDA's HTTP API, as
// `phonepilot sim --wda` does, and returns its device name.
func wdaPhone(t *testing.T, locale string) (string, *sim.Phone) {
	t.Helper()
	p, err := sim.New(sim.Config{Locale: locale})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(simwda.New(p))
	t.Cleanup(srv.Close)
	return "wda:" + srv.URL, p
}

func simState(t *testing.T, p *sim.Phone) map[string]any {
	t.Helper()
	b, err := p.State()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// run --device wda:http://… through the HTTP path to the simulated iPhone:
// the search is made (checked on the simulator's state) in English and,
// on a Chinese phone, in Chinese; the steps are printed.
func TestRunOnAnIPhoneOverWDA(t *testing.T) {
	t.Setenv("PHONEPILOT_CONFIG", "")
	for loc, goal := range map[string]string{"en": "open Taobao and search Mac mini", "zh": "打开淘宝搜索Mac mini"} {
		name, p := wdaPhone(t, loc)
		code, out, stderr := capture(t, context.Background(), "run", "--no-record", "--device", name, goal)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", loc, code, out, stderr)
		}
		for _, want := range []string{"launch_app", "type_text", "completed"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the output lacks %q:\n%s", loc, want, out)
			}
		}
		tb := simState(t, p)["taobao"].(map[string]any)
		if tb["last_search"] != "Mac mini" {
			t.Errorf("%s: Taobao's last search %v, want Mac mini", loc, tb["last_search"])
		}
	}
}

// press_key back on an iPhone is refused with what to do instead; "go back"
// where a screen shows a navigation bar's Back button taps it.
func TestBackOnAnIPhone(t *testing.T) {
	t.Setenv("PHONEPILOT_CONFIG", "")
	name, _ := wdaPhone(t, "en")
	code, out, stderr := capture(t, context.Background(), "run", "--no-record", "--device", name, "go back")
	if code != 1 || !strings.Contains(out+stderr, "an iPhone has no back key: tap the screen's back button") {
		t.Errorf("go back on the home screen: exit %d\n%s\n%s", code, out, stderr)
	}
	name, p := wdaPhone(t, "en")
	code, out, stderr = capture(t, context.Background(), "run", "--no-record", "--device", name, "open Settings, tap Network & internet, go back")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if st := simState(t, p)["settings"].(map[string]any); st["screen"] != "main" {
		t.Errorf("after going back Settings shows %v, want main\n%s", st["screen"], out)
	}
	if strings.Contains(out, "press_key") {
		t.Errorf("went back with press_key on an iPhone:\n%s", out)
	}
}

// "go home" on an iPhone ends on SpringBoard, its home screen: the rule
// planner's check knows it as the home screen (it did not: the task failed
// "the home screen is not in front (com.apple.springboard is)").
func TestHomeOnAnIPhone(t *testing.T) {
	t.Setenv("PHONEPILOT_CONFIG", "")
	name, p := wdaPhone(t, "en")
	code, out, stderr := capture(t, context.Background(), "run", "--no-record", "--device", name, "open Settings, then go home")
	if code != 0 || !strings.Contains(out, "the home screen (com.apple.springboard)") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if fg := simState(t, p)["foreground"]; fg == "com.android.settings" {
		t.Errorf("Settings still in front after going home")
	}
}
