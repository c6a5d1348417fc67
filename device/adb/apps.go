package adb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"phonepilot/apps"
	"phonepilot/device"
	"phonepilot/device/adb/helper"
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
	if done, err := d.launchViaHelper(ctx, pkg); done {
		return err
	}
	if err := d.monkeyLaunch(ctx, pkg); err != nil {
		return err
	}
	d.log.Debug("launched", "app", app, "package", pkg)
	return nil
}

// monkeyLaunch starts pkg's launcher activity with `monkey` (a Java process
// on the phone), what device/adb runs without the helper; a package with no
// launcher activity is device.ErrAppNotFound.
func (d *Device) monkeyLaunch(ctx context.Context, pkg string) error {
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
	return nil
}

// launchViaHelper starts pkg's launcher activity inside the helper (the
// activity manager's binder: no `monkey` Java process on the phone) when
// the helper is the observer and its protocol serves it. done says whether
// that settled the launch; when it did not, the caller runs `monkey`:
//
//   - the helper is not in use (uiautomator, or fallen back for good);
//   - it is older than helper.LaunchVersion, or this Android build lacks
//     the members (CodeUnsupported): monkey from now on for this phone;
//   - it refused or failed this start (CodeRefused, CodeFailed, ...):
//     monkey for this launch (monkey needs no UiAutomation, so the helper
//     keeps running for everything else).
//
// A helper that dies is restarted once and then given up as for any other
// request (viaHelper); the launch then goes through monkey. A package with
// no launcher activity is device.ErrAppNotFound, as monkey's "No
// activities found" is.
func (d *Device) launchViaHelper(ctx context.Context, pkg string) (done bool, err error) {
	l := &d.helper
	l.mu.Lock()
	off := l.noLaunch
	l.mu.Unlock()
	if off {
		return false, nil
	}
	var component string
	notServed := false
	used, err := d.viaHelper(ctx, "launch", d.cfg.Timeouts.Stall, func(ctx context.Context, c *helper.Client) error {
		if !c.Serves(helper.OpLaunch) {
			notServed = true
			return nil
		}
		var err error
		component, err = c.Launch(ctx, pkg)
		return err
	})
	if !used {
		return false, nil
	}
	var he *helper.Error
	switch {
	case err == nil && notServed:
		d.launchOff("the helper's protocol predates launch")
		return false, nil
	case err == nil:
		d.log.Debug("launched through the helper", "package", pkg, "component", component)
		return true, nil
	case errors.As(err, &he) && he.Code == helper.CodeNotFound:
		return true, fmt.Errorf("adb: %s has no launcher activity: %w", pkg, device.ErrAppNotFound)
	case errors.As(err, &he) && (he.Code == helper.CodeUnsupported || he.Code == helper.CodeBadRequest):
		d.launchOff(he.Message)
		return false, nil
	case errors.As(err, &he):
		d.log.Warn("the helper did not start the app; launching with monkey", "package", pkg, "err", err)
		return false, nil
	}
	// The phone is gone or frozen, ctx ended, or --observer helper and the helper is down.
	return true, err
}

// launchOff sends every later launch on this phone through monkey.
func (d *Device) launchOff(why string) {
	d.helper.mu.Lock()
	d.helper.noLaunch = true
	d.helper.mu.Unlock()
	d.log.Warn("the helper cannot start apps on this phone; launching with monkey from now on", "reason", why)
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
