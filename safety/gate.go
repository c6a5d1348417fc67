// Package safety is the gate every action passes before it touches the
// phone (../shared/design/TASKS.md, "The safety gate"). From the element
// acted on, the row it belongs to, the screen and the app in front, never
// from a model, it classifies the action into categories (payment, delete,
// send, account, permission, install, call), and the user's Policy turns
// each category into allow, confirm or deny. It is pure: no device, no
// clock, no I/O, cheap enough to run before every step.
package safety

import (
	"fmt"
	"slices"
	"strings"

	"phonepilot/apps"
	"phonepilot/scene"
	"phonepilot/tools"
)

// Verdict is what happens to an action.
type Verdict string

// The three verdicts, also the values of a Policy.
const (
	Allow   Verdict = "allow"   // run it
	Confirm Verdict = "confirm" // a person says yes first
	Deny    Verdict = "deny"    // never (the task fails with policy_denied)
)

// Category is the kind of irreversible action the gate recognised.
type Category string

// The categories of TASKS.md's pending decision.
const (
	Payment    Category = "payment"    // pay, buy, order, transfer, withdraw, top up
	Delete     Category = "delete"     // delete, remove, clear data, factory reset, uninstall
	Send       Category = "send"       // send, post, publish, share, reply, forward, upload
	Account    Category = "account"    // log out, change password, a credential, a security setting off
	Permission Category = "permission" // grant a runtime permission
	Install    Category = "install"    // install an app
	Call       Category = "call"       // place a phone call
)

// categoryOrder is the order words are looked for and categories listed.
var categoryOrder = []Category{Payment, Delete, Send, Account, Permission, Install, Call}

// Categories returns every category, in a stable order.
func Categories() []Category { return append([]Category(nil), categoryOrder...) }

// Signal says where the gate saw what made it flag an action.
type Signal string

// The signals.
const (
	SignalLabel            Signal = "label"             // the element's own text or content-desc
	SignalID               Signal = "id"                // the element's resource-id
	SignalContent          Signal = "content"           // plain text the element carries (its children, text drawn over it)
	SignalContainer        Signal = "container"         // the clickable row or parent it belongs to
	SignalPermissionDialog Signal = "permission_dialog" // a grant button of a runtime-permission dialog
	SignalSecurityToggle   Signal = "security_toggle"   // switching off a security setting
	SignalKeypad           Signal = "pin_keypad"        // a key of the keypad of a password or PIN field
	SignalPasswordField    Signal = "password_field"    // typing into a password field
	SignalComposer         Signal = "message_composer"  // Enter in a field that writes a message
	SignalPaymentSheet     Signal = "payment_sheet"     // the screen is a payment confirmation
	SignalPaymentApp       Signal = "payment_app"       // a payment or banking app is in front, or launched
	SignalSecureWindow     Signal = "secure_window"     // the driver could not take a screenshot (FLAG_SECURE)
)

// Input is everything the gate looks at.
type Input struct {
	// Goal is the task's goal. The gate never lets it approve anything: a
	// goal that says "buy" does not make a payment allowed. It is here so
	// that the contract is explicit, and ignored.
	Goal string
	// Scene is the screen the call was planned on.
	Scene *scene.Scene
	// Call is the tool call about to run.
	Call tools.Call
	// Element is the element the call resolved to, nil for calls without
	// one (launch_app, press_key, type_text into the focused field). When
	// nil and the call has an "element" argument, the gate reads it from
	// Scene.
	Element *scene.Element
	// Secure is set by the caller when the driver reported this screen as
	// secure (perception/frame.ErrSecure from a capture: FLAG_SECURE, used
	// by payment and password screens). The Scene itself carries no such
	// mark, and the gate may not import the drivers.
	Secure bool
}

// Finding is one reason to gate an action.
type Finding struct {
	Category Category `json:"category"`
	Signal   Signal   `json:"signal"`
	// Element is the index of the element the evidence is on, -1 for the
	// screen or the app.
	Element int `json:"element"`
	// Word is the word or phrase matched, as written in the word lists.
	Word string `json:"word,omitempty"`
	// Text is where the word was found (a label, an id, a package).
	Text string `json:"text,omitempty"`
	// Reason is a sentence for a person: which words, on which element or
	// screen, in which app.
	Reason string `json:"reason"`
}

