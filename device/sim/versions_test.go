package sim

import (
	"errors"
	"strings"
	"testing"

	"phonepilot/device"
)

func TestAppVersionAndLocale(t *testing.T) {
	p := newTestPhone(t, Config{Locale: "zh", Start: Start{Uninstalled: []string{"Clock"}}})
	d := p.Device()
	if name, code, err := d.AppVersion(t.Context(), "com.taobao.taobao"); err != nil || name != "10.40.10" || code != 1040100 {
		t.Errorf("Taobao: %q %d %v", name, code, err)
	}
	if _, _, err := d.AppVersion(t.Context(), deskClockPkg); !errors.Is(err, device.ErrAppNotFound) {
		t.Errorf("uninstalled Clock: %v, want ErrAppNotFound", err)
	}
	if l, err := d.Locale(t.Context()); err != nil || l != "zh-CN" {
		t.Errorf("locale %q %v", l, err)
	}
	// Every listed package has a version (pm list packages and dumpsys agree).
	all, _ := p.packages()
	for _, pkg := range all {
		if _, _, err := d.AppVersion(t.Context(), pkg); err != nil {
			t.Errorf("%s: %v", pkg, err)
		}
	}
	changed := newTestPhone(t, Config{Layout: LayoutChanged}).Device()
	if name, _, _ := changed.AppVersion(t.Context(), taobaoPkg); name != "10.42.20" {
		t.Errorf("the redesigned Taobao is %q, want 10.42.20", name)
	}
	if l, _ := changed.Locale(t.Context()); l != "en-US" {
		t.Errorf("en locale %q", l)
	}
}

func TestShellDumpsysPackage(t *testing.T) {
	p := newTestPhone(t, Config{})
	out, _, code := sh(t, p, "dumpsys package com.taobao.taobao")
	if code != 0 || !strings.Contains(out, "\nPackages:\n  Package [com.taobao.taobao] (") ||
		!strings.Contains(out, "    versionCode=1040100 minSdk=24 targetSdk=34\n    versionName=10.40.10\n") {
		t.Errorf("dumpsys package taobao:\n%s", out)
	}
	if out, _, _ := sh(t, p, "dumpsys package com.nope"); strings.Contains(out, "Package [") {
		t.Errorf("unknown package printed a record:\n%s", out)
	}
}
