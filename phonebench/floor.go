package phonebench

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/phonebench/tasks"
	"phonepilot/runtime"
	"phonepilot/scene"
	"phonepilot/tools"
)

// The floor of a run is a lower bound on the time of any agent on that
// phone (task, locale, profile, seed): the least it could take given the
// phone's own transitions and the cheapest read and input of any path.
//
// An oracle makes the scripted decisions on the same phone, reading it
// for free (sim.ObserverOracle) so that its own reads cost and disturb
// nothing, and charges itself only what no agent can avoid:
//
//   - per action, the cheapest input of any path (the helper's 6 ms), no
//     gesture length;
//   - per action, the wait until the earliest moment a read could show
//     the next action's target: it looks at the screen right after the
//     action and at every moment the phone's screen changes by itself up
//     to ReadyAt (sim.Phone.ChangesAhead: a transition's old frame giving
//     way to the half-drawn screen, its end, the splash and the spinner
//     ending), and takes the first look that shows the element the next
//     move acts on with the same label and bounds (for a move on no
//     element, a key or a finish: the first look that differs from the
//     screen before the action); at least the cheapest read of any path
//     (the helper's 5 ms), which a fast agent starts early enough to end
//     at that moment;
//   - before a finish that claims what the screen shows, the same wait and
//     read for what the claim rests on: the last action's effect drawn
//     and, from then, the element the script's finish names
//     (tasks.Step.Shows) as the final screen lists it; nothing when the
//     finish follows from a tool's answer (the last call failed: an app
//     that is not installed);
//   - nothing for closing a popup or an interruption, nor for the wait
//     before and after it: a faster agent may have outrun it; nothing for
//     a call made again after one that failed (an agent may give up on
//     the first answer); nothing for a scroll the same way as the one
//     before, nor the wait after it (an agent may scroll farther at once);
//   - for a run that gives up, at most what it had charged once its first
//     action's effect could be seen (an agent may give up on the first
//     screen after it, even half-drawn, but not on the screen it acted
//     on), or once that action was made when it failed (a tool's answer)
//     or closed a popup;
//   - nothing at all on the fault-free phone, which charges nothing.
//
// It asks nobody for approval (a person's time is not the phone's).
// TestFloorOverTheGrid (and TestFloorHoldsOnTheHelperPath, TestShortPhonebench) check that no run of any policy comes
// in under it.

// floorCosts are the cheapest read and input of any path a policy takes.
func floorCosts() (read, input time.Duration) {
	read, input = time.Hour, time.Hour
	for _, o := range []sim.Observer{sim.ObserverUIAutomator, sim.ObserverHelper, sim.ObserverPortal} {
		c := sim.CostsOf(o)
		read, input = min(read, c.Tree.Min, c.Frame.Min), min(input, c.Input.Min)
	}
	return read, input
}

// look is the screen as a read ending at a moment shows it.
type look struct {
	at time.Time
	sc *scene.Scene
}