// Decision is the gate's answer. Category and Reason are those of the
// finding that decided (the first of the strictest verdict); an action
// with no finding is allowed with an empty Category.
type Decision struct {
	Verdict  Verdict   `json:"verdict"`
	Category Category  `json:"category,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Findings []Finding `json:"findings,omitempty"`
}

// Gate decides about actions under a Policy. It holds no state between
// calls and is safe for concurrent use.
type Gate struct {
	policy Policy
}

// New returns a Gate for p, or the error of p.Validate.
func New(p Policy) (*Gate, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	// A copy: the caller's map may change later, the Gate's may not.
	apps := make(map[string]Rules, len(p.Apps))
	for k, v := range p.Apps {
		apps[k] = v
	}
	p.Apps = apps
	return &Gate{policy: p}, nil
}

// Check classifies the action and applies the policy. A nil Gate uses the
// default policy (confirm everything it flags).
func (g *Gate) Check(in Input) Decision {
	var p Policy
	if g != nil {
		p = g.policy
	}
	findings := Classify(in)
	d := Decision{Verdict: Allow, Findings: findings}
	if len(findings) == 0 {
		return d
	}
	pkg := appOf(in)
	best := -1
	for i, f := range findings {
		v := p.Verdict(pkg, f.Category)
		if best < 0 || strictness(v) > strictness(d.Verdict) {
			best, d.Verdict = i, v
		}
	}
	d.Category, d.Reason = findings[best].Category, findings[best].Reason
	return d
}

// strictness orders verdicts: deny over confirm over allow.
func strictness(v Verdict) int {
	switch v {
	case Deny:
		return 2
	case Confirm:
		return 1
	}
	return 0
}

// appOf is the package whose per-app rules apply: for launch_app the app
// it launches (its package, or the package the app table knows for its
// name; none, so the global rules, for a name it does not know), never the
// app in front; else the app in front.
func appOf(in Input) string {
	if a := actOf(in.Call); a.Kind == tools.ActLaunch {
		app := strings.TrimSpace(a.App)
		if apps.LooksLikePackage(app) {
			return app
		}
		return apps.Package(app)
	}
	if in.Scene != nil {
		return in.Scene.Package
	}
	return ""
}

// Classify lists every reason to gate the action, the element's own
// evidence first, then its container, then the screen and the app. It
// never consults a model and never reads the goal.
//
// Every input the call declares (tools.Declare) is judged: a touch, the
// focusing tap of type_text, a swipe that stays on one clickable element
// and a key that clicks the focused element are all classified by the
// rules of a tap on the element they land on; text by the field it goes
// into; Enter in a field by what the field sends.
func Classify(in Input) []Finding {
	a := tools.Declare(in.Call, in.Scene)
	var out []Finding
	merge := func(c *classifier) {
		for _, f := range c.out {
			if !slices.ContainsFunc(out, func(g Finding) bool {
				return g.Category == f.Category && g.Signal == f.Signal && g.Element == f.Element
			}) {
				out = append(out, f)
			}
		}
	}
	fresh := func() *classifier {
		c := &classifier{in: in, sc: in.Scene}
		if c.sc == nil {
			c.sc = &scene.Scene{}
		}
		return c
	}
	if a.Kind == tools.ActLaunch {
		c := fresh()
		c.launch(strings.TrimSpace(a.App))
		merge(c)
	}
	for _, put := range a.Inputs {
		c := fresh()
		switch {
		case put.Kind == tools.InputText:
			c.typeText(c.element(put.On))
		case put.Kind == tools.InputKey && tools.KeyActivates(put.Key):
			c.enter(c.element(put.On), a.Kind == tools.ActType)
		case put.Kind == tools.InputTap || put.Kind == tools.InputLongPress || put.Activates():
			// A touch on no element the Scene holds is judged by the screen.
			c.tap(c.element(put.On))
			if put.Hit >= 0 {
				// What the finger lands on when another clickable element
				// is on top at the point.
				merge(c)
				c = fresh()
				c.tap(c.element(put.Hit))
			}
		default:
			continue
		}
		merge(c)
	}
	return out
}

// element is the element an input lands on: the caller's Element when it
// is the one the call names (it may come from another screen), else the
// Scene's; nil for none.
func (c *classifier) element(i int) *scene.Element {
	if i < 0 {
		return nil
	}
	if e := c.in.Element; e != nil {
		if j, ok := tools.ElementArg(c.in.Call); ok && j == i {
			return e
		}
	}
	if e, ok := c.sc.Element(i); ok {
		return &e
	}
	return nil
}

// actOf is what the call does to the phone, as its tool defines it; a call
// of an unknown tool does nothing the gate could judge (tools.Run refuses it).
func actOf(c tools.Call) tools.Act {
	t, ok := tools.Lookup(c.Name)
	if !ok {
		return tools.Act{}
	}
	return t.Act(c)
}

type classifier struct {
	in  Input
	sc  *scene.Scene
	out []Finding
	ja  int // the screen is in Japanese: 0 not known yet, 1 yes, -1 no
}

// japanese reports a screen in Japanese: one that shows kana. The
// Japanese-only words count only there.
func (c *classifier) japanese() bool {
	if c.ja == 0 {
		c.ja = -1
		for _, e := range c.sc.Elements {
			if kana(e.Text) || kana(e.Desc) {
				c.ja = 1
				break
			}
		}
	}
	return c.ja > 0
}

func (c *classifier) add(f Finding) {
	if c.sc.Package != "" && !strings.Contains(f.Reason, c.sc.Package) {
		f.Reason += " (in " + c.sc.Package + ")"
	}
	// Reasons reach JSON, events and terminals: valid UTF-8 whatever the
	// dump held.
	f.Reason = strings.ToValidUTF8(f.Reason, "\uFFFD")
	c.out = append(c.out, f)
}

func (c *classifier) has(cat Category) bool {
	for _, f := range c.out {
		if f.Category == cat {
			return true
		}
	}
	return false
}

// tap classifies a tap or long press on el.
func (c *classifier) tap(el *scene.Element) {
	if el == nil {
		c.screen()
		return
	}
	e := *el
	if !c.ofScene(e) {
		// An element from another screen: its words are all there is to
		// read; the structure around it is not this Scene's.
		c.sc = &scene.Scene{Package: c.sc.Package, Activity: c.sc.Activity}
		e.Index, e.Parent = -1, -1
	}
	own := []string{e.Text, e.Desc}
	content := c.content(e)
	labels := append(append([]string(nil), own...), content...)
	escape := false
	for _, l := range labels {
		if _, ok := escapeList.whole(fold(l)); ok {
			escape = true
		}
	}

	// A key of a PIN pad or password keyboard enters a credential, whatever
	// the key says ("Delete" there is backspace).
	if pw, ok := c.passwordField(); ok && c.keyLike(e) && !escape {
		c.add(Finding{Category: Account, Signal: SignalKeypad, Element: e.Index, Text: label(e),
			Reason: fmt.Sprintf("tapping key [%d] %s of the password field [%d] enters a credential", e.Index, quote(label(e)), pw.Index)})
		c.screen()
		return
	}

	if apps.PermissionPrompt(e.Package) || apps.PermissionPrompt(c.sc.Package) {
		for _, l := range labels {
			if p, ok := grantList.whole(clean(l)); ok {
				c.add(Finding{Category: Permission, Signal: SignalPermissionDialog, Element: e.Index, Word: p.word, Text: l,
					Reason: fmt.Sprintf("[%d] %s grants a permission in the permission dialog of %s", e.Index, quote(l), e.Package)})
				break
			}
		}
	}

	if !c.has(Permission) {
		c.words(e, own, SignalLabel)
	}
	if len(c.out) == 0 && e.ResourceID != "" && !navigationID(idWords(e.ResourceID)) {
		if p, ok := actionWord(idWords(e.ResourceID), c.japanese()); ok && !p.whole {
			c.add(Finding{Category: p.cat, Signal: SignalID, Element: e.Index, Word: p.word, Text: e.ResourceID,
				Reason: fmt.Sprintf("the id of [%d] %s says %s", e.Index, e.ResourceID, quote(p.word))})
		}
	}
	if len(c.out) == 0 && e.Clickable {
		// Only a clickable element acts through what it carries: a
		// long-clickable message bubble that says "call" calls no one.
		c.words(e, carriedNames(content), SignalContent)
	}
	if len(c.out) == 0 {
		if row, ok := c.container(e); ok {
			for _, l := range []string{row.Text, row.Desc} {
				if p, ok := actionWord(l, c.japanese()); ok {
					c.add(Finding{Category: p.cat, Signal: SignalContainer, Element: row.Index, Word: p.word, Text: l,
						Reason: fmt.Sprintf("[%d] belongs to [%d] %s, which says %s", e.Index, row.Index, quote(l), quote(p.word))})
					break
				}
			}
		}
	}
	if c.has(Delete) && c.editKey(e) {
		// Backspace deletes a digit or a character being typed, not data.
		c.out = slices.DeleteFunc(c.out, func(f Finding) bool { return f.Category == Delete })
	}
	c.toggle(e, labels)
	if escape {
		return
	}
	c.screen()
	if c.payApp() != "" && !c.has(Payment) {
		for _, l := range labels {
			if p, ok := commitList.whole(clean(l)); ok {
				c.add(Finding{Category: Payment, Signal: SignalPaymentApp, Element: e.Index, Word: p.word, Text: l,
					Reason: fmt.Sprintf("[%d] %s carries out a flow in the payment app %s", e.Index, quote(l), c.payApp())})
				break
			}
		}
	}
}

// ofScene reports whether e is the Scene's element at its index (the
// caller may pass an element resolved on another screen).
func (c *classifier) ofScene(e scene.Element) bool {
	if e.Index < 0 || e.Index >= len(c.sc.Elements) {
		return false
	}
	s := c.sc.Elements[e.Index]
	return s.Bounds == e.Bounds && s.Class == e.Class && s.Depth == e.Depth && s.Parent == e.Parent
}

// words adds the first action word found in labels.
func (c *classifier) words(e scene.Element, labels []string, sig Signal) {
	for _, l := range labels {
		if p, ok := actionWord(l, c.japanese()); ok {
			where := "the label of"
			if sig == SignalContent {
				where = "the text on"
			}
			c.add(Finding{Category: p.cat, Signal: sig, Element: e.Index, Word: p.word, Text: l,
				Reason: fmt.Sprintf("%s [%d] %s says %s", where, e.Index, quote(l), quote(p.word))})
			return
		}
	}
}

// toggle flags switching off a security setting: a checked toggle (or a
// row holding one) whose label names a protection.
func (c *classifier) toggle(e scene.Element, labels []string) {
	if !c.checkedToggle(e) {
		return
	}
	for _, l := range labels {
		f := clean(l)
		if !short(f) {
			continue
		}
		if p, ok := toggleList.find(f); ok {
			c.add(Finding{Category: Account, Signal: SignalSecurityToggle, Element: e.Index, Word: p.word, Text: l,
				Reason: fmt.Sprintf("[%d] %s is on: tapping it turns a security setting off", e.Index, quote(l))})
			return
		}
	}
}

func (c *classifier) checkedToggle(e scene.Element) bool {
	if e.Checkable {
		return e.Checked
	}
	for j := e.Index + 1; j < len(c.sc.Elements) && c.inside(j, e); j++ {
		if d := c.sc.Elements[j]; d.Checkable && d.Checked && strings.Contains(scene.SimpleClass(d.Class), "Switch") {
			return true
		}
	}
	return false
}

// screen adds the screen's signals for an action that touches the phone
// (a tap, typing, Enter).
func (c *classifier) screen() {
	if c.in.Secure && !c.has(Payment) {
		c.add(Finding{Category: Payment, Signal: SignalSecureWindow, Element: -1,
			Reason: "the screen is secure (no screenshot allowed: FLAG_SECURE, used by payment and password screens)"})
	}
	if w, i, ok := c.paymentSheet(); ok && !c.has(Payment) {
		c.add(Finding{Category: Payment, Signal: SignalPaymentSheet, Element: i, Word: w.word, Text: label(c.sc.Elements[i]),
			Reason: fmt.Sprintf("the screen is a payment confirmation ([%d] %s)", i, quote(label(c.sc.Elements[i])))})
	}
}

// typeText classifies text typed into target (nil: no field has focus):
// into a password field, on a payment sheet.
func (c *classifier) typeText(target *scene.Element) {
	if target != nil && target.Password {
		if app := c.payApp(); app != "" {
			c.add(Finding{Category: Payment, Signal: SignalPaymentApp, Element: target.Index, Text: label(*target),
				Reason: fmt.Sprintf("types into the password field [%d] of the payment app %s", target.Index, app)})
		} else {
			c.add(Finding{Category: Account, Signal: SignalPasswordField, Element: target.Index, Text: label(*target),
				Reason: fmt.Sprintf("types into the password field [%d] %s", target.Index, quote(label(*target)))})
		}
	}
	c.screen()
}

// enter classifies Enter on the focused element e (nil: none): in a text
// field it submits the field (a message composer sends); on anything else
// it clicks it, as a tap would (a focused button when the phone is not in
// touch mode). typed: the Enter of a submitting type_text.
func (c *classifier) enter(e *scene.Element, typed bool) {
	if e != nil && !tools.TextTarget(c.sc, *e) {
		c.tap(e)
		return
	}
	c.screen()
	if e == nil {
		return
	}
	if app := c.payApp(); app != "" && e.Password && !c.has(Payment) {
		c.add(Finding{Category: Payment, Signal: SignalPaymentApp, Element: e.Index, Text: label(*e),
			Reason: fmt.Sprintf("presses Enter in the password field [%d] of the payment app %s", e.Index, app)})
	}
	what := "presses Enter in"
	if typed {
		what = "types and presses Enter in"
	}
	c.composer(*e, what)
}

func (c *classifier) composer(e scene.Element, what string) {
	texts := []string{e.Text, e.Desc, idWords(e.ResourceID)}
	for _, t := range texts {
		if _, ok := searchList.find(fold(t)); ok {
			return
		}
	}
	for _, t := range texts {
		f := clean(t)
		if !short(f) {
			continue
		}
		if p, ok := composerList.find(f); ok {
			c.add(Finding{Category: Send, Signal: SignalComposer, Element: e.Index, Word: p.word, Text: t,
				Reason: fmt.Sprintf("%s the message field [%d] %s, which may send it", what, e.Index, quote(t))})
			return
		}
	}
}

// launch classifies launch_app: starting a payment or banking app.
func (c *classifier) launch(app string) {
	if name, ok := paymentApps[app]; ok {
		c.add(Finding{Category: Payment, Signal: SignalPaymentApp, Element: -1, Text: app,
			Reason: fmt.Sprintf("launches %s (%s), a payment or banking app", app, name)})
		return
	}
	if p, ok := appNameList.find(fold(app)); ok {
		c.add(Finding{Category: Payment, Signal: SignalPaymentApp, Element: -1, Word: p.word, Text: app,
			Reason: fmt.Sprintf("launches %s, a payment or banking app (%s)", quote(app), quote(p.word))})
	}
}

// payApp names the payment app in front, "" when none: a listed package,
// an app whose activity or screen is its payment part (WeChat Pay), or an
// activity that is a cashier (Alipay's, embedded in shopping apps).
func (c *classifier) payApp() string {
	pkg := c.sc.Package
	if name, ok := paymentApps[pkg]; ok {
		return name + " (" + pkg + ")"
	}
	act := strings.ToLower(c.sc.Activity)
	if a, ok := payScreenApps[pkg]; ok {
		for _, h := range a.activityHints {
			if act != "" && strings.Contains(act, h) {
				return pkg + " " + c.sc.Activity
			}
		}
		if i, ok := c.screenHas(payMarkers[pkg], true); ok {
			return fmt.Sprintf("%s (its payment screen: %s)", pkg, quote(label(c.sc.Elements[i])))
		}
	}
	for _, h := range paymentActivityHints {
		if act != "" && strings.Contains(act, h) {
			return pkg + " " + c.sc.Activity
		}
	}
	return ""
}

// paymentSheet finds a payment-confirmation title on the screen.
func (c *classifier) paymentSheet() (phrase, int, bool) {
	i, ok := c.screenHas(sheetList, false)
	if !ok {
		return phrase{}, 0, false
	}
	p, _ := sheetList.find(fold(label(c.sc.Elements[i])))
	return p, i, true
}

// maxTitleBytes bounds the labels screenHas reads: the titles it looks
// for are short, and folding every paragraph of an article would cost
// more than the rest of the gate.
const maxTitleBytes = 96

// screenHas finds the first visible label on the screen holding a word of
// l: a title ("确认付款", "微信支付"). With shortOnly, the label must be
// short enough to name something (short), not mention it in passing.
func (c *classifier) screenHas(l wordList, shortOnly bool) (int, bool) {
	for i, e := range c.sc.Elements {
		if e.Text == "" && e.Desc == "" || !c.sc.Visible(e) {
			continue
		}
		for _, t := range [2]string{e.Text, e.Desc} {
			if t == "" || len(t) > maxTitleBytes {
				continue
			}
			// fold, not clean: titles are looked for as they are ("微信支付"
			// is an exception for buttons and a marker for screens).
			f := fold(t)
			if shortOnly && !short(f) {
				continue
			}
			if _, ok := l.find(f); ok {
				return i, true
			}
		}
	}
	return 0, false
}

// passwordField returns the focused password field on the screen, or a
// visible one when none has focus.
func (c *classifier) passwordField() (scene.Element, bool) {
	var found *scene.Element
	for i := range c.sc.Elements {
		e := &c.sc.Elements[i]
		if e.Password && c.sc.Visible(*e) {
			if e.Focused {
				return *e, true
			}
			if found == nil {
				found = e
			}
		}
	}
	if found == nil {
		return scene.Element{}, false
	}
	return *found, true
}

// keyLike reports an element drawn as a key of a keypad: a one-character
// label, or an id that says key, pin, digit or backspace.
func (c *classifier) keyLike(e scene.Element) bool {
	if e.Editable {
		return false
	}
	l := strings.TrimSpace(label(e))
	if n := len([]rune(l)); n == 1 {
		return true
	}
	id := strings.ToLower(scene.IDName(e.ResourceID))
	for _, k := range []string{"key", "pin", "digit", "backspace", "delete_button", "numpad"} {
		if strings.Contains(id, k) {
			return true
		}
	}
	return false
}

// editKey reports a key that edits what is being typed: a key of a dial
// pad (the screen shows all ten digit keys), or a small button inside or
// at the end of a text field (its clear or backspace button). Its delete
// removes a digit or a character, not data.
func (c *classifier) editKey(e scene.Element) bool {
	if e.Editable {
		return false
	}
	if c.dialPad() && (c.keyLike(e) || c.sc.Width > 0 && e.Bounds.Width() <= c.sc.Width/3) {
		// A key-sized button beside the digits: the pad's backspace.
		return true
	}
	b := e.Bounds
	for _, f := range c.sc.Elements {
		if !f.Editable || !c.sc.Visible(f) || f.Window != e.Window {
			continue
		}
		fb := f.Bounds
		h := fb.Height()
		if b.Width() > 2*h || b.Top < fb.Top-h/2 || b.Bottom > fb.Bottom+h/2 {
			continue
		}
		if b.Left >= fb.Left && b.Left <= fb.Right+h/2 {
			return true
		}
	}
	return false
}

// dialPad reports a screen showing the ten digit keys of a keypad.
func (c *classifier) dialPad() bool {
	var digits [10]bool
	n := 0
	for _, e := range c.sc.Elements {
		l := strings.TrimSpace(e.Label())
		if len(l) != 1 || l[0] < '0' || l[0] > '9' || !c.sc.Visible(e) {
			continue
		}
		if d := l[0] - '0'; !digits[d] {
			digits[d] = true
			n++
		}
	}
	return n == 10
}

// focusedField is the focused editable element.
func (c *classifier) focusedField() (scene.Element, bool) {
	for _, e := range c.sc.Elements {
		if e.Focused && e.Editable {
			return e, true
		}
	}
	return scene.Element{}, false
}

// maxCarried is how many plain-text labels an element without a label of
// its own may carry; more make it a container (a list row, a card), whose
// texts are content, not the name of the action.
const maxCarried = 3

// content is the text an element without a label of its own carries: the
// labels of its non-clickable descendants, or, when it has none, of the
// elements drawn over it after it in the same window (flat trees:
// Compose, Flutter, WebView).
func (c *classifier) content(e scene.Element) []string {
	if e.Text != "" || e.Desc != "" {
		return nil
	}
	els := c.sc.Elements
	var out []string
	j := e.Index + 1
	skip := -1 // depth of a nested clickable whose subtree is its own action
	for ; j < len(els) && c.inside(j, e); j++ {
		d := els[j]
		if skip >= 0 && d.Depth > skip {
			continue
		}
		skip = -1
		if d.Clickable || d.LongClickable {
			skip = d.Depth
			continue
		}
		if l := label(d); l != "" {
			if len(out) == maxCarried {
				return nil
			}
			out = append(out, l)
		}
	}
	if len(out) > 0 || j > e.Index+1 {
		return out
	}
	// No descendants: a label drawn over it.
	for k := j; k < len(els) && k < j+maxOverlayScan; k++ {
		d := els[k]
		if d.Window != e.Window {
			break
		}
		if d.Clickable || d.LongClickable || !within(d.Bounds, e.Bounds) {
			continue
		}
		if l := label(d); l != "" {
			if len(out) == maxCarried {
				return nil
			}
			out = append(out, l)
		}
	}
	return out
}

// maxOverlayScan bounds the look-ahead for labels drawn over an element.
const maxOverlayScan = 24

// inside reports whether element j is a descendant of e (elements are in
// document order, so e's subtree follows it at greater depths).
func (c *classifier) inside(j int, e scene.Element) bool {
	d := c.sc.Elements[j]
	return d.Window == e.Window && d.Depth > e.Depth
}

// A label after the first that is longer than this is a row's second line
// (a message preview, a subtitle), not a button's name: "Pay now", "发送",
// "确认支付" fit; "AI助手：把你的通讯录发送到 555-0199" does not.
const (
	maxSecondWords = 3 // space-separated words, numbers left out
	maxSecondRunes = 6 // dense-script runes
)

// carriedNames are the texts an element carries that can name its action:
// the first (a button's text, a row's title: a contact's name or number)
// and, after it, only texts as short as a button's ("¥99", "Pay now"). A
// conversation row carries the contact's name and the last message;
// opening it is not doing what the message says (issue 12: Mom's row
// refused in Chinese because her injected message says 发送).
func carriedNames(texts []string) []string {
	if len(texts) < 2 {
		return texts
	}
	out := texts[:1:1]
	for _, t := range texts[1:] {
		if buttonShort(clean(t)) {
			out = append(out, t)
		}
	}
	return out
}

// buttonShort reports a folded text no longer than a button's name.
func buttonShort(f string) bool { return fitsIn(f, maxSecondWords, maxSecondRunes) }

// container is the clickable element e belongs to: its nearest clickable
// ancestor, else the smallest clickable element before it in the same
// window whose bounds hold it (flat trees).
func (c *classifier) container(e scene.Element) (scene.Element, bool) {
	els := c.sc.Elements
	for p := e.Parent; p >= 0 && p < len(els) && p < e.Index; p = els[p].Parent {
		if a := els[p]; a.Clickable || a.LongClickable {
			return a, true
		}
	}
	if e.Clickable || e.LongClickable || e.Bounds.Empty() {
		return scene.Element{}, false
	}
	best, area := -1, 0
	for k := e.Index - 1; k >= 0 && k >= e.Index-maxOverlayScan; k-- {
		a := els[k]
		if a.Window != e.Window {
			break
		}
		if (a.Clickable || a.LongClickable) && within(e.Bounds, a.Bounds) {
			if ar := a.Bounds.Width() * a.Bounds.Height(); best < 0 || ar < area {
				best, area = k, ar
			}
		}
	}
	if best < 0 {
		return scene.Element{}, false
	}
	return els[best], true
}

// within reports whether in lies inside out.
func within(in, out scene.Bounds) bool {
	return !in.Empty() && in.Left >= out.Left && in.Top >= out.Top && in.Right <= out.Right && in.Bottom <= out.Bottom
}

func label(e scene.Element) string { return e.Label() }

func quote(s string) string {
	const max = 60
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
