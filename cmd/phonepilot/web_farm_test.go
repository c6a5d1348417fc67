package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"phonepilot/api"
	"phonepilot/device"
	"phonepilot/internal/testlog"
	"phonepilot/runtime"
)

// listedFarm is a farm's device listing as a front answers it (what
// farmDevices.List makes of farm.Front.Devices): the page is judged on
// what it shows of it, not on how the farm worked it out.
type listedFarm struct{ devs []api.DeviceInfo }

func (f *listedFarm) Check(name string) error {
	for _, d := range f.devs {
		if d.Name == name {
			return nil
		}
	}
	return errors.New("no worker of the farm offers " + name)
}

func (f *listedFarm) List(context.Context) ([]api.DeviceInfo, error) { return f.devs, nil }

func (f *listedFarm) State(_ context.Context, name string) (json.RawMessage, error) {
	return nil, api.ErrNoState
}

func (f *listedFarm) Open(context.Context, string) (device.Device, func(), error) {
	return nil, nil, errors.New("a farm's front runs no tasks")
}

// deviceOnPage is what the page's device list shows of one device.
type deviceOnPage struct {
	Name   string `json:"name"`
	State  string `json:"state"` // the state as written on the row
	Tone   string `json:"tone"`  // the state's data-state attribute
	Text   string `json:"text"`  // the whole row's text
	Dimmed bool   `json:"dimmed"`
}

const readDevices = `JSON.stringify([...document.querySelectorAll("#device-rows li")].map((li) => {
  const st = li.querySelector(".device-state");
  return {name: li.dataset.device || "", state: st ? st.textContent : "", tone: li.dataset.state || "",
    text: li.innerText, dimmed: Number(getComputedStyle(li).opacity) < 1};
}))`

// TestWebFarmDevicesInChromium serves the page over an API whose devices
// are a farm's, on two hosts, one of them gone quiet, and checks that the
// page lists each device with its host, labels and state, and that the
// offline one reads as offline.
func TestWebFarmDevicesInChromium(t *testing.T) {
	t.Parallel()
	log := testlog.New(t)
	beat := time.Now().Add(-3 * time.Second).UTC().Truncate(time.Second)
	old := beat.Add(-10 * time.Minute)
	farmDevs := &listedFarm{devs: []api.DeviceInfo{
		{Name: "adb:R58M123", Kind: "adb", State: "busy", Worker: "rack-1", Host: "rack-1.lan", Heartbeat: &beat,
			Labels: map[string]string{"android": "14", "kind": "adb", "locale": "zh", "model": "Pixel 8", "rack": "a"}},
		{Name: "sim:lab-en", Kind: "sim", State: "idle", Worker: "lab", Host: "lab.lan", Heartbeat: &beat,
			Labels: map[string]string{"kind": "sim", "locale": "en", "screen": "1080x2400"}},
		{Name: "sim:lab-zh", Kind: "sim", State: "offline", Worker: "rack-2", Host: "rack-2.lan", Heartbeat: &old,
			Labels: map[string]string{"kind": "sim", "locale": "zh"}},
	}}
	url := serveOver(t, openTestSQLite(t), farmDevs, &runtimeRunner{base: runtime.Defaults(), log: log}, 200*time.Millisecond, log)

	ctx := newChromium(t, 60*time.Second)
	pageBoot(t, ctx, url+"/")
	var shown []deviceOnPage
	deadline := time.Now().Add(10 * time.Second)
	for {
		js, err := chromedp.Run(ctx, chromedp.Evaluate[string](readDevices))
		if err != nil {
			t.Fatalf("browser: read the device list: %v", err)
		}
		shown = nil
		if err := json.Unmarshal([]byte(js), &shown); err != nil {
			t.Fatalf("device list %s: %v", js, err)
		}
		if len(shown) == len(farmDevs.devs) || time.Now().After(deadline) {
			break
		}
		chromedp.Do(ctx, chromedp.Sleep(50*time.Millisecond))
	}
	if len(shown) != len(farmDevs.devs) {
		t.Fatalf("the page lists %d devices, the farm has %d: %+v", len(shown), len(farmDevs.devs), shown)
	}
	for i, d := range farmDevs.devs {
		s := shown[i]
		if s.Name != d.Name || !strings.Contains(s.Text, d.Name) {
			t.Errorf("row %d is %q (%q), want device %s", i, s.Name, s.Text, d.Name)
		}
		if s.State != d.State || s.Tone != d.State {
			t.Errorf("%s: the page says state %q (data-state %q), the farm %q", d.Name, s.State, s.Tone, d.State)
		}
		if !strings.Contains(s.Text, d.Host) {
			t.Errorf("%s: its row %q does not name its host %s", d.Name, s.Text, d.Host)
		}
		for k, v := range d.Labels {
			if !strings.Contains(s.Text, k+"="+v) {
				t.Errorf("%s: its row %q does not show label %s=%s", d.Name, s.Text, k, v)
			}
		}
		if !strings.Contains(s.Text, "heartbeat") {
			t.Errorf("%s: its row %q shows no heartbeat", d.Name, s.Text)
		}
		if offline := d.State == "offline"; s.Dimmed != offline {
			t.Errorf("%s (%s): dimmed %v; an offline device, and only it, must look unavailable", d.Name, d.State, s.Dimmed)
		}
	}
	// The device field offers exactly the farm's devices.
	opts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#device-list option")].map((o) => o.value)`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"adb:R58M123", "sim:lab-en", "sim:lab-zh"}
	if !slices.Equal(opts, want) {
		t.Errorf("the device field offers %v, want %v", opts, want)
	}

	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "web-ui-farm.png")
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		out = filepath.Join("..", "..", "docs", "web-ui-farm.png")
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the farm's devices (%d KB) saved to %s", len(png)>>10, out)
}
