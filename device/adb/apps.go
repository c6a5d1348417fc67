package adb

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"

	"phonepilot/apps"
	"phonepilot/device"
)

// LaunchApp starts an app by package name, by a name from the apps table
// (English or Chinese), or by a name matching one installed package. An app
// that is not installed is device.ErrAppNotFound.
func (d *Device) LaunchApp(ctx context.Context, app string) error {
	app = strings.TrimSpace(app)
	if app == "" {
		return fmt.Errorf("adb: launch app: empty name: %w", device.ErrAppNotFound)
	}
	installed, err := d.Packages(ctx)
	if err != nil {
		return err
	}
	pkg, err := ResolveApp(app, installed)
	if err != nil {
		return err
	}
	cmd := "monkey -p " + Quote(pkg) + " -c android.intent.category.LAUNCHER 1"
	out, err := d.run(ctx, d.cfg.Timeouts.Command, cmd)
	if err != nil {
		if ce, ok := err.(*CommandError); ok && bytes.Contains([]byte(ce.Output), []byte("No activities found")) {
			return fmt.Errorf("adb: %s has no launcher activity: %w", pkg, device.ErrAppNotFound)
		}
		return err
	}
	if bytes.Contains(out, []byte("No activities found")) || bytes.Contains(out, []byte("monkey aborted")) {
		return fmt.Errorf("adb: %s has no launcher activity: %w", pkg, device.ErrAppNotFound)
	}
	d.log.Debug("launched", "app", app, "package", pkg)
	return nil
}

// ResolveApp picks the package to launch for app among the installed
// packages: the package itself, a name of the apps table, or else one installed
// package whose name contains the normalised name.
func ResolveApp(app string, installed []string) (string, error) {
	has := make(map[string]bool, len(installed))
	for _, p := range installed {
		has[p] = true
	}
	if apps.LooksLikePackage(app) {
		if has[app] {
			return app, nil
		}
		if _, known := apps.Lookup(app); !known {
			return "", fmt.Errorf("adb: package %s is not installed: %w; %s", app, device.ErrAppNotFound, closest(app, installed))
		}
	}
	if a, ok := apps.Lookup(app); ok {
		for _, p := range a.Packages {
			if has[p] {
				return p, nil
			}
		}
		return "", fmt.Errorf("adb: %s (%s) is not installed: %w; %s", app, strings.Join(a.Packages, " or "), device.ErrAppNotFound, closest(app, installed))
	}
	key := apps.Key(app)
	if key == "" {
		return "", fmt.Errorf("adb: no app named %q: %w", app, device.ErrAppNotFound)
	}
	var matches []string
	for _, p := range installed {
		segs := strings.Split(strings.ToLower(p), ".")
		if apps.Key(segs[len(segs)-1]) == key {
			matches = append(matches, p)
		}
	}
	if len(matches) == 0 {
		for _, p := range installed {
			if strings.Contains(apps.Key(p), key) {
				matches = append(matches, p)
			}
		}
	}
	sort.Strings(matches)
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("adb: no installed app matches %q: %w; %s", app, device.ErrAppNotFound, closest(app, installed))
	case 1:
		return matches[0], nil
	}
	return "", fmt.Errorf("adb: %q matches several installed packages (%s); name the package: %w",
		app, strings.Join(matches, ", "), device.ErrAppNotFound)
}

// closest names the installed apps nearest to app for an "app not found"
// error: by the table's names for their packages, else the packages.
func closest(app string, installed []string) string {
	as := make([]apps.Installed, 0, len(installed))
	for _, p := range installed {
		as = append(as, apps.Installed{Package: p, Names: apps.NamesOf(p)})
	}
	return apps.ClosestText(app, as)
}

// Packages lists the installed packages (`pm list packages`).
func (d *Device) Packages(ctx context.Context) ([]string, error) {
	out, err := d.run(ctx, d.cfg.Timeouts.Command, "pm list packages")
	if err != nil {
		return nil, err
	}
	return parsePackages(out), nil
}

func parsePackages(out []byte) []string {
	var pkgs []string
	for _, line := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "package:"); ok && p != "" {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs
}

func (d *Device) hasPackage(ctx context.Context, pkg string) (bool, error) {
	pkgs, err := d.Packages(ctx)
	if err != nil {
		return false, err
	}
	for _, p := range pkgs {
		if p == pkg {
			return true, nil
		}
	}
	return false, nil
}

// StopApp force-stops an app (`am force-stop`): its process ends and its
// next launch starts fresh. app is a package or a name LaunchApp takes
// (resolved among the installed packages the same way).
func (d *Device) StopApp(ctx context.Context, app string) error {
	pkg := strings.TrimSpace(app)
	if !apps.LooksLikePackage(pkg) {
		if pkg == "" {
			return fmt.Errorf("adb: stop app: empty name: %w", device.ErrAppNotFound)
		}
		installed, err := d.Packages(ctx)
		if err != nil {
			return err
		}
		if pkg, err = ResolveApp(pkg, installed); err != nil {
			return err
		}
	}
	_, err := d.run(ctx, d.cfg.Timeouts.Command, "am force-stop "+Quote(pkg))
	return err
}
