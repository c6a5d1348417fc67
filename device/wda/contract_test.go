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

// The contract on the simulated iPhone in process (what --device sim:ios
// drives).
func TestContractInProcess(t *testing.T) {
	tg := devicetest.SimIPhone(func(t *testing.T) device.Device {
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
	tg := devicetest.SimIPhone(func(t *testing.T) device.Device {
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
