package rule

import (
	"strconv"
	"strings"

	"phonepilot/apps"
	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/scene"
	"phonepilot/tools"
)

// Words that mark a search box or a search entry, in ids, labels and hints.
var searchWords = []string{"search", "搜索", "query", "keyword", "查找", "搜"}

// Labels near "search" that are not the search box.
var notSearchWords = []string{"history", "历史", "discover", "发现", "clear", "清空", "photo", "拍照", "scan", "扫"}

// dismissWords are the labels of buttons that close a popup without
// agreeing to anything. Allow, pay, delete and their like are never here.
var dismissWords = map[string]bool{
	"close": true, "×": true, "✕": true, "✖": true, "x": true, "关闭": true, "跳过": true, "skip": true,
	"skip ad": true, "not now": true, "以后再说": true, "稍后再说": true, "暂不": true, "暂不需要": true,
	"cancel": true, "取消": true, "no thanks": true, "no, thanks": true, "dismiss": true, "later": true,
	"maybe later": true, "don't allow": true, "不允许": true, "deny": true, "拒绝": true, "close ad": true,
	"关闭广告": true, "我知道了": true, "知道了": true, "got it": true, "稍后": true,
	// "App isn't responding": Wait lets the app carry on (Close app would
	// stop it).
	"wait": true, "等待": true,
}

// strongDismiss labels close something wherever they are; the others (like
// "cancel" or "关闭", which is also a switch's state in Settings) only inside
// something that looks like a popup.
var strongDismiss = map[string]bool{"×": true, "✕": true, "✖": true, "跳过": true, "skip ad": true, "以后再说": true,
	"稍后再说": true, "not now": true, "close ad": true, "关闭广告": true, "no thanks": true, "no, thanks": true}

// popupWords mark a container as a popup (dialog, ad layer, permission
// prompt) in its id, class or package.
var popupWords = []string{"popup", "poplayer", "dialog", "modal", "permission", "_ad", "ad_", "interstitial", "overlay", "alert"}

// dashes are the hyphens a label may use where a goal types "-" ("Wi‑Fi").
var dashes = strings.NewReplacer("’", "'", "\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u00a0", " ")

