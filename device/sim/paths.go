package sim

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"
)

// Observer is the way a driver reads and drives the phone: it decides what
// each read of the UI tree, each input and each screenshot costs, and
// whether a read waits for the screen to go idle. The costs are a real
// phone's, with their sources in docs/sim.md ("Observation paths"); they
// are charged on Config.Clock under every realism profile that has timing
// (realistic, slow, flaky, hostile), never on the fault-free phone or under
// `injected`.
type Observer string

// The observation paths.
const (
	// ObserverUIAutomator is plain adb: a one-shot `uiautomator dump`
	// (a new process that connects a UiAutomation and waits for idle: it
	// fails with "could not get idle state" while the screen animates),
	// `input` commands (each starts a Java process) and raw `screencap`
	// (what device/adb reads; `screencap -p` adds the PNG encoding). What
	// a real phone gets today.
	ObserverUIAutomator Observer = "uiautomator"
	// ObserverHelper is an on-device helper holding one UiAutomation:
	// the tree without an idle wait, injected input, a raw frame, and a
	// cheap counter of the screen's changes (Device.ScreenChanges).
	ObserverHelper Observer = "helper"
	// ObserverPortal is an accessibility service's tree read through its
	// content provider (`content query`, droidrun's Portal by default),
	// with `input` commands and `screencap`. A peer's path.
	ObserverPortal Observer = "portal"
	// ObserverOracle is a benchmark's view, no phone's: reads and inputs
	// cost nothing and a read never fails. A benchmark's floor reads the
	// screen through it, and a peer that decides on a screenshot gets the
	// listing its scripted decisions need through it (the screenshot is
	// charged on the peer's own path).
	ObserverOracle Observer = "oracle"
)

// Observers lists the paths phonepilot's own drivers can take
// (`--observer`), the default first.
func Observers() []Observer { return []Observer{ObserverUIAutomator, ObserverHelper} }

// ParseObserver checks a path's name ("" is the default, uiautomator).
func ParseObserver(s string) (Observer, error) {
	switch o := Observer(s); o {
	case "":
		return ObserverUIAutomator, nil
	case ObserverUIAutomator, ObserverHelper, ObserverPortal, ObserverOracle:
		return o, nil
	}
	return "", fmt.Errorf("sim: unknown observer %q (use uiautomator, helper, portal or oracle)", s)
}

// span is a cost: base plus a seeded jitter in [0, jitter).
type span struct{ base, jitter time.Duration }

// Min is the least the cost can be.
func (s span) Min() time.Duration { return s.base }

// Max is the most the cost can be.
func (s span) Max() time.Duration { return s.base + s.jitter }

// pathCosts is what one path charges.
type pathCosts struct {
	tree  span // one read of the UI tree
	input span // one input: tap, key, swipe (plus the gesture's own length), text
	// launch is one app launch; input when zero (device/adb's `monkey`, a
	// Java process like each `input` command).
	launch span
	frame  span // one screenshot as the path's driver takes it (raw on adb)
	// png is one screenshot encoded as a PNG on the phone (`screencap -p`,
	// what Open-AutoGLM and Midscene take); frame when zero.
	png span
	// counter is one read of the change counter; zero when the path has none.
	counter span
	// idleWait: a read waits for the screen to go idle, and fails with
	// "could not get idle state" when it starts in a transition's first half.
	idleWait bool
	// free: no read fails at all (the oracle).
	free bool
}

// costs per path (docs/sim.md, "Observation paths", for the sources).
var costs = map[Observer]pathCosts{
	ObserverUIAutomator: {
		tree:     span{900 * time.Millisecond, 2300 * time.Millisecond},
		input:    span{230 * time.Millisecond, 170 * time.Millisecond},
		frame:    span{450 * time.Millisecond, 300 * time.Millisecond},  // raw: 0.25 s capture + 10 MB over USB
		png:      span{1750 * time.Millisecond, 500 * time.Millisecond}, // 0.25 s capture + 1.5–2 s PNG
		idleWait: true,
	},
	ObserverHelper: {
		tree:    span{5 * time.Millisecond, 35 * time.Millisecond},
		input:   span{6 * time.Millisecond, 0},
		frame:   span{50 * time.Millisecond, 100 * time.Millisecond},
		counter: span{5 * time.Millisecond, 0},
		// The helper starts the activity itself through the activity
		// manager's binder: 7–12 ms for a running process asked to start
		// one (TermuxAm#9), plus the 5 ms request and reply the counter
		// read is charged.
		launch: span{12 * time.Millisecond, 5 * time.Millisecond},
	},
	ObserverPortal: {
		tree:  span{300 * time.Millisecond, 300 * time.Millisecond},
		input: span{230 * time.Millisecond, 170 * time.Millisecond},
		frame: span{450 * time.Millisecond, 300 * time.Millisecond},
		png:   span{1750 * time.Millisecond, 500 * time.Millisecond},
	},
	ObserverOracle: {free: true},
}

// Costs is what a path charges, for a benchmark's floor and its peers.
type Costs struct {
	Tree, Input, Frame, PNG, Counter struct{ Min, Max time.Duration }
	// Launch is one app launch (Input's `monkey` where the path has no
	// launch of its own).
	Launch struct{ Min, Max time.Duration }
	// IdleWait: a tree read waits for idle and fails while animating.
	IdleWait bool
}

