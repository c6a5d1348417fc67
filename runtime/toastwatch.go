package runtime

import (
	"context"
	"time"

	"phonepilot/device"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// toastWatch is a press on an element, watched through the toasts the
// phone announces (device.ToastWatcher: the on-device helper hears
// Android's accessibility event for each toast as it shows), where a toast
// may answer it or an old toast still shows. A toast of the app in front
// announced after the mark, taken right before the press, is the answer
// of a press a toast may answer (toastAnswers); an old toast still on the
// screen is not, nor is its going, and none announced means such a press
// did not land. So the press need not wait for an old toast to go first
// (afterToast), as it must where toasts are only seen on the screen: there
// a dropped press and one that landed look alike while it shows, and its
// going looks like the press's effect.
type toastWatch struct {
	w       device.ToastWatcher
	mark    device.ToastMark
	answers bool   // a toast may answer the press (toastAnswers)
	pkg     string // the app in front at the press
	old     bool   // a toast was already on the screen at the press
	heard   bool   // a toast of pkg was announced after mark
	text    string // its text
	asked   bool   // the watcher answered since the press
	deaf    bool   // the mark could not be taken again (remark)
}

// watchToasts takes the mark before a press on an element that a toast
// may answer, or made while a toast shows, where the device hears toasts;
// nil where it does not or cannot now (the press then waits for an old
// toast as before).
func (e *executor) watchToasts(ctx context.Context, ps plan.PlannedStep, t *tools.Tool, call tools.Call, sc *scene.Scene) *toastWatch {
	w, ok := e.dev.(device.ToastWatcher)
	if !ok || e.cfg.FixedDelay > 0 || sc == nil || !t.Press() {
		return nil
	}
	if _, onElement := tools.ElementArg(call); !onElement {
		return nil
	}
	answers := toastAnswers(ps, t, call, sc)
	if !answers && !toastShown(sc) {
		return nil
	}
	mark, _, err := w.ToastsSince(ctx, device.ToastMark{})
	if err != nil {
		e.log.Debug("toasts cannot be heard; a press waits for an old toast", "err", err)
		return nil
	}
	return &toastWatch{w: w, mark: mark, answers: answers, pkg: sc.Package, old: toastShown(sc)}
}

// remark takes the mark again, right before the press: after a person's
// approval, which takes its time, a toast the app showed meanwhile is no
// answer of the press. A watcher that cannot answer now leaves the watch
// deaf (no toast heard, none taken as absent): the screen decides.
func (tw *toastWatch) remark(ctx context.Context) {
	if tw == nil {
		return
	}
	mark, _, err := tw.w.ToastsSince(ctx, device.ToastMark{})
	if err != nil {
		tw.deaf = true
		return
	}
	tw.mark = mark
}

// listen asks for the toasts announced after the mark and reports whether
// one of the app's came (it stays heard). A failed ask is no evidence
// either way (asked stays as it was).
func (tw *toastWatch) listen(ctx context.Context) bool {
	if tw == nil || tw.deaf {
		return false
	}
	if tw.heard {
		return true
	}
	_, ts, err := tw.w.ToastsSince(ctx, tw.mark)
	if err != nil {
		return false
	}
	tw.asked = true
	for _, t := range ts {
		if t.Package == tw.pkg {
			tw.heard, tw.text = true, t.Text
			return true
		}
	}
	return false
}

// silent reports a watched press no toast answered, the watcher having
// answered after it: an old toast on the screen, or one going away, is
// not its effect.
func (tw *toastWatch) silent() bool { return tw != nil && tw.asked && !tw.heard }

// answered listens and reports a toast answering a press a toast may answer.
func (tw *toastWatch) answered(ctx context.Context) bool {
	return tw != nil && tw.answers && tw.listen(ctx)
}

// heardAs is the watch's answer, for a press a toast may answer, as the
// toast queue's would be.
func (tw *toastWatch) heardAs() toastHeard {
	switch {
	case tw == nil || !tw.answers || !tw.asked:
		return toastHeard{}
	case tw.heard:
		return toastHeard{kind: toastAnswered, text: tw.text}
	}
	return toastHeard{kind: toastNone}
}

// hearQueued waits, after a press made under an old toast that no toast
// answered yet, for the old toast to go, listening meanwhile: Android
// shows one toast at a time, so an app's new toast may wait in the queue
// behind its old one and be announced only when that one goes (up to
// toastWait after the press). It returns the latest read.
func (e *executor) hearQueued(ctx context.Context, tw *toastWatch, acted time.Time, sc *scene.Scene) (*scene.Scene, error) {
	now, _, err := e.watchScreen(ctx, sc, func(s *scene.Scene) bool { return tw.answered(ctx) || !toastShown(s) },
		func() bool { return e.clock.Now().Sub(acted) >= toastWait })
	return now, err
}

// toastOnly reports base and after differing only in toasts (a toast that
// came or went): the app's own screen is the same.
func toastOnly(base, after *scene.Scene) bool {
	if base == nil || after == nil || base.Package != after.Package {
		return false
	}
	return appPartExcept(base, base.Package, base.ToastWindows()) == appPartExcept(after, base.Package, after.ToastWindows())
}
