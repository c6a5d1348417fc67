package sim

import (
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/devicetest"
	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
)

func newTestPhone(t testing.TB, cfg Config) *Phone {
	t.Helper()
	if cfg.Clock == nil {
		cfg.Clock = clock.NewFake(time.Date(2026, 11, 30, 9, 41, 0, 0, time.UTC))
	}
	cfg.Logger = testlog.New(t)
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The device contract every backend passes, on the in-process simulator
// (which cannot vanish: it lives in the process).
func TestContract(t *testing.T) {
	devicetest.Contract(t, devicetest.Target{
		Open:  func(t *testing.T) device.Device { return newTestPhone(t, Config{}).Device() },
		Field: devicetest.OpenTaobaoSearch,
		Cannot: map[string]string{
			devicetest.CheckVanish: "an in-process simulated phone cannot go away",
		},
	})
}

func TestConformance(t *testing.T) {
	devicetest.SimulatorContent(t, func(t *testing.T) device.Device {
		return newTestPhone(t, Config{}).Device()
	})
}
