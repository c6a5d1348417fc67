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

func TestConformance(t *testing.T) {
	devicetest.Run(t, func(t *testing.T) device.Device {
		return newTestPhone(t, Config{}).Device()
	})
}