func fold(s string) string {
	s = dashes.Replace(s)
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// inPopup reports whether el lies inside a popup-like container (itself
// included), or in a window of a permission prompt.
func inPopup(sc *scene.Scene, el scene.Element) bool {
	if apps.PermissionPrompt(el.Package) || el.Package == apps.SystemServer {
		// The permission prompt, and the system server's own dialogs
		// (package android: App isn't responding).
		return true
	}
	for i := el.Index; i >= 0 && i < len(sc.Elements); i = sc.Elements[i].Parent {
		e := sc.Elements[i]
		id := strings.ToLower(scene.IDName(e.ResourceID))
		cls := strings.ToLower(scene.SimpleClass(e.Class))
		if containsAny(id, popupWords) || containsAny(cls, []string{"dialog", "popup"}) {
			return true
		}
		if e.Parent == i {
			break
		}
	}
	return false
}

// retryWords label the button of a page that failed to load.
var retryWords = map[string]bool{"retry": true, "try again": true, "reload": true, "重试": true, "点击重试": true,
	"重新加载": true, "刷新": true, "刷新重试": true}

// retryPage plans tapping Retry on a page that failed to load (a network
// error page stands where the results should be), twice at most on the
// same screen; then the task fails, since the page is not what the goal
// wanted, whatever the steps so far say.
func (w *work) retryPage() (plan.PlannedStep, *plan.Finish, bool) {
	for _, el := range w.sc.Elements {
		if !w.sc.Visible(el) || !(el.Clickable || w.clickableAncestor(el)) || !retryWords[fold(el.Label())] {
			continue
		}
		intent := "retry loading (" + el.Label() + ")"
		t := plan.Tag{Kind: tagRetry, Action: noAction, Arg: el.Label()}
		if r, failed := w.failedHere(t); failed && w.failedHereTimes(t) >= 2 {
			return plan.PlannedStep{}, &plan.Finish{Reason: "the page did not load and Retry did not help: " + failedStep(r)}, true
		}
		sel := selectorFor(w.sc, el, true)
		return plan.PlannedStep{
			Intent: intent,
			Tag:    t,
			Call:   tools.NewCall(tools.Tap, map[string]any{}),
			Target: &sel,
			Expect: plan.Expectation{Kind: plan.ExpectGone, Target: sel},
		}, nil, true
	}
	return plan.PlannedStep{}, nil, false
}

// dismissPopup plans closing a popup on the screen, unless closing it
// already failed here.
func (w *work) dismissPopup() (plan.PlannedStep, bool) {
	for _, el := range w.sc.Elements {
		if !w.sc.Visible(el) || !(el.Clickable || w.clickableAncestor(el)) {
			continue
		}
		label := fold(el.Label())
		id := strings.ToLower(scene.IDName(el.ResourceID))
		named := dismissWords[label] || (label == "" && (strings.Contains(id, "close") || strings.Contains(id, "dismiss")))
		if !named {
			continue
		}
		if !strongDismiss[label] && !inPopup(w.sc, el) {
			continue
		}
		// "Cancel" next to the search field we are typing into is not a popup.
		if (label == "cancel" || label == "取消") && w.focusedEditable() {
			continue
		}
		shown := el.Label()
		if shown == "" {
			shown = scene.IDName(el.ResourceID)
		}
		intent := "dismiss the popup (" + shown + ")"
		t := plan.Tag{Kind: tagDismiss, Action: noAction, Arg: shown}
		if w.failedHereTimes(t) >= 2 {
			// A popup can come back as it is closed (another one queued
			// behind it), so closing it gets a second chance, not a third.
			continue
		}
		sel := selectorFor(w.sc, el, true)
		return plan.PlannedStep{
			Intent: intent,
			Tag:    t,
			Call:   tools.NewCall(tools.Tap, map[string]any{}),
			Target: &sel,
			Expect: plan.Expectation{Kind: plan.ExpectGone, Target: sel},
		}, true
	}
	return plan.PlannedStep{}, false
}

func (w *work) clickableAncestor(el scene.Element) bool {
	for i := el.Parent; i >= 0 && i < len(w.sc.Elements); i = w.sc.Elements[i].Parent {
		if w.sc.Elements[i].Clickable {
			return true
		}
		if w.sc.Elements[i].Parent == i {
			break
		}
	}
	return false
}

func (w *work) focusedEditable() bool {
	el, ok := w.sc.Focused()
	return ok && el.Editable
}

// searchField finds the editable field to type a query into: one whose id,
// hint or description says search, or the focused field after the search
// box was tapped.
func (w *work) searchField() (scene.Element, bool) {
	best, bestScore := scene.Element{}, 0
	tapped := false
	for _, r := range w.hist {
		if r.Tag.Kind == tagSearchBox && r.Status == lifecycle.StepSucceeded {
			tapped = true
		}
	}
	for _, el := range w.sc.Elements {
		if !el.Editable || !w.sc.Visible(el) {
			continue
		}
		score := 0
		hint := strings.ToLower(scene.IDName(el.ResourceID) + " " + el.Text + " " + el.Desc)
		if containsAny(hint, searchWords) {
			score += 2
		}
		if el.Focused {
			score++
		}
		if tapped {
			score++
		}
		if score > bestScore {
			best, bestScore = el, score
		}
	}
	return best, bestScore > 0
}

// searchEntry finds what opens the search box when the box itself is not
// editable yet (a search bar on a home page, a magnifier icon).
func (w *work) searchEntry() (scene.Element, bool) {
	best, bestScore := scene.Element{}, 0
	for _, el := range w.sc.Elements {
		if el.Editable || !w.sc.Visible(el) || !(el.Clickable || w.clickableAncestor(el)) {
			continue
		}
		id := strings.ToLower(scene.IDName(el.ResourceID))
		label := fold(el.Label())
		if containsAny(id, notSearchWords) || containsAny(label, notSearchWords) {
			continue
		}
		score := 0
		switch {
		case containsAny(id, []string{"search", "query"}):
			score = 3
		case label == "search" || label == "搜索":
			score = 2
		case containsAny(label, searchWords):
			score = 1
		}
		if score > bestScore && !w.failedOn(el) {
			best, bestScore = el, score
		}
	}
	return best, bestScore > 0
}

// failedOn reports whether tapping the search box already failed on this
// screen on el or on its clickable ancestor (the element the tap resolved
// to, whose index the failed call carries). A tap interrupted by an ad or
// a dialog that came up over the box as it was pressed was not refused by
// the box: the box is tried again once the popup is gone.
func (w *work) failedOn(el scene.Element) bool {
	for _, r := range w.all {
		if r.Status != lifecycle.StepFailed || r.Before != w.fp || r.Tag.Kind != tagSearchBox || r.Effect == plan.EffectInterrupted {
			continue
		}
		i, ok := tools.ElementArg(r.Call)
		if !ok {
			continue
		}
		if el.Index == i || w.under(el, i) {
			return true
		}
	}
	return false
}

func (w *work) fieldNamed(name string) (scene.Element, bool) {
	want := fold(name)
	for _, el := range w.sc.Elements {
		if el.Editable && w.sc.Visible(el) {
			hint := fold(el.Text + " " + el.Desc + " " + scene.IDName(el.ResourceID))
			if strings.Contains(hint, want) {
				return el, true
			}
		}
	}
	return scene.Element{}, false
}

func (w *work) firstEditable() (scene.Element, bool) {
	for _, el := range w.sc.Elements {
		if el.Editable && w.sc.Visible(el) {
			return el, true
		}
	}
	return scene.Element{}, false
}

func fieldHas(el scene.Element, text string) bool { return fold(el.Text) == fold(text) }

// Loading indicators.
var loadingWords = []string{"loading", "加载中", "正在加载"}

// spinner reports a loading indicator on the screen.
func spinner(sc *scene.Scene) bool {
	for _, el := range sc.Elements {
		if !sc.Visible(el) {
			continue
		}
		if strings.Contains(scene.SimpleClass(el.Class), "ProgressBar") {
			return true
		}
		l := fold(el.Label())
		for _, w := range loadingWords {
			if strings.HasPrefix(l, w) {
				return true
			}
		}
	}
	return false
}

func spinnerSelector(sc *scene.Scene) scene.Selector {
	for _, el := range sc.Elements {
		if sc.Visible(el) && strings.Contains(scene.SimpleClass(el.Class), "ProgressBar") {
			return scene.Selector{Field: scene.FieldClass, Value: "ProgressBar", Mode: scene.ModeContains}
		}
	}
	for _, el := range sc.Elements {
		l := fold(el.Label())
		for _, w := range loadingWords {
			if sc.Visible(el) && strings.HasPrefix(l, w) {
				return scene.Selector{Field: scene.FieldLabel, Value: el.Label(), Mode: scene.ModeExact}
			}
		}
	}
	return scene.Selector{Field: scene.FieldClass, Value: "ProgressBar", Mode: scene.ModeContains}
}

// selectorFor names el so that it resolves to el on this Scene and, where
// possible, on the next one too: a unique resource id, else a unique label,
// else its index.
func selectorFor(sc *scene.Scene, el scene.Element, clickable bool) scene.Selector {
	if el.ResourceID != "" {
		sel := scene.Selector{Field: scene.FieldID, Value: el.ResourceID, Mode: scene.ModeExact, Clickable: clickable}
		if unique(sc, sel, el) {
			return sel
		}
	}
	if l := el.Label(); l != "" {
		sel := scene.Selector{Field: scene.FieldLabel, Value: l, Mode: scene.ModeExact, Clickable: clickable}
		if unique(sc, sel, el) {
			return sel
		}
	}
	return scene.Selector{Field: scene.FieldIndex, Value: strconv.Itoa(el.Index)}
}

// unique reports whether sel finds exactly el (or, with clickable, el's
// clickable ancestor) and nothing else equally good.
func unique(sc *scene.Scene, sel scene.Selector, el scene.Element) bool {
	m := sc.Find(sel)
	if len(m) == 0 {
		return false
	}
	if len(m) > 1 && m[1].Score >= m[0].Score {
		return false
	}
	got := m[0].Element.Index
	if got == el.Index {
		return true
	}
	// Narrowed to a clickable ancestor: fine when that ancestor holds el.
	for i := el.Parent; i >= 0 && i < len(sc.Elements); i = sc.Elements[i].Parent {
		if i == got {
			return true
		}
		if sc.Elements[i].Parent == i {
			break
		}
	}
	return false
}

// interactive reports whether the foreground app shows anything a finger
// can use; a splash screen or a page still loading does not.
func interactive(sc *scene.Scene) bool {
	for _, el := range sc.Elements {
		if el.Package != "" && sc.Package != "" && el.Package != sc.Package {
			continue
		}
		if sc.Visible(el) && (el.Clickable || el.Editable || el.Scrollable || el.LongClickable) {
			return true
		}
	}
	return false
}
