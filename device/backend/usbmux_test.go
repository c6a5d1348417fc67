package backend_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"phonepilot/device"
	"phonepilot/device/backend"
	"phonepilot/device/devicetest"
	"phonepilot/device/sim"
	"phonepilot/device/sim/simusbmux"
	"phonepilot/device/sim/simwda"
	"phonepilot/device/usbmux"
)

const testUDID = "00008110-0001A2B3C4D5E6F7"

// usbmuxdWith serves a simulated usbmuxd with devs on a fresh socket, points
// USBMUXD_SOCKET_ADDRESS at it, and returns a function that takes it away
// (usbmuxd stops: the iPhones vanish).
func usbmuxdWith(t *testing.T, devs []simusbmux.Device) (stop func()) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "usbmuxd")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(usbmux.EnvAddress, "UNIX:"+path)
	srv := simusbmux.New(devs, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx, ln); close(done) }()
	var stopped bool
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
			srv.Close()
		}
	}
	t.Cleanup(stop)
	return stop
}

// simIPhoneOnUSB attaches a simulated iPhone (WDA on its port 8100) to a
// simulated usbmuxd; stop detaches it (usbmuxd and the tunnels end).
func simIPhoneOnUSB(t *testing.T, locale string) (p *sim.Phone, stop func()) {
	t.Helper()
	p, err := sim.New(sim.Config{Locale: locale})
	if err != nil {
		t.Fatal(err)
	}
	serve, stopWDA := simusbmux.HTTPPort(simwda.New(p))
	stopMux := usbmuxdWith(t, []simusbmux.Device{{UDID: testUDID, Ports: map[int]func(net.Conn){8100: serve}}})
	stop = func() { stopMux(); stopWDA() }
	t.Cleanup(stop)
	return p, stop
}

// The device contract on ios:UDID: the simulated iPhone on a simulated
// usbmuxd, WDA reached through usbmux tunnels to its port 8100. usbmuxd
// going away is a vanished device.
func TestContractOnIOSThroughUsbmux(t *testing.T) {
	stops := map[device.Device]func(){}
	tg := devicetest.SimIPhone(func(t *testing.T) device.Device {
		_, stop := simIPhoneOnUSB(t, "en")
		od, err := backend.Open(t.Context(), "ios:"+testUDID, backend.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = od.Close() })
		stops[od.Device] = stop
		return od.Device
	})
	tg.Vanish = func(t *testing.T, d device.Device) { stops[d]() }
	devicetest.Contract(t, tg)
}

// ios:UDID devices are listed and offered to a farm with platform=ios, and
// open as iPhones (no back key).
func TestIOSDevicesAreListedAndOffered(t *testing.T) {
	simIPhoneOnUSB(t, "zh")
	ctx := context.Background()
	set := backend.NewSet(backend.Options{})
	list, err := set.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, l := range list {
		found = found || (l.Name == "ios:"+testUDID && l.Kind == "ios" && l.State == "device")
	}
	if !found {
		t.Errorf("List: %+v, want ios:%s", list, testUDID)
	}
	for _, spec := range []string{"ios", "ios:" + testUDID} {
		offers, err := set.Scan(ctx, []string{spec})
		if err != nil || len(offers) != 1 || offers[0].Name != "ios:"+testUDID {
			t.Fatalf("a farm offering %s: %+v %v", spec, offers, err)
		}
		l := offers[0].Labels
		if l["platform"] != "ios" || l["kind"] != "ios" || l["locale"] != "zh" || l["ios"] != simwda.IOSVersion || l["screen"] != "1080x2400" {
			t.Errorf("offering %s: labels %v", spec, l)
		}
	}
	od, release, err := set.Open(ctx, "ios:"+testUDID)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := od.Device.Key(ctx, device.KeyBack); !errors.Is(err, device.ErrUnsupported) {
		t.Errorf("back on ios:UDID: %v, want ErrUnsupported", err)
	}
}

// Each way ios:UDID can fail says what is wrong and what to do.
func TestIOSErrorsSayWhatIsWrong(t *testing.T) {
	ctx := context.Background()
	open := func(name string) error {
		od, err := backend.Open(ctx, name, backend.Options{})
		if err == nil {
			od.Close()
		}
		return err
	}
	for _, bad := range []string{"ios", "ios:", "ios:has space", "ios:a/b"} {
		if err := backend.Check(bad); !errors.Is(err, backend.ErrName) {
			t.Errorf("Check(%q) = %v, want ErrName", bad, err)
		}
	}

	t.Run("no usbmuxd", func(t *testing.T) {
		t.Setenv(usbmux.EnvAddress, filepath.Join(t.TempDir(), "none"))
		err := open("ios:" + testUDID)
		if !errors.Is(err, usbmux.ErrNoDaemon) || !strings.Contains(err.Error(), usbmux.EnvAddress) {
			t.Errorf("got %v", err)
		}
		// Named by the user, a usbmuxd that is not there is an error in a
		// listing too; not named, it means no iPhones.
		if _, err := iosBackend().List(ctx, backend.Options{}); err == nil {
			t.Error("List with USBMUXD_SOCKET_ADDRESS pointing at nothing: no error")
		}
	})
	t.Run("unknown UDID", func(t *testing.T) {
		simIPhoneOnUSB(t, "en")
		err := open("ios:00008101-FFFFFFFFFFFFFFFF")
		if !errors.Is(err, usbmux.ErrNoDevice) || !strings.Contains(err.Error(), testUDID) {
			t.Errorf("got %v, want ErrNoDevice naming %s", err, testUDID)
		}
	})
	t.Run("nothing on 8100", func(t *testing.T) {
		usbmuxdWith(t, []simusbmux.Device{{UDID: testUDID}})
		err := open("ios:" + testUDID)
		if !errors.Is(err, usbmux.ErrRefused) || !strings.Contains(err.Error(), "start WebDriverAgent") {
			t.Errorf("got %v", err)
		}
	})
}

func iosBackend() *backend.Backend {
	b, _, _ := backend.Owner("ios:x")
	return b
}
