package sim

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"phonepilot/apps"
	"phonepilot/device"
)

// appVersion is an installed package's versionName and versionCode, as
// `dumpsys package PKG` prints them.
type appVersion struct {
	name string
	code int64
}

// versions are the simulated system packages' versions, of an Android 14
// Pixel image (docs/sim.md); the apps' (a Taobao of late 2024, the Pixel's
// own apps) are in their registration (installedApps).
var versions = map[string]appVersion{
	launcherPkg:                            {"14", 34},
	systemUIPkg:                            {"14", 34},
	permissionPkg:                          {"34 system image", 340010000},
	"com.google.android.inputmethod.latin": {"13.6.08.586383645-release-x86_64", 136083201},
	"android":                              {"14", 34},
	"com.android.shell":                    {"14", 34},
	"com.android.adbkeyboard":              {"2.0", 6},
}

// changedTaobao is the Taobao of the "changed" layout: the redesign came
// with an update, as on a phone.
var changedTaobao = appVersion{"10.42.20", 1042200}

// versionLocked is the installed version of pkg; ok is false when pkg is
// not installed. p.mu is held.
func (p *Phone) versionLocked(pkg string) (appVersion, bool) {
	all, _ := p.packages()
	installed := false
	for _, q := range all {
		if q == pkg {
			installed = true
			break
		}
	}
	if !installed {
		return appVersion{}, false
	}
	if pkg == taobaoPkg && p.cfg.Layout == LayoutChanged {
		return changedTaobao, true
	}
	if sa := registered(pkg); sa.pkg != "" {
		return sa.version, true
	}
	v, ok := versions[pkg]
	return v, ok
}

// locale is the phone's locale as persist.sys.locale says it ("en-US").
func (p *Phone) locale() string {
	if p.zh() {
		return "zh-CN"
	}
	return "en-US"
}

// AppVersion reports the installed version of pkg: its versionName and
// versionCode. A package that is not installed is device.ErrAppNotFound.
func (d *Device) AppVersion(ctx context.Context, pkg string) (string, int64, error) {
	if err := ctxErr(ctx, "app version"); err != nil {
		return "", 0, err
	}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	v, ok := d.p.versionLocked(strings.TrimSpace(pkg))
	if !ok {
		return "", 0, fmt.Errorf("sim app version: %s is not installed: %w", pkg, device.ErrAppNotFound)
	}
	return v.name, v.code, nil
}

// Locale reports the phone's locale as a BCP 47 tag: "en-US" or "zh-CN".
func (d *Device) Locale(ctx context.Context) (string, error) {
	if err := ctxErr(ctx, "locale"); err != nil {
		return "", err
	}
	return d.p.locale(), nil
}

// dumpsysPackage prints `dumpsys package PKG` as Android 14 does for an
// installed package (the lines a reader of the version looks for, in their
// order); an unknown package prints only the empty dexopt section.
func (p *Phone) dumpsysPackage(e *cmdEnv, pkg string) {
	v, ok := p.versionLocked(pkg)
	if !ok {
		e.out("Dexopt state:\n\nCompiler stats:\n")
		return
	}
	_, third := p.packages()
	dir := "/data/app/~~" + hexID("d"+pkg) + "==/" + pkg + "-" + hexID("a"+pkg) + "=="
	flags := "[ HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]"
	if !third[pkg] {
		dir = "/system/priv-app/" + pkg
		flags = "[ SYSTEM HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]"
	}
	e.out("Key Set Manager:\n  [%s]\n      Signing KeySets: 41\n\nPackages:\n", pkg)
	e.out("  Package [%s] (%s):\n    userId=10123\n    pkg=Package{%s %s}\n    codePath=%s\n    resourcePath=%s\n", pkg, hexID("ps"+pkg), hexID("pk"+pkg), pkg, dir, dir)
	e.out("    primaryCpuAbi=x86_64\n    secondaryCpuAbi=null\n    versionCode=%d minSdk=24 targetSdk=34\n    versionName=%s\n    splits=[base]\n    apkSigningVersion=3\n", v.code, v.name)
	e.out("    flags=%s\n    dataDir=/data/user/0/%s\n    timeStamp=2024-11-02 09:14:07\n    firstInstallTime=2024-11-02 09:14:08\n    lastUpdateTime=2024-11-02 09:14:08\n", flags, pkg)
	e.out("    installerPackageName=com.android.vending\n    pkgFlags=%s\n    User 0: ceDataInode=4211 installed=true hidden=false suspended=false distractionFlags=0 stopped=false notLaunched=false enabled=0 instant=false virtual=false\n\n", flags)
	e.out("Dexopt state:\n  [%s]\n    path: %s/base.apk\n      x86_64: [status=speed-profile] [reason=install-dm]\n", pkg, dir)
}

// StopApp force-stops an app as `am force-stop` does: its process ends and
// its next launch starts fresh. app is a package or a name LaunchApp takes.
func (d *Device) StopApp(ctx context.Context, app string) error {
	pkg := app
	if !apps.LooksLikePackage(app) {
		d.p.mu.Lock()
		a := d.p.resolveApp(app)
		d.p.mu.Unlock()
		if a == nil {
			return fmt.Errorf("sim: stop app %q: %w", app, device.ErrAppNotFound)
		}
		pkg = a.pkg()
	}
	var errOut bytes.Buffer
	if code := d.p.Exec(ctx, "am force-stop "+pkg, false, &bytes.Buffer{}, &errOut); code != 0 {
		return fmt.Errorf("sim: am force-stop: exit %d: %s", code, strings.TrimSpace(errOut.String()))
	}
	return nil
}
