package main

import (
	"context"
	"encoding/json"
	"os"
	"phonepilot/apps"
	"phonepilot/device/backend"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"phonepilot/device/sim"
	"phonepilot/device/sim/simadb"
	"phonepilot/farm"
	"phonepilot/storage"
)

// The worker's devices: a simulated phone with its labels, and a phone
// through adb (here the simulator behind a private adb server) with the
// labels read from it, gone when unplugged and back when plugged again.
func TestWorkerDevicesSeeADBPhones(t *testing.T) {
	env := simadb.Start(t, sim.Config{Locale: "zh", Seed: 1})
	d := newWorkerDevices([]string{"adb", "sim:x"}, map[string]string{"rack": "a"}, deviceOptions{ADBServer: env.ServerAddr, SimLocale: "en"})
	find := func() (map[string]farm.Offer, error) {
		offers, err := d.Scan(t.Context())
		out := map[string]farm.Offer{}
		for _, o := range offers {
			out[o.Name] = o
		}
		return out, err
	}
	offers, err := find()
	if err != nil {
		t.Fatal(err)
	}
	phone, ok := offers["adb:"+env.Serial]
	if !ok {
		t.Fatalf("the adb phone is not offered: %v", offers)
	}
	for k, v := range map[string]string{"kind": "adb", "locale": "zh", "android": "14", "screen": "1080x2400", "rack": "a"} {
		if phone.Labels[k] != v {
			t.Errorf("adb phone label %s = %q, want %q (all: %v)", k, phone.Labels[k], v, phone.Labels)
		}
	}
	if phone.Labels["model"] == "" {
		t.Errorf("adb phone has no model label: %v", phone.Labels)
	}
	if s := offers["sim:x"]; s.Labels["kind"] != "sim" || s.Labels["locale"] != "en" || s.Labels["rack"] != "a" {
		t.Errorf("sim:x labels: %v", s.Labels)
	}
	env.StopPhone()
	waitOffers := func(want bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			offers, _ := find()
			if _, ok := offers["adb:"+env.Serial]; ok == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 10 s the unplugged/plugged phone is offered: %v, want %v", !want, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitOffers(false)
	if err := env.RestartPhone(); err != nil {
		t.Fatal(err)
	}
	waitOffers(true)
}

// Before each task the device shows its home screen and the app the last
// task left in front is stopped.
func TestResetDevice(t *testing.T) {
	od, err := openDevice(t.Context(), "sim", deviceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dev := od.Device
	if err := dev.LaunchApp(t.Context(), "Taobao"); err != nil {
		t.Fatal(err)
	}
	if err := resetDevice(t.Context(), dev, storage.Task{Goal: "open Settings"}, nil); err != nil {
		t.Fatal(err)
	}
	sc, err := dev.Scene(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sc.Package, "taobao") || !apps.NotAnApp(sc.Package) {
		t.Errorf("after the reset %s is in front", sc.Package)
	}
	raw, err := od.State.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Recents []string `json:"recents"` // the apps that run
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(st.Recents, "com.taobao.taobao") {
		t.Errorf("Taobao still runs after the reset: %v", st.Recents)
	}
	if got := goalApp("打开淘宝搜索Mac mini"); got != "com.taobao.taobao" {
		t.Errorf("goalApp(淘宝) = %q", got)
	}
	if got := goalApp("open Settings"); got == "" {
		t.Errorf("goalApp(open Settings) found no app")
	}
}

func TestWorkerSettings(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--label", "nokey"}, "KEY=VALUE"},
		{[]string{"--devices", "phone"}, "use " + backend.OfferForms()},
		{[]string{"--devices", "sim:a,sim:a"}, "given twice"},
		{[]string{"--name", "a@b"}, "no '@'"},
		{[]string{"--label", "bad key=1"}, "bad labels"},
	} {
		cmd := newWorkerCmd()
		cmd.SetContext(t.Context())
		if err := cmd.ParseFlags(c.args); err != nil {
			t.Fatal(err)
		}
		_, err := farmSettings(cmd, farmSection{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	cmd := newWorkerCmd()
	_ = cmd.ParseFlags([]string{"--label", "rack=b", "--devices", "sim:a", "--devices", "adb:X1"})
	s, err := farmSettings(cmd, farmSection{Name: "n", Labels: map[string]string{"rack": "a", "owner": "qa"}, Lease: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if s.name != "n" || s.labels["rack"] != "b" || s.labels["owner"] != "qa" || len(s.specs) != 2 || s.lease != 5*time.Second || !s.reset {
		t.Errorf("settings: %+v", s)
	}
	var _ *cobra.Command = cmd
}

// The [farm] section of the config file, under the flags.
func TestFarmConfigSection(t *testing.T) {
	path := t.TempDir() + "/phonepilot.toml"
	file := "[farm]\nname = \"rack-1\"\ndevices = [\"adb\", \"sim:a\"]\nheartbeat = \"1s\"\nlease = \"5s\"\nretry_interrupted = true\nreset = false\n[farm.labels]\nrack = \"a\"\n"
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(path, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	cmd := newWorkerCmd()
	_ = cmd.ParseFlags([]string{"--lease", "6s"})
	s, err := farmSettings(cmd, cfg.Farm)
	if err != nil {
		t.Fatal(err)
	}
	if s.name != "rack-1" || len(s.specs) != 2 || s.heartbeat != time.Second || s.lease != 6*time.Second || !s.retry || s.reset || s.labels["rack"] != "a" {
		t.Errorf("settings from [farm] and flags: %+v", s)
	}
	if err := os.WriteFile(path, []byte("[farm]\nlabelz = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadConfig(path, func(string) (string, bool) { return "", false }); err == nil {
		t.Error("an unknown [farm] key was accepted")
	}
}
