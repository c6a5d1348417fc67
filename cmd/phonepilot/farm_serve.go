package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"phonepilot/api"
	"phonepilot/device"
	"phonepilot/farm"
	"phonepilot/storage"
	"phonepilot/storage/postgres"
	"phonepilot/task"
)

// serveDeviceSet is what serve needs of its devices: the API's listing and
// the task service's check.
type serveDeviceSet interface {
	api.Devices
	task.Devices
}

// openFarmFront opens serve as a front of the farm in dsn: the store, the
// front (task.Queue) and the farm's devices. Recovery is the farm's (leases),
// so the store is opened without task.Recover.
func openFarmFront(ctx context.Context, dsn string, log *slog.Logger) (storage.Store, *farm.Front, serveDeviceSet, func(), error) {
	store, err := postgres.Open(ctx, dsn)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("open database: %w", err)
	}
	pool, err := farm.OpenPool(ctx, dsn)
	if err != nil {
		store.Close()
		return nil, nil, nil, nil, err
	}
	front, err := farm.NewFront(pool, store, log)
	if err != nil {
		pool.Close()
		store.Close()
		return nil, nil, nil, nil, err
	}
	return store, front, &farmDevices{front: front}, func() { pool.Close(); store.Close() }, nil
}

// farmDevices are the devices of the farm, as its workers registered them.
type farmDevices struct{ front *farm.Front }

var _ serveDeviceSet = (*farmDevices)(nil)

var farmDeviceName = regexp.MustCompile(`^(sim:[A-Za-z0-9][A-Za-z0-9._-]{0,63}|adb:\S{1,200})$`)

// Check implements task.Devices and api.Devices: "any", or a device some
// worker of the farm offered (it may be offline: the task waits for it).
func (d *farmDevices) Check(name string) error {
	if name == farm.AnyDevice {
		return nil
	}
	if !farmDeviceName.MatchString(name) {
		return fmt.Errorf("%q is not a farm device: use any (with labels), sim:NAME or adb:SERIAL", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, ok, err := d.front.Device(ctx, name)
	switch {
	case err != nil:
		return fmt.Errorf("look %s up in the farm: %w", name, err)
	case !ok:
		return fmt.Errorf("no worker of the farm offers %s (see GET /v1/devices)", name)
	}
	return nil
}

// List implements api.Devices: every device of the farm.
func (d *farmDevices) List(ctx context.Context) ([]api.DeviceInfo, error) {
	devs, err := d.front.Devices(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.DeviceInfo, 0, len(devs))
	for _, fd := range devs {
		kind := "sim"
		if len(fd.Name) > 4 && fd.Name[:4] == "adb:" {
			kind = "adb"
		}
		hb := fd.Heartbeat
		out = append(out, api.DeviceInfo{Name: fd.Name, Kind: kind, State: string(fd.State), Worker: fd.Worker,
			Host: fd.Host, Labels: fd.Labels, Heartbeat: &hb})
	}
	return out, nil
}

// State implements api.Devices: a farm device's phone lives in its
// worker's process, which this front cannot reach.
func (d *farmDevices) State(ctx context.Context, name string) (json.RawMessage, error) {
	fd, ok, err := d.front.Device(ctx, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s: no worker of the farm offers it", api.ErrUnknownDevice, name)
	}
	return nil, fmt.Errorf("%w: %s runs in worker %s on %s; its state is not served by the farm's fronts", api.ErrNoState, name, fd.Worker, fd.Host)
}

// Open implements task.Devices: a front never opens a device (its service
// has a Queue, so it runs no task).
func (d *farmDevices) Open(context.Context, string) (device.Device, func(), error) {
	return nil, nil, errors.New("a farm's front runs no tasks; its workers do")
}
