package phonebench

import (
	"context"
	"time"

	"phonepilot/device/sim"
	"phonepilot/scene"
	"phonepilot/tools"
)

// The peers' loops, each as that agent runs it, from its source (the
// repository, commit and file of every figure are in docs/phonebench.md):
// how it reads the screen and what that costs on a phone, how many model
// calls a turn makes, how its actions reach the phone, and how long it
// waits after each kind of action. All of them make the scripted
// decisions of reference (decide.go); what differs is time and the
// agent's lack of verification.
const (
	PolicyDroidrunLoop  = "droidrun-loop"
	PolicyAutoGLMLoop   = "autoglm-loop"
	PolicyMidsceneLoop  = "midscene-loop"
	PolicyMobileUseLoop = "mobileuse-loop"
)

// PeerPolicies are the policies that are a peer's loop, in report order.
var PeerPolicies = []string{PolicyPeerLoop, PolicyDroidrunLoop, PolicyAutoGLMLoop, PolicyMidsceneLoop, PolicyMobileUseLoop}

// peer is one agent's loop.
type peer struct {
	// tree is the path its read of the UI tree takes; "" when it reads
	// none (it decides on a screenshot: the listing the scripted decisions
	// need then comes through the simulator's free oracle view).
	tree sim.Observer
	// frame is the path of its screenshot each turn ("" when it takes none).
	frame sim.Observer
	// png: the screenshot is `screencap -p`, encoded as a PNG on the phone.
	png bool
	// input is the path its actions take.
	input sim.Observer
	// calls is its model calls per turn; runCalls the calls a run makes
	// once, before its first turn (mobile-use's planner).
	calls, runCalls int
	// turnWait is what the shell queries it makes beside each turn's
	// screen read cost (mobile-use's contextor: `dumpsys window`).
	turnWait time.Duration
	// retry is its sleep after a failed read: the n-th failure in a row
	// sleeps retry[n-1], the last one for every failure after.
	retry []time.Duration
	// way is what an action costs it besides the input itself.
	way func(call tools.Call) peerWay
}

// peerWay is what one action costs a peer beyond the input: its own wait
// after it (a gesture longer than the tools' own included), the shell
// commands (or extra taps) it makes around it, the reads it makes for it
// and the model calls it makes for it.
type peerWay struct {
	wait     time.Duration
	commands int
	reads    int
	calls    int
}

// retryAfter is the peer's sleep after its n-th failed read in a row (n ≥ 1).
func (pr peer) retryAfter(n int) time.Duration {
	if len(pr.retry) == 0 {
		return 0
	}
	return pr.retry[min(n, len(pr.retry))-1]
}

// look reads the screen the peer's way, charging its paths; the listing
// comes from its tree read, or free when it reads a screenshot only.
func (pr peer) look(ctx context.Context, p *sim.Phone) (*scene.Scene, error) {
	if pr.frame != "" {
		// Its time only: the scripted decisions read the listing (on a
		// secure screen the agent would get a black image).
		charge := p.DeviceVia(pr.frame).ChargeFrame
		if pr.png {
			charge = p.DeviceVia(pr.frame).ChargePNG
		}
		if err := charge(ctx); err != nil {
			return nil, err
		}
	}
	if pr.tree == "" {
		return p.DeviceVia(sim.ObserverOracle).Scene(ctx)
	}
	return p.DeviceVia(pr.tree).Scene(ctx)
}

// actKind is what a call does to the phone, as its tool says (a peer's
// waits follow the action, never a tool's name).
func actKind(call tools.Call) tools.ActKind {
	if t, ok := tools.Lookup(call.Name); ok {
		return t.Act(call).Kind
	}
	return tools.ActNone
}

// swipes reports a call that drags a finger across the screen (a scroll),
// from the inputs its tool declares.
func swipes(call tools.Call) bool {
	for _, in := range tools.Declare(call, nil).Inputs {
		if in.Kind == tools.InputSwipe {
			return true
		}
	}
	return false
}

