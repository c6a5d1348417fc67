package device

import (
	"context"
	"time"
)

// ObserverState says how a phone's screen is read and driven right now
// ("helper": phonepilot's helper on the phone; "uiautomator": one
// `uiautomator dump` and one `input` process per call) and, after a
// switch, why.
type ObserverState struct {
	Name string `json:"name"`
	// Reason is why the phone is not on the observer asked for (empty when it is).
	Reason string `json:"reason,omitempty"`
	// Switches counts the switches so far (a caller that saw fewer reports one).
	Switches int `json:"switches,omitempty"`
	// Failed is when the observer asked for first failed (a helper that
	// died, before its restart), and At when the device switched, both on
	// the host's clock: At − Failed is what the fallback took, apart from
	// the reads and the planning around it.
	Failed time.Time `json:"failed,omitzero"`
	At     time.Time `json:"at,omitzero"`
}

// ObserverReporter is a device that can say how it observes the screen
// (device/adb). Optional: found by type assertion.
type ObserverReporter interface {
	Observer() ObserverState
}

// Check is one item of a device's checkup (phonepilot doctor): what was
// checked, whether it passed, what was seen, and the fix when it failed.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
	Fix    string `json:"fix,omitempty"`
}

// Checkuper is a device that can check its own setup (device/adb: adb
// authorisation, screen, Android version, display, the helper, text input,
// input injection, the UiAutomation). Optional: found by type assertion.
type Checkuper interface {
	Checkup(ctx context.Context) []Check
}
