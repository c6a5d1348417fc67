package flow

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"phonepilot/device"
	"phonepilot/device/sim"
	"phonepilot/lifecycle"
	"phonepilot/storage"
)

// Export writes the locale and app versions the task service recorded in
// the task's config; a task without them exports without them.
func TestExportRecordsTheDevicesLocaleAndAppVersions(t *testing.T) {
	srv := aitestServer(t)
	_, steps, _, _ := run(t, sim.Config{}, aiGoals["en"], aiPlanner(t, srv))
	tk := storage.Task{ID: "t1", Goal: aiGoals["en"], Planner: "ai", Device: "sim", Status: lifecycle.Completed,
		Config: json.RawMessage(`{"device":"sim","sim":{"locale":"en"},"device_info":{"locale":"en-US","apps":[` +
			`{"package":"com.google.android.apps.nexuslauncher","version":"14","version_code":34},` +
			`{"package":"com.taobao.taobao","version":"10.40.10","version_code":1040100}]}}`)}
	f, err := Export(tk, steps)
	if err != nil {
		t.Fatal(err)
	}
	if f.Recorded.Locale != "en-US" || !reflect.DeepEqual(f.Recorded.Apps, []App{{Package: "com.taobao.taobao", Version: "10.40.10"}}) {
		t.Errorf("recorded %+v", f.Recorded)
	}
	out, err := Marshal(f)
	if err != nil || !strings.Contains(string(out), "  locale: en-US\n") || !strings.Contains(string(out), "    - package: com.taobao.taobao\n      version: 10.40.10\n") {
		t.Errorf("written (%v):\n%s", err, out)
	}
	if _, err := Parse(out); err != nil {
		t.Errorf("the written flow does not parse: %v", err)
	}

	tk.Config = json.RawMessage(`{"device":"sim","sim":{"locale":"en"}}`) // before versions were recorded
	old, err := Export(tk, steps)
	if err != nil {
		t.Fatal(err)
	}
	if old.Recorded.Locale != "en" || !reflect.DeepEqual(old.Recorded.Apps, []App{{Package: "com.taobao.taobao"}}) {
		t.Errorf("old task recorded %+v", old.Recorded)
	}
	if out, _ := Marshal(old); strings.Contains(string(out), "version: ") && !strings.Contains(string(out), "version: 1\n") {
		t.Errorf("an old task's flow names a version:\n%s", out)
	}
}

func TestDriftOnTheSimulator(t *testing.T) {
	rec := func(locale, taobao string) *Recorded {
		return &Recorded{Locale: locale, Apps: []App{{Package: "com.taobao.taobao", Version: taobao}}}
	}
	en, err := sim.New(sim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	changed, err := sim.New(sim.Config{Locale: "zh", Layout: sim.LayoutChanged, Start: sim.Start{Uninstalled: []string{"Clock"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		rec  *Recorded
		dev  device.Device
		want []string
	}{
		{"same device", rec("en-US", "10.40.10"), en.Device(), nil},
		{"old flow: language only, no version", rec("en", ""), en.Device(), nil},
		{"nothing recorded", nil, en.Device(), nil},
		{"a device that cannot say", rec("zh-CN", "1.0"), struct{ device.Device }{en.Device()}, nil},
		{"older Taobao", rec("en-US", "10.30.0"), en.Device(), []string{"com.taobao.taobao is 10.40.10 here, recorded on 10.30.0"}},
		{"redesign and locale", rec("en", "10.40.10"), changed.Device(),
			[]string{"com.taobao.taobao is 10.42.20 here, recorded on 10.40.10", "the locale is zh-CN here, recorded on en"}},
		{"not installed", &Recorded{Apps: []App{{Package: "com.google.android.deskclock", Version: "7.8 (617513244)"}}}, changed.Device(),
			[]string{"com.google.android.deskclock is not installed (recorded on 7.8 (617513244))"}},
	} {
		if got := Drift(t.Context(), tc.rec, tc.dev); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if n := DriftNotice(nil); n != "" {
		t.Errorf("no difference, notice %q", n)
	}
}