// CostsOf reports what path o charges under a profile with timing.
func CostsOf(o Observer) Costs {
	c := costs[o]
	var out Costs
	set := func(dst *struct{ Min, Max time.Duration }, s span) { dst.Min, dst.Max = s.Min(), s.Max() }
	set(&out.Tree, c.tree)
	set(&out.Input, c.input)
	set(&out.Frame, c.frame)
	set(&out.PNG, c.pngSpan())
	set(&out.Counter, c.counter)
	set(&out.Launch, c.launchSpan())
	out.IdleWait = c.idleWait
	return out
}

// what a charge is for: each has its own sequence, so that the jitter of
// one kind does not move with the count of another.
type chargeKind int

const (
	chargeTree chargeKind = iota
	chargeInput
	chargeFrame
	chargeCounter
	// chargeLaunch is an app launch on a path with a launch of its own (the
	// helper's); elsewhere it is an input (monkey) and counts as one.
	chargeLaunch
	// chargeToasts is one read of the toasts the helper heard: a request
	// and its reply, as the counter read (the helper answers it from
	// memory, as it does the counter).
	chargeToasts
	nChargeKinds
	// chargePNG is a screenshot encoded as a PNG: a frame (it counts and
	// draws its jitter as one) at the png cost.
	chargePNG = nChargeKinds
)

// launchSpan is what an app launch costs on the path.
func (c pathCosts) launchSpan() span {
	if c.launch == (span{}) {
		return c.input
	}
	return c.launch
}

// pngSpan is what a PNG screenshot costs on the path.
func (c pathCosts) pngSpan() span {
	if c.png == (span{}) {
		return c.frame
	}
	return c.png
}

// cost is how long the next charge of kind k on path o takes (0 when the
// profile has no timing). The jitter is a hash of the seed, the kind and
// its sequence number, so it draws nothing from the input generator and
// replays exactly. Call under p.mu.
func (p *Phone) cost(o Observer, k chargeKind) time.Duration {
	png := k == chargePNG
	if png {
		k = chargeFrame
	}
	if k == chargeLaunch && costs[o].launch == (span{}) {
		k = chargeInput // monkey: a Java process, drawn and counted as an input
	}
	p.charged[k]++
	if !p.prof.timed {
		return 0
	}
	c := costs[o]
	var s span
	switch k {
	case chargeTree:
		s = c.tree
	case chargeInput:
		s = c.input
	case chargeFrame:
		s = c.frame
		if png {
			s = c.pngSpan()
		}
	case chargeCounter:
		s = c.counter
	case chargeLaunch:
		s = c.launch
	case chargeToasts:
		s = c.counter
	}
	return s.draw(p.cfg.Seed, p.charged[k], uint64(k)*0x94d049bb133111eb)
}

// draw is one cost of s: its base plus a jitter hashed from the seed, the
// charge's number n and a salt (per kind of charge), so that runs replay
// and the draws disturb no other random draw.
func (s span) draw(seed int64, n int, salt uint64) time.Duration {
	if s.jitter == 0 {
		return s.base
	}
	h := uint64(seed)*0x9e3779b97f4a7c15 + uint64(n)*0xbf58476d1ce4e5b9 + salt
	h ^= h >> 31
	h *= 0x94d049bb133111eb
	h ^= h >> 29
	return s.base + time.Duration(h%uint64(s.jitter))
}

// ChargeInput charges one input command's cost on the driver's path
// without any effect: a peer's extra shell command (`ime set`, an `am
// broadcast` that clears a field) that the simulator does not model.
func (d *Device) ChargeInput(ctx context.Context) error {
	return d.p.charge(ctx, d.obs, chargeInput)
}

// ChargeFrame charges one screenshot's cost on the driver's path without
// drawing it: a benchmark's peer that decides on a screenshot pays its
// time, while its scripted decisions read the listing (drawing and
// encoding a PNG costs tens of milliseconds of CPU for nothing).
func (d *Device) ChargeFrame(ctx context.Context) error {
	return d.p.charge(ctx, d.obs, chargeFrame)
}

// ChargePNG charges one `screencap -p` on the driver's path (capture and
// PNG encoding) without drawing it: a benchmark's peer that decides on a
// PNG screenshot (Open-AutoGLM, Midscene) pays its time.
func (d *Device) ChargePNG(ctx context.Context) error {
	return d.p.charge(ctx, d.obs, chargePNG)
}

// charge sleeps the cost of one k on path o on the clock.
func (p *Phone) charge(ctx context.Context, o Observer, k chargeKind) error {
	p.mu.Lock()
	d := p.cost(o, k)
	p.mu.Unlock()
	return p.cfg.Clock.Sleep(ctx, d)
}

// changes is the change counter an on-device helper keeps (the
// accessibility events it saw): it grows whenever what a read would show
// changes, and on every look while a transition draws.
type changes struct {
	count uint64
	at    time.Time // the last change seen
	sig   uint64    // what a read showed at the last look
	used  bool      // a driver reads the counter: inputs refresh sig first
}

// lookLocked updates the counter to now: a transition drawing is a change
// (its frames fire events), and so is a read that would differ from the
// last look.
func (p *Phone) lookLocked(now time.Time) {
	p.settle(now)
	xml, err := p.dumpAt(now, false)
	h := fnv.New64a()
	if err == nil {
		h.Write(xml)
	}
	sig := h.Sum64()
	if p.anim != nil || sig != p.chg.sig {
		p.chg.count++
		p.chg.at = now
	}
	p.chg.sig = sig
}

// screenChanges reads the counter: how many changes it has counted, and
// how long ago the last one was.
func (p *Phone) screenChanges(now time.Time) (uint64, time.Duration) {
	p.chg.used = true
	p.lookLocked(now)
	return p.chg.count, now.Sub(p.chg.at)
}
