package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"phonepilot/device"
	"phonepilot/internal/clock"
	"phonepilot/scene"
)

// toyPhone is a small stateful phone for runtime tests: a launcher, and a
// shopping app with a home page (a search bar that opens the search page),
// a search page (an editable field and a Search button) and a results page
// that shows a spinner for a while. Knobs make it misbehave the ways real
// phones do: a popup after launch, dropped taps, a dead search bar, slow
// typing, a disconnect.
type toyPhone struct {
	mu    sync.Mutex
	clock clock.Clock

	// knobs
	popupAfterLaunch bool          // an ad popup covers the home page after launch
	dropTaps         int           // this many next taps do nothing
	deadSearchBar    bool          // tapping the search bar never does anything
	spinner          time.Duration // results load this long
	typeDelay        time.Duration // TypeText takes this long (honours ctx)
	typing           chan struct{} // when set, closed as TypeText starts its typeDelay
	disconnectAfter  int           // after this many device calls, everything fails (0: never)
	typeEffectDelay  int           // the field shows typed text only after this many Scene calls
	dropEnter        int           // this many next enter presses do nothing
	sceneErrors      int           // this many next observations fail like an animating screen
	barAfter         time.Time     // the home page's search bar shows only from this time on

	// state
	screen      string // launcher, home, search, results
	popup       bool
	field       string
	pendingText string
	pendingIn   int
	lastSearch  string
	resultsAt   time.Time
	calls       int
	taps        int
	typed       []string
	launches    int
	keys        []device.Key
}

var _ device.Device = (*toyPhone)(nil)

func newToyPhone(clk clock.Clock) *toyPhone { return &toyPhone{clock: clk, screen: "launcher"} }

const toyPkg = "com.taobao.taobao"

func (p *toyPhone) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.calls++
	if p.disconnectAfter > 0 && p.calls > p.disconnectAfter {
		return fmt.Errorf("toy phone: %w", device.ErrDisconnected)
	}
	return nil
}

func el(idx, parent int, class, text, id string, b scene.Bounds) scene.Element {
	return scene.Element{Index: idx, Parent: parent, Class: class, Text: text, ResourceID: id, Bounds: b, Enabled: true, Package: toyPkg}
}

func (p *toyPhone) Scene(ctx context.Context) (*scene.Scene, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.enter(ctx); err != nil {
		return nil, err
	}
	if p.sceneErrors > 0 {
		p.sceneErrors--
		return nil, errors.New("ERROR: could not get idle state")
	}
	if p.pendingText != "" {
		p.pendingIn--
		if p.pendingIn <= 0 {
			p.field, p.pendingText = p.pendingText, ""
		}
	}
	return p.build(), nil
}

// build draws the current screen (p.mu held).
func (p *toyPhone) build() *scene.Scene {
	sc := &scene.Scene{Width: 1080, Height: 2400}
	add := func(e scene.Element) int {
		e.Index = len(sc.Elements)
		sc.Elements = append(sc.Elements, e)
		return e.Index
	}
	root := scene.Bounds{Left: 0, Top: 0, Right: 1080, Bottom: 2400}
	switch p.screen {
	case "launcher":
		sc.Package = "com.android.launcher3"
		r := add(scene.Element{Parent: -1, Class: "android.widget.FrameLayout", Bounds: root, Package: sc.Package})
		add(scene.Element{Parent: r, Class: "android.widget.TextView", Text: "Taobao", Desc: "Taobao", Clickable: true,
			Bounds: scene.Bounds{Left: 100, Top: 1800, Right: 300, Bottom: 2000}, Package: sc.Package})
		return sc
	}
	sc.Package = toyPkg
	r := add(scene.Element{Parent: -1, Class: "android.widget.FrameLayout", Bounds: root, Package: toyPkg})
	switch p.screen {
	case "home":
		if p.clock.Now().Before(p.barAfter) {
			add(el(0, r, "android.widget.TextView", "Guess you like", "", scene.Bounds{Left: 40, Top: 400, Right: 600, Bottom: 480}))
			break
		}
		bar := el(0, r, "android.widget.LinearLayout", "", "com.taobao.taobao:id/search_bar", scene.Bounds{Left: 40, Top: 150, Right: 1040, Bottom: 270})
		bar.Clickable = true
		b := add(bar)
		add(el(0, b, "android.widget.TextView", "Search products", "com.taobao.taobao:id/search_hint", scene.Bounds{Left: 60, Top: 160, Right: 900, Bottom: 260}))
		add(el(0, r, "android.widget.TextView", "Guess you like", "", scene.Bounds{Left: 40, Top: 400, Right: 600, Bottom: 480}))
		if p.popup {
			pop := add(el(0, r, "android.widget.FrameLayout", "", "com.taobao.taobao:id/poplayer_ad", scene.Bounds{Left: 100, Top: 600, Right: 980, Bottom: 1600}))
			add(el(0, pop, "android.widget.TextView", "Limited-time flash sale", "", scene.Bounds{Left: 150, Top: 700, Right: 930, Bottom: 800}))
			cl := el(0, pop, "android.widget.Button", "Close", "com.taobao.taobao:id/poplayer_close", scene.Bounds{Left: 400, Top: 1400, Right: 680, Bottom: 1500})
			cl.Clickable = true
			add(cl)
		}
	case "search":
		f := el(0, r, "android.widget.EditText", p.field, "com.taobao.taobao:id/search_edit", scene.Bounds{Left: 40, Top: 150, Right: 800, Bottom: 270})
		if f.Text == "" {
			f.Text = "Search products"
		}
		f.Editable, f.Clickable, f.Focused, f.Focusable = true, true, true, true
		add(f)
		btn := el(0, r, "android.widget.Button", "Search", "com.taobao.taobao:id/search_btn", scene.Bounds{Left: 820, Top: 150, Right: 1040, Bottom: 270})
		btn.Clickable = true
		add(btn)
	case "results":
		add(el(0, r, "android.widget.TextView", p.lastSearch, "com.taobao.taobao:id/query", scene.Bounds{Left: 40, Top: 150, Right: 800, Bottom: 270}))
		if p.clock.Now().Before(p.resultsAt) {
			add(el(0, r, "android.widget.ProgressBar", "", "com.taobao.taobao:id/loading", scene.Bounds{Left: 490, Top: 1100, Right: 590, Bottom: 1200}))
		} else {
			item := el(0, r, "android.widget.TextView", p.lastSearch+" M4 16GB", "", scene.Bounds{Left: 40, Top: 400, Right: 1040, Bottom: 600})
			item.Clickable = true
			add(item)
		}
	}
	return sc
}