// floor measures u's floor.
func floor(ctx context.Context, u unit, params map[string]string) (time.Duration, error) {
	clk := clock.NewFake(epoch)
	phone, err := newPhone(u, params, clk, sim.ObserverOracle)
	if err != nil {
		return 0, err
	}
	dev := phone.Device()
	d := newDecider(script(u.t, u.locale, params))
	maxSteps := u.t.MaxSteps
	if maxSteps <= 0 {
		maxSteps = runtime.Defaults().MaxSteps
	}
	cheapRead, cheapInput := floorCosts()
	if simProfile(u.profile) == "" {
		cheapRead, cheapInput = 0, 0 // the fault-free phone charges nothing
	}
	read := func() (look, error) {
		sc, err := dev.Scene(ctx)
		if err != nil {
			return look{}, fmt.Errorf("the oracle could not read the screen: %w", err)
		}
		return look{clk.Now(), sc}, nil
	}
	first, err := read()
	if err != nil {
		return 0, err
	}
	total := cheapRead
	sc := first.sc
	var (
		prev      *outcome
		acted     time.Time
		before    *scene.Scene // the screen the last action acted on
		looks     []look       // after the last action, up to ReadyAt
		dismissed bool         // the last action was charged nothing (dismissal below)
		closed    bool         // the last action was a free close of something in the way
		// The last action that was charged (not a dismissal): when it
		// was made, the screen it acted on, every look since (across the
		// free closes after it) and what its effect has been charged so
		// far.
		from       time.Time
		fromBefore *scene.Scene
		since      []look
		paid       time.Duration
		failed     bool // the last call failed
		// lastScroll: the previous call's arguments if it was a scroll.
		lastScroll string
		// firstActed: the total once the first action was charged;
		// firstSeen: and once its effect could first be seen, when it
		// neither failed nor closed a popup.
		firstActed, firstSeen time.Duration = -1, -1
		onFirst                             = true // the last action was the first
	)
	// Before any action, the screen as first read is what a close at the
	// start leaves the agent waiting from.
	from, fromBefore, since = first.at, first.sc, []look{first}
	for steps := 0; steps <= maxSteps; steps++ {
		m := d.next(sc.Listing(), prev)
		// A dismissal, or a call after one that failed without touching
		// the phone (an app that is not installed): an agent that gives up
		// on the first answer makes neither. Not the app's own error page
		// (Taobao's results that failed to load): it comes of the load
		// the agent asked for, not at a moment a faster agent could have
		// beaten, and Retry is pressed once it shows, like any button.
		// A scroll the same way as the one before: an agent may scroll
		// farther in one gesture (the rule planner swipes the whole
		// screen where the script scrolls a list twice), so it is charged
		// like a dismissal: nothing.
		scroll := ""
		if !m.Finish && swipes(m.Call) {
			scroll = string(m.Call.Args)
		}
		again := !m.Finish && scroll != "" && scroll == lastScroll
		lastScroll = scroll
		dismissal := !m.Finish && (d.last == kindDismiss && !errorPage(phone) || failed || again)
		if looks != nil && onFirst {
			onFirst = false
			if !failed && !dismissed {
				firstSeen = firstActed + max(seen(looks, before, "").Sub(acted), cheapRead)
			}
		}
		switch {
		case looks != nil && m.Finish && !m.Success && failed:
			// Giving up on a tool's answer (an app that is not
			// installed) needs nothing seen.
			total = firstActed
		case looks != nil && m.Finish && !m.Success:
			// Giving up on what the screen shows ("there is no such
			// contact") needs the first action's effect seen: an agent
			// may give up on the first read that shows the app it
			// opened, even before the screen settled (the rule planner
			// gives up on the app's first screen where the script
			// scrolls it both ways first), but not on the screen it
			// acted on.
			// That moment, not an earlier one: when the give-up comes
			// right after the first action, total has not yet been
			// charged its effect.
			if firstSeen >= 0 {
				total = firstSeen
			} else {
				total = firstActed
			}
		case looks != nil && m.Finish && !dismissed && failed:
			// Finishing on the last tool's answer needs no read.
		case looks != nil && m.Finish && !dismissed:
			// Finishing on what the screen shows needs it seen: the last
			// action's effect and the element the claim rests on.
			total += max(seen(looks, before, m.Shows).Sub(acted), cheapRead)
		case looks != nil && closed && !dismissal:
			// The closes were free, what comes after them is not: the
			// next action's target, or what a claim rests on, shows when
			// it shows whatever came over the screen meanwhile (the
			// results load under an ad that came with the search), so
			// every agent waits for it from the last charged action, less
			// what that action's effect has been charged already.
			at := from
			switch {
			case !m.Finish:
				at = earliest(since, fromBefore, sc, m.Call)
			case m.Shows != "":
				at = seen(since, fromBefore, m.Shows)
			}
			total += max(at.Sub(from)-paid, 0)
		case looks != nil && !dismissed && !dismissal:
			total += max(earliest(looks, before, sc, m.Call).Sub(acted), cheapRead)
		case looks != nil && dismissal && !dismissed:
			// The popup is not this agent's to wait for: the screen's own
			// change is.
			c := max(earliest(looks, before, sc, tools.Call{}).Sub(acted), cheapRead)
			total += c
			paid += c
		}
		if m.Finish || steps == maxSteps {
			break
		}
		if !dismissal {
			total += cheapInput
		}
		if firstActed < 0 {
			firstActed = total
		}
		acted, before, dismissed, closed = clk.Now(), sc, dismissal, dismissal && d.last == kindDismiss
		res, err := tools.Run(ctx, dev, sc, m.Call, tools.RunOptions{Clock: clk})
		prev = &outcome{OK: err == nil, Text: res.Text}
		failed = err != nil
		if err != nil {
			prev.Text = err.Error()
		}
		if looks, err = lookAhead(ctx, phone, clk, read); err != nil {
			return 0, err
		}
		if dismissal {
			since = append(since, looks...)
		} else {
			from, fromBefore, since, paid = acted, before, looks, 0
		}
		sc = looks[len(looks)-1].sc
	}
	return total, ctx.Err()
}

