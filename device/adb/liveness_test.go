package adb

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"phonepilot/device"
)

// A phone that stops answering with its connection open (the server still
// lists it as "device") fails a call within Stall+Probe, long before the
// call's own deadline, with a reason that says so; the calls after it fail
// at once; and once the phone answers again, calls work again.
func TestPhoneThatStopsAnsweringFailsFastAsDisconnected(t *testing.T) {
	p := newFakePhone(t)
	d, s := openFake(t, p)
	d.cfg.Timeouts.Dump = 30 * time.Second
	d.cfg.Timeouts.Command = 30 * time.Second
	d.cfg.Timeouts.Stall = 200 * time.Millisecond
	d.cfg.Timeouts.Probe = 300 * time.Millisecond
	var frozen atomic.Bool
	frozen.Store(true)
	s.phone = func(serial, service, cmd string) reply {
		if frozen.Load() {
			return reply{silent: true}
		}
		return p.handle(serial, service, cmd)
	}

	start := time.Now()
	_, err := d.Scene(t.Context())
	took := time.Since(start)
	if !errors.Is(err, device.ErrDisconnected) {
		t.Fatalf("Scene on a silent phone = %v; want ErrDisconnected", err)
	}
	var se *StoppedError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "the phone stopped answering: no reply to `uiautomator dump /dev/tty` within") {
		t.Errorf("err = %v; want a *StoppedError naming the dump", err)
	}
	if took > 2*time.Second {
		t.Errorf("Scene failed after %v; want within Stall+Probe (0.5s) plus slack, not the 30s deadline", took)
	}

	// The next call does not wait out a check of its own.
	start = time.Now()
	if err := d.Tap(t.Context(), 1, 1); !errors.Is(err, device.ErrDisconnected) {
		t.Errorf("Tap after the phone stopped = %v; want ErrDisconnected", err)
	}
	if el := time.Since(start); el > 150*time.Millisecond {
		t.Errorf("Tap after the phone stopped took %v; want it to fail at once", el)
	}

	// The phone comes back: once a check is due, it answers and calls work.
	frozen.Store(false)
	time.Sleep(d.cfg.Timeouts.Probe)
	if err := d.Tap(t.Context(), 1, 1); err != nil {
		t.Errorf("Tap after the phone answers again = %v", err)
	}
	if _, err := d.Scene(t.Context()); err != nil {
		t.Errorf("Scene after the phone answers again = %v", err)
	}
}

// A call that outlives Stall on a phone that answers its checks goes on:
// a slow dump is not a stopped phone.
func TestSlowCallOnAnsweringPhoneIsNotCut(t *testing.T) {
	p := newFakePhone(t)
	d, s := openFake(t, p)
	d.cfg.Timeouts.Dump = 30 * time.Second
	d.cfg.Timeouts.Stall = 100 * time.Millisecond
	d.cfg.Timeouts.Probe = 300 * time.Millisecond
	s.phone = func(serial, service, cmd string) reply {
		r := p.handle(serial, service, cmd)
		if strings.HasPrefix(cmd, "uiautomator") {
			r.delay = 700 * time.Millisecond // several Stalls
		}
		return r
	}
	sc, err := d.Scene(t.Context())
	if err != nil {
		t.Fatalf("Scene with a slow dump on an answering phone = %v", err)
	}
	if len(sc.Elements) == 0 {
		t.Error("empty scene")
	}
	probes := 0
	for _, svc := range s.opened() {
		if svc == "exec:"+probeCommand {
			probes++
		}
	}
	if probes < 2 {
		t.Errorf("%d checks during a 700ms dump with Stall 100ms; want the phone checked repeatedly", probes)
	}
}

// The phone stops answering at its deadline, before the watch's first
// check: the deadline's own check finds it.
func TestDeadlineOnSilentPhoneIsStopped(t *testing.T) {
	p := newFakePhone(t)
	d, s := openFake(t, p)
	d.cfg.Timeouts.Input = 150 * time.Millisecond
	d.cfg.Timeouts.Stall = time.Minute
	d.cfg.Timeouts.Probe = 300 * time.Millisecond
	s.phone = func(serial, service, cmd string) reply { return reply{silent: true} }
	start := time.Now()
	err := d.Key(t.Context(), device.KeyBack)
	var se *StoppedError
	if !errors.As(err, &se) || !errors.Is(err, device.ErrDisconnected) {
		t.Fatalf("Key on a silent phone = %v; want a *StoppedError", err)
	}
	if se.Cmd != "input keyevent 4" || se.Serial != "fake-1" {
		t.Errorf("StoppedError = %+v", se)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v; want deadline+probe (0.45s) plus slack", el)
	}
}

// A silent phone that the server then drops is reported as gone, not as
// stopped.
func TestSilentPhoneThatVanishesIsGone(t *testing.T) {
	p := newFakePhone(t)
	d, s := openFake(t, p)
	d.cfg.Timeouts.Stall = 100 * time.Millisecond
	d.cfg.Timeouts.Probe = 200 * time.Millisecond
	s.phone = func(serial, service, cmd string) reply {
		if cmd == probeCommand {
			s.setDevices()
		}
		return reply{silent: true}
	}
	err := d.Tap(t.Context(), 1, 1)
	var se *StoppedError
	if !errors.Is(err, device.ErrDisconnected) || errors.As(err, &se) {
		t.Errorf("Tap = %v; want ErrDisconnected saying the device is gone, not stopped", err)
	}
	if !strings.Contains(err.Error(), "not found") {
		t.Errorf("err = %v; want the server's word that the device is not found", err)
	}
}
