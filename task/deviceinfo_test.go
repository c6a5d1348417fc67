package task

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"phonepilot/device"
	"phonepilot/device/fake"
	"phonepilot/lifecycle"
	"phonepilot/runtime"
	"phonepilot/scene"
	"phonepilot/storage"
)

// factsDevice is a fake phone that knows its locale and app versions.
type factsDevice struct {
	*fake.Device
	versions map[string]string
	asked    []string
}

func (d *factsDevice) Locale(context.Context) (string, error) { return "zh-CN", nil }

func (d *factsDevice) AppVersion(_ context.Context, pkg string) (string, int64, error) {
	d.asked = append(d.asked, pkg)
	v, ok := d.versions[pkg]
	if !ok {
		return "", 0, fmt.Errorf("%s: %w", pkg, device.ErrAppNotFound)
	}
	return v, 7, nil
}

// A task's end records, in its config, the device's locale and the
// versions of the apps its screens showed; what the config held stays.
func TestTaskRecordsDeviceInfo(t *testing.T) {
	store := openStore(t)
	s := newService(t, store, RunnerFunc(func(ctx context.Context, _ storage.Task, _ device.Device, emit func(runtime.Event), _ runtime.Person) runtime.Result {
		emit(runtime.Event{Type: lifecycle.EventSceneObserved, Scene: &scene.Scene{Package: "com.google.android.apps.nexuslauncher"}})
		emit(runtime.Event{Type: lifecycle.EventSceneObserved, Scene: &scene.Scene{Package: "com.taobao.taobao"}})
		emit(runtime.Event{Type: lifecycle.EventSceneObserved, Scene: &scene.Scene{Package: "com.taobao.taobao"}})
		return runtime.Result{Status: lifecycle.Completed, FinalScene: &scene.Scene{Package: "com.gone.app"}}
	}), func(c *Config) {
		c.Snapshot = func(Request) json.RawMessage { return json.RawMessage(`{"device":"sim","planner":"rule"}`) }
	})
	dev := &factsDevice{Device: fake.New(&scene.Scene{Package: "x"}),
		versions: map[string]string{"com.taobao.taobao": "10.40.10", "com.google.android.apps.nexuslauncher": "14"}}
	tk, _, err := s.RunNow(t.Context(), Request{Goal: "g", Device: "sim", Planner: "rule"}, dev)
	if err != nil {
		t.Fatal(err)
	}
	s.Close(t.Context())
	got, _ := store.Task(t.Context(), tk.ID)
	want := DeviceInfo{Locale: "zh-CN", Apps: []AppInfo{
		{Package: "com.google.android.apps.nexuslauncher", Version: "14", VersionCode: 7},
		{Package: "com.taobao.taobao", Version: "10.40.10", VersionCode: 7},
	}}
	if info := DeviceInfoOf(got.Config); !reflect.DeepEqual(info, want) {
		t.Errorf("stored device info %+v, want %+v (config %s)", info, want, got.Config)
	}
	var c struct{ Device, Planner string }
	if json.Unmarshal(got.Config, &c); c.Device != "sim" || c.Planner != "rule" {
		t.Errorf("the snapshot was lost: %s", got.Config)
	}
	if !reflect.DeepEqual(dev.asked, []string{"com.google.android.apps.nexuslauncher", "com.taobao.taobao", "com.gone.app"}) {
		t.Errorf("asked for %v: each app once, the final screen's too", dev.asked)
	}
}

// A device that cannot say leaves the config as it was.
func TestTaskWithoutDeviceFactsKeepsItsConfig(t *testing.T) {
	store := openStore(t)
	s := newService(t, store, RunnerFunc(func(ctx context.Context, _ storage.Task, _ device.Device, emit func(runtime.Event), _ runtime.Person) runtime.Result {
		emit(runtime.Event{Type: lifecycle.EventSceneObserved, Scene: &scene.Scene{Package: "com.taobao.taobao"}})
		return runtime.Result{Status: lifecycle.Completed}
	}), func(c *Config) {
		c.Snapshot = func(Request) json.RawMessage { return json.RawMessage(`{"device":"sim"}`) }
	})
	tk, _, err := s.RunNow(t.Context(), Request{Goal: "g", Device: "sim", Planner: "rule"}, fake.New(&scene.Scene{Package: "x"}))
	if err != nil {
		t.Fatal(err)
	}
	s.Close(t.Context())
	got, _ := store.Task(t.Context(), tk.ID)
	if string(got.Config) != `{"device":"sim"}` {
		t.Errorf("config %s", got.Config)
	}
}

// A task whose phone vanished does not wait on it for its facts: nothing
// is asked, and the task ends as the runner said.
func TestTaskWhosePhoneIsGoneDoesNotAskIt(t *testing.T) {
	store := openStore(t)
	s := newService(t, store, RunnerFunc(func(ctx context.Context, _ storage.Task, _ device.Device, emit func(runtime.Event), _ runtime.Person) runtime.Result {
		emit(runtime.Event{Type: lifecycle.EventSceneObserved, Scene: &scene.Scene{Package: "com.taobao.taobao"}})
		return runtime.Result{Status: lifecycle.Failed, Cause: lifecycle.CauseDeviceGone, Reason: "the phone stopped answering"}
	}))
	dev := &factsDevice{Device: fake.New(&scene.Scene{Package: "x"}), versions: map[string]string{"com.taobao.taobao": "10.40.10"}}
	tk, _, err := s.RunNow(t.Context(), Request{Goal: "g", Device: "sim", Planner: "rule"}, dev)
	if err != nil {
		t.Fatal(err)
	}
	s.Close(t.Context())
	if len(dev.asked) != 0 {
		t.Errorf("asked a gone phone for %v", dev.asked)
	}
	got, _ := store.Task(t.Context(), tk.ID)
	if got.Cause != lifecycle.CauseDeviceGone {
		t.Errorf("task ended %s/%s", got.Status, got.Cause)
	}
}
