package task

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"phonepilot/device"
	"phonepilot/scene"
)

// DeviceInfo is what the service learned of the device a task ran on: its
// locale and the versions of the apps the task's screens showed. It is
// stored in the task's config under "device_info" when the task ends, so a
// flow exported from the task says what it was recorded on.
type DeviceInfo struct {
	Locale string    `json:"locale,omitempty"`
	Apps   []AppInfo `json:"apps,omitempty"`
	// Observer is how the phone was read and driven at the task's end
	// (device.ObserverReporter: "helper", or "uiautomator" and why).
	Observer *device.ObserverState `json:"observer,omitempty"`
}

// AppInfo is one app's installed version.
type AppInfo struct {
	Package     string `json:"package"`
	Version     string `json:"version,omitempty"`
	VersionCode int64  `json:"version_code,omitempty"`
}

// DeviceInfoOf reads the device info a task's config carries (zero when
// the task ran before it was recorded, or on a device that cannot say).
func DeviceInfoOf(cfg json.RawMessage) DeviceInfo {
	var c struct {
		Info DeviceInfo `json:"device_info"`
	}
	_ = json.Unmarshal(cfg, &c)
	return c.Info
}

// factsTimeout bounds the questions asked of a device after its task: a
// phone that went away must not hold the task's end.
const factsTimeout = 5 * time.Second

// appsSeen collects the packages of the screens a task's events show, in
// the order they first appear.
type appsSeen struct {
	mu   sync.Mutex
	pkgs []string
}

func (a *appsSeen) add(sc *scene.Scene) {
	if sc == nil || sc.Package == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !slices.Contains(a.pkgs, sc.Package) {
		a.pkgs = append(a.pkgs, sc.Package)
	}
}

func (a *appsSeen) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.pkgs)
}

// deviceInfo asks dev, when it can say (it is a device.Facts), for its
// locale and the versions of pkgs. What it cannot answer is left out; nil
// when nothing was learned.
func deviceInfo(ctx context.Context, dev device.Device, pkgs []string) *DeviceInfo {
	info := observerInfo(dev)
	f, ok := dev.(device.Facts)
	if !ok {
		return info
	}
	if info == nil {
		info = &DeviceInfo{}
	}
	ctx, cancel := context.WithTimeout(ctx, factsTimeout)
	defer cancel()
	if l, err := f.Locale(ctx); err == nil {
		info.Locale = l
	}
	for _, pkg := range pkgs {
		if ctx.Err() != nil {
			break
		}
		if name, code, err := f.AppVersion(ctx, pkg); err == nil && (name != "" || code != 0) {
			info.Apps = append(info.Apps, AppInfo{Package: pkg, Version: name, VersionCode: code})
		}
	}
	if info.Locale == "" && len(info.Apps) == 0 && info.Observer == nil {
		return nil
	}
	return info
}

// observerInfo is what the device says of how it was observed, asking the
// phone nothing (so a phone that is gone still has it recorded); nil when
// the device cannot say.
func observerInfo(dev device.Device) *DeviceInfo {
	o, ok := dev.(device.ObserverReporter)
	if !ok {
		return nil
	}
	st := o.Observer()
	return &DeviceInfo{Observer: &st}
}

// withDeviceInfo is cfg with info under "device_info".
func withDeviceInfo(cfg json.RawMessage, info *DeviceInfo) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(cfg) > 0 && string(cfg) != "null" {
		if err := json.Unmarshal(cfg, &m); err != nil {
			return nil, err
		}
	}
	b, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	m["device_info"] = b
	return json.Marshal(m)
}
