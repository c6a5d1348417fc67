package adb

import (
	"regexp"
	"strconv"
	"strings"

	"phonepilot/device"
)

// Window and activity records print a component as "u0 pkg/cls" (user id,
// package, activity class, the class possibly relative: ".Main").
var (
	componentRE = regexp.MustCompile(`\bu\d+ ([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+)/([A-Za-z0-9_.$]+)`)
	// A focused window that is not an activity (a dialog, an app's own
	// window) shows just the package: "Window{… u0 com.pkg}".
	windowPkgRE = regexp.MustCompile(`\bu\d+ ([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+)\}`)
)

// ParseWindowFocus reads `dumpsys window` (or `dumpsys window windows`)
// output for the focused window and app. Android 4–9 print
// "mCurrentFocus=Window{… u0 pkg/cls}" and
// "mFocusedApp=AppWindowToken{… ActivityRecord{… u0 pkg/cls t5}}";
// Android 10+ print "mFocusedApp=ActivityRecord{… u0 pkg/cls t5}". The
// focused window wins; system windows without a package (StatusBar,
// NotificationShade, PopupWindow:…) and "null" fall through to the focused
// app.
func ParseWindowFocus(out []byte) Focus {
	var focusPkgOnly string
	var focusedApp Focus
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "mCurrentFocus="):
			if fg, ok := parseComponent(line); ok {
				return fg
			}
			if m := windowPkgRE.FindStringSubmatch(line); m != nil && focusPkgOnly == "" {
				focusPkgOnly = m[1]
			}
		case strings.HasPrefix(line, "mFocusedApp="):
			if fg, ok := parseComponent(line); ok && focusedApp.Package == "" {
				focusedApp = fg
			}
		}
	}
	if focusPkgOnly != "" {
		fg := Focus{Package: focusPkgOnly}
		if focusedApp.Package == focusPkgOnly {
			fg.Activity = focusedApp.Activity
		}
		return fg
	}
	return focusedApp
}

// Window records in `dumpsys window windows` start "Window #3
// Window{6c2e0f1 u0 …}:"; the focused window is named the same way
// ("mCurrentFocus=Window{6c2e0f1 u0 …}"). Android 7+ print a window's flags
// by name ("fl=LAYOUT_IN_SCREEN … SECURE …"), older ones as hex
// ("fl=#81812100"), where FLAG_SECURE is 0x2000.
var (
	windowRecordRE = regexp.MustCompile(`^Window #\d+ Window\{([0-9a-f]+) `)
	focusIDRE      = regexp.MustCompile(`^mCurrentFocus=Window\{([0-9a-f]+) `)
	flagsRE        = regexp.MustCompile(`(?:^|\s)fl=(#[0-9a-fA-F]+|[A-Z_]+(?: [A-Z_]+)*)`)
)

const flagSecure = 0x2000

// FocusedWindowSecure reports whether `dumpsys window windows` shows the
// focused window with FLAG_SECURE.
func FocusedWindowSecure(out []byte) bool {
	lines := strings.Split(string(out), "\n")
	focused := ""
	for _, line := range lines {
		if m := focusIDRE.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			focused = m[1]
		}
	}
	if focused == "" {
		return false
	}
	current := ""
	for _, line := range lines {
		line = strings.TrimSpace(line)
		if m := windowRecordRE.FindStringSubmatch(line); m != nil {
			current = m[1]
			continue
		}
		if current != focused {
			continue
		}
		if m := flagsRE.FindStringSubmatch(line); m != nil && secureFlags(m[1]) {
			return true
		}
	}
	return false
}

func secureFlags(fl string) bool {
	if hex, ok := strings.CutPrefix(fl, "#"); ok {
		n, err := strconv.ParseUint(hex, 16, 64)
		return err == nil && n&flagSecure != 0
	}
	for _, f := range strings.Fields(fl) {
		if f == "SECURE" {
			return true
		}
	}
	return false
}

// ParseResumedActivity reads `dumpsys activity activities` output for the
// resumed activity: "mResumedActivity: ActivityRecord{…}" (Android ≤ 9),
// "topResumedActivity=ActivityRecord{…}" (10–11), "ResumedActivity:
// ActivityRecord{…}" (12+), or the older "mFocusedActivity: …".
func ParseResumedActivity(out []byte) Focus {
	best, bestRank := Focus{}, 0
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		rank := 0
		switch {
		case strings.HasPrefix(line, "topResumedActivity="):
			rank = 4
		case strings.HasPrefix(line, "mResumedActivity:"), strings.HasPrefix(line, "ResumedActivity:"):
			rank = 3
		case strings.HasPrefix(line, "mFocusedActivity:"):
			rank = 2
		case strings.HasPrefix(line, "mLastResumedActivity:") || strings.HasPrefix(line, "mLastResumedActivity="):
			rank = 1
		default:
			continue
		}
		if rank <= bestRank {
			continue
		}
		if fg, ok := parseComponent(line); ok {
			best, bestRank = fg, rank
		}
	}
	return best
}

// parseComponent finds "u0 pkg/cls" and expands a relative class.
func parseComponent(line string) (Focus, bool) {
	m := componentRE.FindStringSubmatch(line)
	if m == nil {
		return Focus{}, false
	}
	pkg, cls := m[1], m[2]
	if strings.HasPrefix(cls, ".") {
		cls = pkg + cls
	}
	return Focus{Package: pkg, Activity: cls}, true
}

// A toast in `dumpsys notification`'s "Toast Queue:" (Android 11+):
// "TextToastRecord{9f1c2a 4321:com.taobao.taobao/u0a123 token=… text=Added
// to cart duration=0}", or "CustomToastRecord{…}" without a text; before
// Android 11 "ToastRecord{… pkg=com.x callback=… duration=0}".
var (
	toastRecordRE = regexp.MustCompile(`ToastRecord\{[0-9a-f]+ (?:\d+:)?([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+)/`)
	toastOldRE    = regexp.MustCompile(`ToastRecord\{[0-9a-f]+ pkg=([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+)`)
)

// ParseToasts reads the toast queue out of `dumpsys notification`: the app
// and text of each toast shown or waiting to be shown.
func ParseToasts(out []byte) []device.Toast {
	var ts []device.Toast
	in := false
	for _, line := range strings.Split(string(out), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "Toast Queue:":
			in = true
			continue
		case !in:
			continue
		case trimmed == "":
			return ts
		}
		m := toastRecordRE.FindStringSubmatch(trimmed)
		if m == nil {
			m = toastOldRE.FindStringSubmatch(trimmed)
		}
		if m == nil {
			continue
		}
		t := device.Toast{Package: m[1]}
		if _, rest, ok := strings.Cut(trimmed, " text="); ok {
			if i := strings.LastIndex(rest, " duration="); i >= 0 {
				t.Text = rest[:i]
			}
		}
		ts = append(ts, t)
	}
	return ts
}
