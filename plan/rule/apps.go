package rule

import (
	"strings"

	"phonepilot/apps"
)

// The app names a goal may use, and the package each stands for, come from
// the one table of app identity (package apps). Apps not listed still
// launch (the device resolves the name); the step then expects the
// foreground app to change.

// knownApp reports whether name is an app the table knows.
func knownApp(name string) bool { _, ok := apps.Lookup(unquote(name)); return ok }

// appPackage returns the package the table knows for name, or "".
func appPackage(name string) string { return apps.Package(strings.TrimSpace(name)) }

// inApp reports whether pkg is the app named name: by the table, by the
// package itself, or by a package segment spelling the name.
func inApp(pkg, name string) bool { return apps.InFront(pkg, name) }
