package tasks

import (
	"context"
	"errors"
	"strings"
	"testing"

	"phonepilot/device/sim"
)

func TestUnchanged(t *testing.T) {
	p, err := sim.New(sim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := p.State()
	// Looking around changes no data.
	dev := p.Device()
	if err := dev.LaunchApp(context.Background(), "Settings"); err != nil {
		t.Fatal(err)
	}
	looked, _ := p.State()
	if string(looked) == string(before) {
		t.Fatal("launching Settings did not change the state at all")
	}
	if err := Unchanged(before, looked); err != nil {
		t.Errorf("opening Settings counted as a change: %v", err)
	}
	// A toggle does.
	var o, e strings.Builder
	p.Exec(context.Background(), "settings put global bluetooth_on 1", false, &o, &e)
	after, _ := p.State()
	err = Unchanged(before, after)
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "settings.bluetooth") {
		t.Errorf("Bluetooth switched on: %v, want ErrChanged naming settings.bluetooth", err)
	}
	// An app that disappears is a change too.
	q, _ := sim.New(sim.Config{Start: sim.Start{Uninstalled: []string{"Clock"}}})
	gone, _ := q.State()
	if err := Unchanged(before, gone); err == nil || !strings.Contains(err.Error(), "installed") {
		t.Errorf("Clock uninstalled: %v", err)
	}
	if _, err := UserData([]byte("not json")); err == nil {
		t.Error("UserData accepted a state that is not JSON")
	}
}