// errorPage reports the phone showing an app's own error page in place of
// what it was loading (the state's network_error).
func errorPage(phone *sim.Phone) bool {
	b, err := phone.State()
	if err != nil {
		return false
	}
	var st struct {
		NetworkError string `json:"network_error"`
	}
	return json.Unmarshal(b, &st) == nil && st.NetworkError != ""
}

// lookAhead looks at the screen now and at each moment it changes by
// itself up to ReadyAt, ending there.
func lookAhead(ctx context.Context, phone *sim.Phone, clk clock.Clock, read func() (look, error)) ([]look, error) {
	var out []look
	for {
		l, err := read()
		if err != nil {
			return nil, err
		}
		out = append(out, l)
		next := phone.ChangesAhead()
		if len(next) == 0 {
			if d := phone.ReadyAt().Sub(clk.Now()); d > 0 {
				if err := clk.Sleep(ctx, d); err != nil {
					return nil, err
				}
				continue
			}
			return out, nil
		}
		if err := clk.Sleep(ctx, next[0].Sub(clk.Now())); err != nil {
			return nil, err
		}
	}
}

// seen is the first look on which a read could show what a finish rests
// on: the first whose contents differ from before (the last action's
// effect drawn: a read of a transition's old frame names the new app but
// shows the old screen's elements) and, from there, the first that lists
// the element labelled shows as the last look lists it (same label,
// bounds and class; "" = none, and so when the last look does not list
// it). When no look differs from before, the first look.
func seen(looks []look, before *scene.Scene, shows string) time.Time {
	from := 0
	fp := contents(before)
	for i, l := range looks {
		if contents(l.sc) != fp {
			from = i
			break
		}
	}
	last := looks[len(looks)-1].sc
	if shows == "" {
		return looks[from].at
	}
	t, ok := tasks.FindTarget(last.Listing(), shows)
	if !ok {
		return looks[from].at
	}
	want, ok := last.Element(t.Index)
	if !ok {
		return looks[from].at
	}
	for _, l := range looks[from:] {
		for _, el := range l.sc.Elements {
			if el.Bounds == want.Bounds && el.Label() == want.Label() && el.Class == want.Class {
				return l.at
			}
		}
	}
	return looks[len(looks)-1].at
}

// contents is sc's fingerprint without the app in front: what its
// elements show.
func contents(sc *scene.Scene) string {
	c := *sc
	c.Package = ""
	return c.Fingerprint()
}

// earliest is the first look that shows what call acts on (the same
// label at the same bounds as on the last look), or, for a call on no
// element, the first that differs from before.
func earliest(looks []look, before, last *scene.Scene, call tools.Call) time.Time {
	if i, ok := tools.ElementArg(call); ok {
		if want, ok := last.Element(i); ok {
			for _, l := range looks {
				for _, el := range l.sc.Elements {
					if el.Bounds == want.Bounds && el.Label() == want.Label() && el.Class == want.Class {
						return l.at
					}
				}
			}
		}
		return looks[len(looks)-1].at
	}
	fp := before.Fingerprint()
	for _, l := range looks {
		if l.sc.Fingerprint() != fp {
			return l.at
		}
	}
	return looks[0].at
}
