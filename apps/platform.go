package apps

import (
	"slices"
	"strings"
)

// Platform facts: what the phone's own packages are to an agent, beside the
// table of the apps a user names. They are matched on a part of the package
// name, because vendors ship the same role under their own prefix
// (com.google.android.permissioncontroller, com.oplus.systemui,
// com.sec.android.app.launcher). The scene reader, the rule planner, the
// executor's checks, the safety gate and the farm worker all ask here.
// SystemServer is the system server's package: "App isn't responding",
// "Choose an app", the power dialog.
const SystemServer = "android"

var (
	// permissionParts draw runtime-permission prompts and install dialogs
	// (packageinstaller: Android 9 and older); permissionPackages are the
	// vendors' own that the parts do not name.
	permissionParts    = []string{"permissioncontroller", "packageinstaller"}
	permissionPackages = []string{"com.lbe.security.miui"} // MIUI's permission dialogs
	// dialogParts draw other system dialogs over any app: Play services'
	// system update and sign-in sheets.
	dialogParts = []string{"com.google.android.gms"}
	// decorationParts decorate the screen rather than being an app: the
	// status and navigation bars and the shade (systemui, with its vendor
	// plugins), keyboards (inputmethod, .ime), Samsung's edge panel.
	decorationParts    = []string{"systemui", "inputmethod"}
	decorationPackages = []string{"", "gesture", SystemServer, "com.samsung.android.app.cocktailbarservice"}
	// launcherPart names the home screen's package on every Android vendor;
	// launcherPackages are the home screens it does not name: an iPhone's
	// is SpringBoard (which also owns system alerts; WDA's activeAppInfo
	// names it only when the home screen is in front).
	launcherPart     = "launcher"
	launcherPackages = []string{"com.apple.springboard"}
)

// PermissionPrompt reports a package that shows runtime-permission prompts.
func PermissionPrompt(pkg string) bool {
	p := strings.ToLower(pkg)
	return containsAny(p, permissionParts) || slices.Contains(permissionPackages, p)
}

// SystemDialog reports a package that draws the system's own dialogs over
// any app: permission prompts, the system server's dialogs (App isn't
// responding), Play services' sheets. One of them coming to the front is an
// interruption, not what a tap in the app did.
func SystemDialog(pkg string) bool {
	return pkg == SystemServer || PermissionPrompt(pkg) || containsAny(strings.ToLower(pkg), dialogParts)
}

// SystemUI reports the system UI's package (status bar, navigation bar,
// notification shade, and its vendors' plugins).
func SystemUI(pkg string) bool { return strings.Contains(strings.ToLower(pkg), "systemui") }

// Decoration reports a package whose windows decorate the screen rather than
// being the app a user is in: the system UI, gesture areas, the system
// server, input methods, edge panels ("" too: a window nobody owns).
func Decoration(pkg string) bool {
	p := strings.ToLower(pkg)
	return slices.Contains(decorationPackages, p) || containsAny(p, decorationParts) || strings.HasSuffix(p, ".ime")
}

// Launcher reports the home screen's package: where the home key leads.
func Launcher(pkg string) bool {
	p := strings.ToLower(pkg)
	return strings.Contains(p, launcherPart) || slices.Contains(launcherPackages, p)
}

// NotAnApp reports a package that is the phone rather than an app a user
// opened: the launcher and the screen's decorations. Stopping it would stop
// the phone's own UI.
func NotAnApp(pkg string) bool { return Launcher(pkg) || Decoration(pkg) }

func containsAny(s string, parts []string) bool {
	for _, p := range parts {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
