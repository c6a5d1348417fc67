package backend

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The device names the table takes, and a Set's kept phones: one per
// sim:NAME, listed, bounded by MaxKept.
func TestSetDeviceNames(t *testing.T) {
	d := NewSet(Options{SimLocale: "en", ADBServer: "127.0.0.1:1"})
	for name, ok := range map[string]bool{
		"sim": true, "sim:a": true, "sim:bench-07.x_y": true, "adb": true, "adb:emulator-5554": true, "adb:192.168.1.5:5555": true,
		"": false, "sim:": false, "sim:a b": false, "sim:" + strings.Repeat("x", 65): false, "adb:": false, "toaster": false, "SIM": false,
	} {
		if err := d.Check(name); (err == nil) != ok {
			t.Errorf("Check(%q) = %v, want ok=%v", name, err, ok)
		}
	}
	// sim:NAME is one phone per name, kept: the second open sees the first's screen.
	dev1, _, err := d.Open(t.Context(), "sim:keep")
	if err != nil {
		t.Fatal(err)
	}
	if err := dev1.Device.LaunchApp(t.Context(), "Settings"); err != nil {
		t.Fatal(err)
	}
	dev2, _, _ := d.Open(t.Context(), "sim:keep")
	other, _, _ := d.Open(t.Context(), "sim:other")
	s2, _ := dev2.Device.Scene(t.Context())
	so, _ := other.Device.Scene(t.Context())
	if !strings.Contains(s2.Package, "settings") || strings.Contains(so.Package, "settings") {
		t.Errorf("sim:keep reopened shows %s, sim:other shows %s", s2.Package, so.Package)
	}
	list, _ := d.List(t.Context())
	var names []string
	for _, di := range list {
		if di.Kind == "sim" { // the simulated phones (other backends list theirs)
			names = append(names, di.Name)
		}
	}
	if !slices.Equal(names, []string{"sim", "sim:keep", "sim:other"}) {
		t.Errorf("devices %v", names)
	}
	for i := len(d.kept); i < MaxKept; i++ {
		d.kept[fmt.Sprintf("sim:f%d", i)] = nil
	}
	if err := d.Check("sim:one-too-many"); err == nil {
		t.Error("more simulated phones than MaxKept accepted")
	}
	if err := d.Check("sim:keep"); err != nil {
		t.Errorf("an existing phone refused at the cap: %v", err)
	}
}
