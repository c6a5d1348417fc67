package backend_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"phonepilot/device"
	"phonepilot/device/backend"
	"phonepilot/device/sim"
	"phonepilot/device/sim/simwda"
)

func TestSimIOSIsAnIPhoneWithTheSimulatorsState(t *testing.T) {
	ctx := context.Background()
	set := backend.NewSet(backend.Options{})
	od, release, err := set.Open(ctx, "sim:ios")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := od.Device.LaunchApp(ctx, "Settings"); err != nil {
		t.Fatal(err)
	}
	sc, err := od.Device.Scene(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Package != "com.apple.Preferences" {
		t.Errorf("sim:ios shows %q in front, want Settings' bundle id", sc.Package)
	}
	if od.State == nil || od.Camera == nil {
		t.Fatalf("sim:ios: state %v camera %v, want both", od.State, od.Camera)
	}
	st, err := od.State.State(ctx)
	if err != nil || !strings.Contains(string(st), `"foreground":"com.android.settings"`) {
		t.Errorf("state: %v %.120s", err, st)
	}
	if err := od.Device.Key(ctx, device.KeyBack); !errors.Is(err, device.ErrUnsupported) {
		t.Errorf("back on sim:ios: %v, want ErrUnsupported", err)
	}
	labels := offered(t, set, "sim:ios")
	if labels["platform"] != "ios" || labels["ios"] == "" || labels["android"] != "" {
		t.Errorf("sim:ios labels %v, want platform=ios and an iOS version", labels)
	}
	if l := offered(t, set, "sim:a"); l["platform"] != "android" {
		t.Errorf("sim:a labels %v, want platform=android", l)
	}
}

func TestWDANames(t *testing.T) {
	for _, bad := range []string{"wda", "wda:", "wda:127.0.0.1:8100", "wda:ftp://x:1", "wda:http://u:p@h:1"} {
		if err := backend.Check(bad); !errors.Is(err, backend.ErrName) {
			t.Errorf("Check(%q) = %v, want ErrName", bad, err)
		}
	}
	if err := backend.Check("wda:http://127.0.0.1:8100"); err != nil {
		t.Errorf("wda:http://127.0.0.1:8100: %v", err)
	}
}

func TestWDAOpensAndLabels(t *testing.T) {
	p, err := sim.New(sim.Config{Locale: "zh"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(simwda.New(p))
	defer srv.Close()
	ctx := context.Background()
	name := "wda:" + srv.URL
	set := backend.NewSet(backend.Options{})
	od, release, err := set.Open(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if od.Kind != "wda" {
		t.Errorf("kind %q", od.Kind)
	}
	l := offered(t, set, name)
	if l["platform"] != "ios" || l["locale"] != "zh" || l["screen"] != "1080x2400" || l["ios"] != simwda.IOSVersion {
		t.Errorf("labels %v", l)
	}
}

// offered is the labels a farm worker's Scan offers name with.
func offered(t *testing.T, set *backend.Set, name string) map[string]string {
	t.Helper()
	offers, err := set.Scan(context.Background(), []string{name})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range offers {
		if o.Name == name {
			return o.Labels
		}
	}
	t.Fatalf("Scan offers no %s: %v", name, offers)
	return nil
}
