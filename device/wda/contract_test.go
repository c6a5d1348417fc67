package wda_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"phonepilot/device"
	"phonepilot/device/devicetest"
	"phonepilot/device/sim"
	"phonepilot/device/sim/simwda"
	"phonepilot/device/wda"
)

// iosTarget is the contract's target for an iPhone: Settings by its
// bundle id, and the keys an iPhone has.
func iosTarget(open func(t *testing.T) device.Device) devicetest.Target {
	return devicetest.Target{
		Open:       open,
		App:        "Settings",
		AppPackage: "com.apple.Preferences",
		Keys:       []device.Key{device.KeyHome, device.KeyEnter, device.KeyDelete},
		Field:      openTaobaoSearch,
		Cannot: map[string]string{
			devicetest.CheckFacts: "WebDriverAgent tells the locale but not an app's version",
		},
	}
}

// The contract on the simulated iPhone in process (what --device sim:ios
// drives).
func TestContractInProcess(t *testing.T) {
	tg := iosTarget(func(t *testing.T) device.Device {
		p, err := sim.New(sim.Config{})
		if err != nil {
			t.Fatal(err)
		}
		d, err := wda.Open(t.Context(), simwda.InProcessURL, simwda.InProcessClient(simwda.New(p)))
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
	tg.Cannot[devicetest.CheckVanish] = "an in-process phone cannot go away"
	devicetest.Contract(t, tg)
}

// The contract over HTTP, as `phonepilot sim --wda` serves it: a WDA that
// stops is a vanished device.
func TestContractOverHTTP(t *testing.T) {
	servers := map[device.Device]*httptest.Server{}
	tg := iosTarget(func(t *testing.T) device.Device {
		p, err := sim.New(sim.Config{})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(simwda.New(p))
		t.Cleanup(srv.Close)
		d, err := wda.Open(context.Background(), srv.URL, srv.Client())
		if err != nil {
			t.Fatal(err)
		}
		servers[d] = srv
		return d
	})
	tg.Vanish = func(t *testing.T, d device.Device) { servers[d].Close() }
	devicetest.Contract(t, tg)
}

// openTaobaoSearch focuses Taobao's search field on the simulated iPhone
// (its ids are the accessibility identifiers there).
func openTaobaoSearch(t *testing.T, d device.Device) {
	t.Helper()
	ctx := t.Context()
	if err := d.LaunchApp(ctx, "Taobao"); err != nil {
		t.Fatal(err)
	}
	sc, err := d.Scene(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tapID := func(id string) bool {
		for _, e := range sc.Elements {
			if e.ResourceID == id {
				x, y := e.Bounds.Center()
				if err := d.Tap(ctx, x, y); err != nil {
					t.Fatal(err)
				}
				if sc, err = d.Scene(ctx); err != nil {
					t.Fatal(err)
				}
				return true
			}
		}
		return false
	}
	tapID("poplayer_close")
	if !tapID("home_searchbar") {
		t.Fatal("no search bar on Taobao's home")
	}
	for _, e := range sc.Elements {
		if e.Editable && e.Focused {
			return
		}
	}
	t.Fatal("no focused field after tapping Taobao's search bar")
}
