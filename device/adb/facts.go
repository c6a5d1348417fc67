package adb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"phonepilot/device"
)

// ErrNoVersion: `dumpsys package` showed the package without a version
// (a permission denial, a format this parser does not know).
var ErrNoVersion = errors.New("adb: no version in dumpsys package output")

// ParsePackageVersion reads the versionName and versionCode of pkg from
// `dumpsys package PKG` output. The installed package is the first
// "Package [pkg] (…):" record under "Packages:"; an updated system app is
// listed again under "Hidden system packages:" with its factory version,
// which is not the one that runs. No record of pkg: device.ErrAppNotFound.
func ParsePackageVersion(out []byte, pkg string) (name string, code int64, err error) {
	header := "Package [" + pkg + "] ("
	section := ""
	in, found, haveCode := false, false, false
	for _, raw := range strings.Split(string(out), "\n") {
		line := strings.TrimRight(raw, "\r")
		trimmed := strings.TrimSpace(line)
		if line != "" && line[0] != ' ' {
			// A top-level heading: "Packages:", "Hidden system packages:", …
			section, in = trimmed, false
			if found {
				break
			}
			continue
		}
		if strings.HasPrefix(trimmed, "Package [") {
			if found {
				break // the next package's record
			}
			in = section == "Packages:" && strings.HasPrefix(trimmed, header)
			found = in
			continue
		}
		if !in {
			continue
		}
		if v, ok := strings.CutPrefix(trimmed, "versionName="); ok && name == "" {
			name = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(trimmed, "versionCode="); ok && !haveCode {
			// "versionCode=1040100 minSdk=24 targetSdk=34"
			f, _, _ := strings.Cut(v, " ")
			if n, perr := strconv.ParseInt(f, 10, 64); perr == nil {
				code, haveCode = n, true
			}
		}
	}
	if !found {
		return "", 0, fmt.Errorf("adb: package %s is not installed: %w", pkg, device.ErrAppNotFound)
	}
	if name == "" && !haveCode {
		return "", 0, fmt.Errorf("%w for %s", ErrNoVersion, pkg)
	}
	return name, code, nil
}

// AppVersion reports the installed version of pkg (`dumpsys package PKG`):
// its versionName and versionCode. A package that is not installed is
// device.ErrAppNotFound.
func (d *Device) AppVersion(ctx context.Context, pkg string) (string, int64, error) {
	pkg = strings.TrimSpace(pkg)
	if pkg == "" || strings.ContainsAny(pkg, " \t\n'\"") {
		return "", 0, fmt.Errorf("adb: app version: bad package name %q: %w", pkg, device.ErrAppNotFound)
	}
	out, err := d.run(ctx, d.cfg.Timeouts.Command, "dumpsys package "+Quote(pkg))
	if err != nil {
		return "", 0, err
	}
	return ParsePackageVersion(out, pkg)
}

// Locale reports the phone's locale as a BCP 47 tag ("en-US", "zh-CN"):
// persist.sys.locale, set once a user picked a language, else the factory
// ro.product.locale.
func (d *Device) Locale(ctx context.Context) (string, error) {
	for _, prop := range []string{"persist.sys.locale", "ro.product.locale"} {
		out, err := d.run(ctx, d.cfg.Timeouts.Command, "getprop "+prop)
		if err != nil {
			return "", err
		}
		if l := strings.TrimSpace(string(out)); l != "" {
			return l, nil
		}
	}
	return "", fmt.Errorf("adb: locale: neither persist.sys.locale nor ro.product.locale is set: %w", device.ErrUnsupported)
}
