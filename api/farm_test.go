package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"phonepilot/internal/testlog"
	"phonepilot/storage"
	"phonepilot/storage/sqlite"
	"phonepilot/task"
)

// labelFarm is a farm's queue that has only zh phones: it refuses an "any"
// task for other labels the way farm.Front does (wrapping
// task.ErrUnroutable) and stores the rest.
type labelFarm struct{ store storage.Store }

func (q labelFarm) Create(ctx context.Context, t storage.Task, labels map[string]string) (storage.Task, error) {
	if labels["locale"] != "zh" {
		return storage.Task{}, fmt.Errorf("%w: no device of the farm has the labels locale=%s; the farm's devices have locale=zh",
			task.ErrUnroutable, labels["locale"])
	}
	return q.store.CreateTask(ctx, t)
}

func (labelFarm) Command(context.Context, string, task.Command) error { return task.ErrConflict }

// farmDevs accepts "any" besides the simulators.
type farmDevs struct{ *fakeDevices }

func (d farmDevs) Check(name string) error {
	if name == "any" {
		return nil
	}
	return d.fakeDevices.Check(name)
}

// An "any" task no device of the farm could take is refused with a 400
// that names the labels, not queued to wait forever, nor a 500.
func TestFarmUnroutableTaskIsRefused(t *testing.T) {
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "pp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	log := testlog.New(t)
	devs := farmDevs{&fakeDevices{}}
	svc, err := task.New(task.Config{Queue: labelFarm{store}, Logger: log, PollInterval: 50 * time.Millisecond}, store, devs, &fakeRunner{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Defaults(), svc, devs, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	h := &harness{t: t, srv: srv, ts: ts, store: store, devices: devs.fakeDevices}
	var e apiError
	resp := h.do("POST", "/v1/tasks", `{"goal":"g","device":"any","labels":{"locale":"fr"}}`, &e)
	if resp.StatusCode != http.StatusBadRequest || e.Error.Field != "labels" ||
		!strings.Contains(e.Error.Message, "locale=fr") || !strings.Contains(e.Error.Message, "locale=zh") {
		t.Errorf("an any task for labels no device has: %d %+v, want 400 on labels naming both label sets", resp.StatusCode, e.Error)
	}
	resp = h.do("POST", "/v1/tasks", `{"goal":"g","device":"any","labels":{"locale":"zh"}}`, nil)
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("an any task a zh phone can take: %d, want 202", resp.StatusCode)
	}
}
