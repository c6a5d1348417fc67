package main

import (
	"strings"

	"phonepilot/device/sim"
)

// simProfileHelp is the help of every --sim-profile flag: the profiles the
// simulator has, from its own list (docs/sim.md says what each does).
func simProfileHelp(what string) string {
	return what + `: "" (none), ` + strings.Join(sim.ProfileNames(), ", ") + " (docs/sim.md)"
}
