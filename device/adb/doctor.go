package adb

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"phonepilot/device"
	"phonepilot/device/adb/helper"
)

// keycodeUnknown is KEYCODE_UNKNOWN: injecting it proves injection is
// allowed and does nothing on the phone.
const keycodeUnknown = 0

// Checkup checks the phone's setup for phonepilot, one device.Check per
// item, each failed one with its fix: adb authorised, screen on and
// unlocked, Android version, display, the helper (starts, answers, its tree
// time), how text will be typed, input injection, the UiAutomation free.
// It starts the helper (and stops it after) whatever the Observer.
func (d *Device) Checkup(ctx context.Context) []device.Check {
	var out []device.Check
	add := func(c device.Check) { out = append(out, c) }
	add(device.Check{Name: "adb authorised", OK: true, Detail: fmt.Sprintf("%s is \"device\" (model %s)", d.serial, d.info.Model)})

	sh := func(cmd string) string {
		b, err := d.run(ctx, d.cfg.Timeouts.Command, cmd)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	power := sh("dumpsys power")
	win := sh("dumpsys window")
	on := strings.Contains(power, "mWakefulness=Awake") || (power != "" && !strings.Contains(power, "mWakefulness="))
	locked := lockedRE.MatchString(win)
	add(device.Check{Name: "screen on and unlocked", OK: on && !locked,
		Detail: map[bool]string{true: "awake", false: "asleep"}[on] + map[bool]string{true: ", locked", false: ", unlocked"}[locked],
		Fix:    "wake the phone and unlock it (or keep it awake while charging: Developer options › Stay awake)"})

	sdk, _ := strconv.Atoi(sh("getprop ro.build.version.sdk"))
	rel := sh("getprop ro.build.version.release")
	add(device.Check{Name: "Android version", OK: sdk >= helperMinSDK,
		Detail: fmt.Sprintf("Android %s (API %d)", rel, sdk),
		Fix:    fmt.Sprintf("phonepilot's helper needs API %d (Android 5.0) or newer; older phones are driven through uiautomator only", helperMinSDK)})

	size, err := d.ScreenSize(ctx)
	dens := sh("wm density")
	add(device.Check{Name: "display size and density", OK: err == nil && size.Width > 0,
		Detail: fmt.Sprintf("%dx%d, %s", size.Width, size.Height, strings.ReplaceAll(dens, "\n", "; ")),
		Fix:    "`adb shell wm size` must answer; reset an override with `adb shell wm size reset`"})

	// The helper: start it afresh, time one tree, inject a no-op key, then stop it.
	d.helper.mu.Lock()
	d.stopHelperLocked(ctx)
	d.helper.off, d.helper.restarted = false, false
	startErr := d.startHelperLocked(ctx)
	var treeTime time.Duration
	var treeErr, injectErr error
	var hello helper.Hello
	if startErr == nil {
		c := d.helper.proc.client
		hello = c.Hello()
		cctx, cancel := context.WithTimeout(ctx, d.cfg.Timeouts.Stall)
		start := time.Now()
		_, _, treeErr = c.Tree(cctx, helper.TreeDefault)
		treeTime = time.Since(start)
		if treeErr == nil {
			injectErr = c.Key(cctx, keycodeUnknown)
		}
		cancel()
	}
	d.stopHelperLocked(ctx)
	d.helper.mu.Unlock()

	var se *HelperStartError
	var refused *helper.Error
	held := errors.As(startErr, &se) && se.Held
	// An injection the helper answered with an error is the phone refusing
	// it; any other failure is the helper dying.
	died := injectErr != nil && !errors.As(injectErr, &refused)
	helperOK := startErr == nil && treeErr == nil && !died
	detail := ""
	switch {
	case helperOK:
		detail = fmt.Sprintf("pid %d, protocol %d, API %d; one tree in %v", hello.PID, hello.Proto, hello.SDK, treeTime.Round(time.Millisecond))
	case startErr != nil:
		detail = startErr.Error()
	case treeErr != nil:
		detail = "it started, then: " + treeErr.Error()
	default:
		detail = "it started and sent a tree, then died: " + injectErr.Error()
	}
	add(device.Check{Name: "helper starts and answers", OK: helperOK, Detail: detail,
		Fix: "phonepilot falls back to uiautomator dump (slower, no Unicode text without ADB Keyboard); attach `phonepilot doctor --trial --json --out DIR` and its files to an issue (docs/device-helper.md)"})

	switch {
	case helperOK:
		add(device.Check{Name: "how text is typed", OK: true, Detail: "the helper sets the field's text: any language and emoji, no keyboard app"})
	default:
		kb, _ := d.hasPackage(ctx, adbKeyboardPackage)
		add(device.Check{Name: "how text is typed", OK: kb,
			Detail: map[bool]string{true: "ADB Keyboard (the helper is not running)", false: "`input text`: printable ASCII only"}[kb],
			Fix:    InstallADBKeyboardHint})
	}

	switch {
	case !helperOK:
		add(device.Check{Name: "input injection allowed", OK: false, Detail: "not checked: the helper is not running",
			Fix: "fix the helper first; `input` commands are used meanwhile"})
	default:
		add(device.Check{Name: "input injection allowed", OK: injectErr == nil, Detail: errText(injectErr, "a no-op key was injected"),
			Fix: "some vendors (Xiaomi, OPPO, vivo) also need Developer options › \"USB debugging (Security settings)\" on"})
	}

	add(device.Check{Name: "UiAutomation free", OK: !held,
		Detail: map[bool]string{true: "another tool holds it", false: "no other tool holds it"}[held],
		Fix:    "stop the other tool (uiautomator, Appium, Maestro, uiautomator2, an accessibility test) or run phonepilot with --observer uiautomator"})
	return out
}

// helperMinSDK is the helper's minimum API level (Api.java MIN_SDK).
const helperMinSDK = 21

var lockedRE = regexp.MustCompile(`(mDreamingLockscreen|mShowingLockscreen|mKeyguardShowing|isKeyguardShowing|mIsKeyguardShowing)=true`)

func errText(err error, ok string) string {
	if err != nil {
		return err.Error()
	}
	return ok
}

var _ device.Checkuper = (*Device)(nil)