// peerFor returns the loop of a peer policy. observer is the bench's path
// (peer-loop reads and acts through it) and delay peer-loop's fixed sleep.
func peerFor(policy string, observer sim.Observer, delay time.Duration) peer {
	gesture := func(call tools.Call, d time.Duration) time.Duration {
		if swipes(call) {
			return max(d-tools.ScrollDuration, 0)
		}
		return 0
	}
	switch policy {
	case PolicyDroidrunLoop:
		// droidrun/mobilerun: the Portal accessibility service's state
		// through its content provider (use_tcp false by default), no
		// screenshot (vision false), input through adb; one model call a
		// turn (FastAgent, reasoning off); after_sleep_action 1.0 s once a
		// turn; open_app sleeps 1 s more; swipe's gesture lasts 1 s. A
		// failed state read is tried again after 1, 2, 3, 5, 8, then 10 s
		// (fetch_state_with_retry's _RETRY_DELAYS).
		return peer{tree: sim.ObserverPortal, input: sim.ObserverPortal, calls: 1, retry: droidrunRetry,
			way: func(call tools.Call) peerWay {
				w := peerWay{wait: time.Second + gesture(call, time.Second)}
				if actKind(call) == tools.ActLaunch {
					w.wait += time.Second
				}
				return w
			}}
	case PolicyAutoGLMLoop:
		// Open-AutoGLM: each turn `screencap -p` + pull + `dumpsys
		// window` (only the screencap is charged), input through adb, one
		// model call; 1.0 s after every action; a swipe lasts 1–2 s
		// (distance² / 1000 ms, clamped: a half-screen scroll ≈ 1.4 s);
		// typing switches to ADB Keyboard, clears, types and restores:
		// four commands with 1.0 s after each.
		return peer{frame: sim.ObserverUIAutomator, png: true, input: sim.ObserverUIAutomator, calls: 1, retry: []time.Duration{time.Second},
			way: func(call tools.Call) peerWay {
				w := peerWay{wait: time.Second + gesture(call, 1400*time.Millisecond)}
				if actKind(call) == tools.ActType {
					w.wait, w.commands = 4*time.Second, 3
				}
				return w
			}}
	case PolicyMidsceneLoop:
		// Midscene (Android): a PNG screenshot through adb each turn,
		// input through adb, one planning call a turn; 300 ms after every
		// action (waitAfterAction), a scroll 500 ms more.
		return peer{frame: sim.ObserverUIAutomator, png: true, input: sim.ObserverUIAutomator, calls: 1, retry: []time.Duration{300 * time.Millisecond},
			way: func(call tools.Call) peerWay {
				w := peerWay{wait: 300 * time.Millisecond}
				if swipes(call) {
					w.wait += 500 * time.Millisecond
				}
				return w
			}}
	case PolicyMobileUseLoop:
		return mobileUse()
	}
	// peer-loop: read the tree on the bench's path, act, sleep a fixed delay.
	return peer{tree: observer, input: observer, calls: 1, retry: []time.Duration{delay},
		way: func(tools.Call) peerWay { return peerWay{wait: delay} }}
}

// droidrunRetry is droidrun's wait before each retry of a failed state
// read (mobilerun/tools/ui/provider.py, _RETRY_DELAYS).
var droidrunRetry = []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second, 8 * time.Second, 10 * time.Second}

// dumpsysWindow is the least an `adb shell dumpsys window` costs an agent
// that talks to the adb server over its socket (adbutils, as mobile-use
// does): handsets.dev's benchmark (2026-05-24, Android 15 emulator, n=50)
// measured `adb shell dumpsys window` at 71.28 ms p50 and `adb shell true`
// at 27.65 ms p50, each with a fresh adb CLI; the CLI's own share is at
// most the latter, so 71.28 − 27.65 ≈ 44 ms is the command's (an emulator's
// adb is no slower than a phone's over USB).
const dumpsysWindow = 44 * time.Millisecond

// mobileUseSwipe is how long mobile-use's swipe lasts: `input touchscreen
// swipe … 400` (its swipe tools' and controller's default duration).
const mobileUseSwipe = 400 * time.Millisecond

// mobileUse is minitap-ai/mobile-use's loop (docs/phonebench.md, "The
// peers, from their source"). Each cycle its contextor reads the screen
// through the uiautomator2 server on the phone: `d.screenshot()`
// (UiAutomation.takeScreenshot, JPEG-encoded on the phone) and
// `d.dump_hierarchy(compressed=True)`. That server sets its idle timeout
// to 0, so the dump's waitForIdle returns at once: no idle wait and no
// idle-state failure, the helper's costs. It taps with `adb shell input`
// and sleeps nothing after a tap; its swipe lasts 400 ms. Two model calls
// a step (cortex, executor), one more a run (the planner) and one more a
// launch (the hopper that finds the package); a launch is `monkey`, then
// 1 s, then a `dumpsys window` poll; the contextor queries `dumpsys
// window` (and `date`, not charged) with every read. Typing reads the screen to check the
// field's focus, taps the field's end to put the cursor there, and reads
// the screen again to report the field's text.
func mobileUse() peer {
	return peer{tree: sim.ObserverHelper, frame: sim.ObserverHelper, input: sim.ObserverUIAutomator,
		calls: 2, runCalls: 1, turnWait: dumpsysWindow, retry: []time.Duration{time.Second},
		way: func(call tools.Call) peerWay {
			switch actKind(call) {
			case tools.ActLaunch:
				return peerWay{wait: time.Second + dumpsysWindow, calls: 1}
			case tools.ActType:
				return peerWay{reads: 2, commands: 1}
			}
			if swipes(call) {
				return peerWay{wait: max(mobileUseSwipe-tools.ScrollDuration, 0)}
			}
			return peerWay{}
		}}
}