// hit finds the clickable element under a point on the current screen.
func (p *toyPhone) hit(x, y int) string {
	sc := p.build()
	for i := len(sc.Elements) - 1; i >= 0; i-- {
		e := sc.Elements[i]
		if (e.Clickable || e.Editable) && e.Bounds.Contains(x, y) {
			if e.ResourceID != "" {
				return scene.IDName(e.ResourceID)
			}
			return e.Text
		}
	}
	return ""
}

func (p *toyPhone) Tap(ctx context.Context, x, y int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.enter(ctx); err != nil {
		return err
	}
	target := p.hit(x, y)
	p.taps++
	if p.dropTaps > 0 {
		p.dropTaps--
		return nil
	}
	switch {
	case p.popup && target != "poplayer_close":
		// The popup swallows taps outside its close button.
	case target == "poplayer_close":
		p.popup = false
	case target == "search_bar" && !p.deadSearchBar:
		p.screen, p.field = "search", ""
	case target == "Taobao":
		p.screen = "home"
	}
	return nil
}

func (p *toyPhone) LongPress(ctx context.Context, x, y int, d time.Duration) error {
	return p.Tap(ctx, x, y)
}

func (p *toyPhone) Swipe(ctx context.Context, x1, y1, x2, y2 int, d time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.enter(ctx)
}

func (p *toyPhone) TypeText(ctx context.Context, text string) error {
	p.mu.Lock()
	if err := p.enter(ctx); err != nil {
		p.mu.Unlock()
		return err
	}
	p.mu.Unlock()
	if p.typeDelay > 0 {
		if p.typing != nil {
			close(p.typing)
			p.typing = nil
		}
		// Typing takes time; cancelled midway it leaves the field as it was.
		if err := (clock.Real{}).Sleep(ctx, p.typeDelay); err != nil {
			return err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.screen != "search" {
		return fmt.Errorf("toy phone: %w", device.ErrNoFocus)
	}
	p.typed = append(p.typed, text)
	if p.typeEffectDelay > 0 {
		p.pendingText, p.pendingIn = text, p.typeEffectDelay
		return nil
	}
	p.field = text
	return nil
}

func (p *toyPhone) Key(ctx context.Context, k device.Key) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.enter(ctx); err != nil {
		return err
	}
	p.keys = append(p.keys, k)
	switch k {
	case device.KeyEnter:
		if p.dropEnter > 0 {
			p.dropEnter--
			return nil
		}
		if p.pendingText != "" {
			p.field, p.pendingText = p.pendingText, ""
		}
		if p.screen == "search" && strings.TrimSpace(p.field) != "" {
			p.lastSearch = p.field
			p.screen = "results"
			p.resultsAt = p.clock.Now().Add(p.spinner)
		}
	case device.KeyBack:
		switch {
		case p.popup:
			p.popup = false
		case p.screen == "results":
			p.screen = "search"
		case p.screen == "search":
			p.screen = "home"
		case p.screen == "home":
			p.screen = "launcher"
		}
	case device.KeyHome:
		p.screen = "launcher"
	}
	return nil
}

func (p *toyPhone) LaunchApp(ctx context.Context, app string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.enter(ctx); err != nil {
		return err
	}
	switch strings.ToLower(app) {
	case "taobao", "淘宝", toyPkg:
	default:
		return fmt.Errorf("toy phone: %q: %w", app, device.ErrAppNotFound)
	}
	p.launches++
	p.screen = "home"
	p.popup = p.popupAfterLaunch
	return nil
}

func (p *toyPhone) state() (lastSearch string, typed []string, launches int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastSearch, append([]string(nil), p.typed...), p.launches
}
