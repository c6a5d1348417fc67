package phonebench

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/phonebench/tasks"
	"phonepilot/plan"
	"phonepilot/plan/ai"
	"phonepilot/scene"
	"phonepilot/tools"
)

// phoneAt is a fault-free English phone; do brings it to the screen a test
// needs, and the listing of that screen is returned with the phone.
func phoneAt(t *testing.T, start sim.Start, do func(ctx context.Context, d *sim.Device)) (*sim.Phone, string) {
	t.Helper()
	clk := clock.NewFake(epoch)
	p, err := sim.New(sim.Config{Locale: "en", Clock: clk, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if do != nil {
		do(ctx, p.Device())
	}
	clk.Sleep(ctx, 5*time.Second)
	sc, err := p.Device().Scene(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return p, sc.Listing()
}

func launch(app string) func(context.Context, *sim.Device) {
	return func(ctx context.Context, d *sim.Device) { d.LaunchApp(ctx, app) }
}

// call decodes a move's arguments.
func args(t *testing.T, m move) map[string]any {
	t.Helper()
	var a map[string]any
	if err := json.Unmarshal(m.Call.Args, &a); err != nil {
		t.Fatalf("%s: args %s: %v", m.Call.Name, m.Call.Args, err)
	}
	return a
}

// indexOf is the [N] of the listing line labelled label.
func lineIndex(t *testing.T, listing, label string) int {
	t.Helper()
	l, ok := tasks.FindTarget(listing, label)
	if !ok {
		t.Fatalf("no %q in\n%s", label, listing)
	}
	return l.Index
}

func TestDeciderTapsTheTargetByItsListedLabel(t *testing.T) {
	_, home := phoneAt(t, sim.Start{}, nil)
	d := newDecider([]tasks.Step{{Intent: "open Settings", Tool: tasks.ToolTap, Target: "Settings"}, {Tool: tasks.ToolFinishTask, Args: map[string]any{"success": true, "reason": "done"}}})
	m := d.next(home, nil)
	if m.Call.Name != tools.Tap || int(args(t, m)["element"].(float64)) != lineIndex(t, home, "Settings") {
		t.Fatalf("first move %s %s; want a tap on Settings in\n%s", m.Call.Name, m.Call.Args, home)
	}
	// A changed screen and an ok result: the script moves on and finishes.
	_, settings := phoneAt(t, sim.Start{}, launch("Settings"))
	m = d.next(settings, &outcome{OK: true, Text: "tapped"})
	if !m.Finish || !m.Success {
		t.Fatalf("after the tap: %+v; want finish success", m)
	}
}

// A row whose label borrowed its texts ("Display · Dark theme, font size,
// brightness") is found by one of its parts; a row further down is
// scrolled to, in the list that scrolls.
func TestDeciderScrollsToFindARowAndGivesUpNamingIt(t *testing.T) {
	_, settings := phoneAt(t, sim.Start{}, launch("Settings"))
	if !strings.Contains(settings, `"Display · `) {
		t.Fatalf("the Settings page is not what this test expects:\n%s", settings)
	}
	d := newDecider([]tasks.Step{{Intent: "open Display", Tool: tasks.ToolTap, Target: "Display"}})
	if m := d.next(settings, nil); int(args(t, m)["element"].(float64)) != lineIndex(t, settings, "Display") {
		t.Fatalf("want a tap on the Display row, got %s %s", m.Call.Name, m.Call.Args)
	}

	d = newDecider([]tasks.Step{{Intent: "open NFC", Tool: tasks.ToolTap, Target: "NFC"}})
	sc, ok := listingOf(settings).scrollable()
	if !ok {
		t.Fatal("no scrollable list on the Settings page")
	}
	var prev *outcome
	scrolls := 0
	for i := 0; i < 20; i++ {
		m := d.next(settings, prev)
		if m.Finish {
			if m.Success || !strings.Contains(m.Reason, `"NFC"`) {
				t.Fatalf("finish %+v; want success=false naming NFC", m)
			}
			break
		}
		a := args(t, m)
		if m.Call.Name != tools.Scroll || int(a["element"].(float64)) != sc.Index {
			t.Fatalf("move %d: %s %s; want a scroll of [%d]", i, m.Call.Name, m.Call.Args, sc.Index)
		}
		scrolls++
		prev = &outcome{OK: true}
	}
	// The same screen after every scroll: the end of the list both ways,
	// found after one scroll down and one up.
	if scrolls != 2 {
		t.Errorf("%d scrolls on a list that does not move; want 2 (down, then up)", scrolls)
	}
}

// A screen on which nothing scrolls lists all it has (a list marks itself
// scrollable only while it has more to show): a target not on it is not
// below it either, and the decision-maker gives up at once, naming it,
// instead of swiping both ways at a page that cannot move.
func TestDeciderDoesNotScrollAScreenThatCannotScroll(t *testing.T) {
	_, clock := phoneAt(t, sim.Start{}, launch("Clock"))
	if _, ok := listingOf(clock).scrollable(); ok {
		t.Fatalf("the Clock screen lists something scrollable; this test wants one that lists all it has:\n%s", clock)
	}
	d := newDecider([]tasks.Step{{Intent: "switch the alarm off", Tool: tasks.ToolTap, Target: "Alarm 10:20 AM"}})
	m := d.next(clock, nil)
	if !m.Finish || m.Success || !strings.Contains(m.Reason, `"Alarm 10:20 AM"`) || !strings.Contains(m.Reason, "nothing on it scrolls") {
		t.Fatalf("on a screen that cannot scroll, without the target: %s %s (finish %v, %q); want finish success=false naming it", m.Call.Name, m.Call.Args, m.Finish, m.Reason)
	}
}

// A screen with nothing a finger can use yet (Taobao's splash: a logo)
// is one still loading, not one that lacks the target: the decision-maker
// waits for it rather than give up because nothing on it scrolls (a peer
// that reads at a fixed time met the splash on slow and gave up).
func TestDeciderWaitsOutAScreenWithNothingToUse(t *testing.T) {
	const splash = "Screen 1080x2400 · app com.taobao.taobao\n[3] ImageView \"Taobao\" id=splash_logo\n"
	d := newDecider([]tasks.Step{{Intent: "open the search page", Tool: tasks.ToolTap, Target: "Search"}})
	if m := d.next(splash, nil); m.Finish || m.Call.Name != tools.Wait {
		t.Fatalf("on a splash screen: %s %s (finish %v, %q); want a wait", m.Call.Name, m.Call.Args, m.Finish, m.Reason)
	}
}

// Text goes into a field: when the step that types finds its label on a
// button (the contact page's "短信", which opens the message box the label
// also names) the box is not open yet, so the decision-maker presses the
// button again instead of typing into it (flaky, contacts.text zh seed 9:
// the press was lost under a permission prompt, and three type_text calls
// on the button failed the run).
func TestDeciderTypesIntoAFieldNotAButton(t *testing.T) {
	const contact = "Screen 1080x2400 · app com.android.contacts\n[4] TextView \"张伟\" id=large_title\n[8] Button \"短信\" id=contact_text clickable\n[9] Button \"通话\" id=contact_call clickable\n"
	d := newDecider([]tasks.Step{{Intent: "text them", Tool: tasks.ToolTap, Target: "短信"},
		{Intent: "write the message", Tool: tasks.ToolTypeText, Target: "短信", Args: map[string]any{"text": "稍后给我打电话"}}})
	d.i = 1 // the press is taken to have landed
	m := d.next(contact, nil)
	if m.Finish || m.Call.Name != tools.Tap || int(args(t, m)["element"].(float64)) != 8 {
		t.Fatalf("with the message box not open: %s %s; want the button [8] pressed again", m.Call.Name, m.Call.Args)
	}
}

func listingOf(text string) listing {
	l, _ := parseListing(text)
	return l
}

// A step whose target is not there and that may be skipped is skipped; a
// popup in the way is closed first, by its own "Don't allow"/"Close"; a
// tap that left the same screen is made again.
func TestDeciderClosesPopupsSkipsAndRepeatsDroppedTaps(t *testing.T) {
	const popup = "Screen 1080x2400 · app com.taobao.taobao\n" +
		"[5] FrameLayout \"Search\" id=home_searchbar clickable\n" +
		"[56] FrameLayout \"Cart\" id=tab_cart clickable\n" +
		"[64] TextView \"Double 11 red packet\" id=poplayer_title\n" +
		"[66] Button \"Claim now\" id=poplayer_action clickable\n" +
		"[67] ImageView \"Close\" id=poplayer_close clickable\n" +
		"[80] Button \"Don’t allow\" id=permission_deny_button clickable\n"
	d := newDecider([]tasks.Step{
		{Intent: "close the promotion", Tool: tasks.ToolTap, Target: "Not there", IfMissing: "skip"},
		{Intent: "open the cart", Tool: tasks.ToolTap, Target: "Cart"},
	})
	m := d.next(popup, nil)
	if int(args(t, m)["element"].(float64)) != 80 {
		t.Fatalf("want the topmost popup's \"Don't allow\" [80] first, got %s", m.Call.Args)
	}
	noPerm := strings.Replace(popup, "[80] Button \"Don’t allow\" id=permission_deny_button clickable\n", "", 1)
	if m = d.next(noPerm, &outcome{OK: true}); int(args(t, m)["element"].(float64)) != 67 {
		t.Fatalf("want the ad's Close [67] next, got %s", m.Call.Args)
	}
	clear := "Screen 1080x2400 · app com.taobao.taobao\n[5] FrameLayout \"Search\" id=home_searchbar clickable\n[56] FrameLayout \"Cart\" id=tab_cart clickable\n"
	if m = d.next(clear, &outcome{OK: true}); int(args(t, m)["element"].(float64)) != 56 {
		t.Fatalf("want the skipped step passed and Cart [56] tapped, got %s %s", m.Call.Name, m.Call.Args)
	}
	// The tap left the same screen: tap again.
	if m = d.next(clear, &outcome{OK: true}); m.Finish || int(args(t, m)["element"].(float64)) != 56 {
		t.Fatalf("after a tap that changed nothing: %+v; want Cart tapped again", m)
	}
}

func TestDeciderWaitsWhileLoadingAndFailsAfterRepeatedErrors(t *testing.T) {
	const loading = "Screen 1080x2400 · app com.taobao.taobao\n[12] ProgressBar \"Loading…\" id=loading\n"
	d := newDecider([]tasks.Step{{Intent: "open the first result", Tool: tasks.ToolTap, Target: "AirPods"}})
	if m := d.next(loading, nil); m.Call.Name != tools.Wait {
		t.Fatalf("on a loading screen: %s; want wait", m.Call.Name)
	}
	const results = "Screen 1080x2400 · app com.taobao.taobao\n[20] TextView \"AirPods\" clickable\n"
	d = newDecider([]tasks.Step{{Intent: "open the first result", Tool: tasks.ToolTap, Target: "AirPods"}})
	m := d.next(results, nil)
	for i := 0; i < maxFailures; i++ {
		m = d.next(results, &outcome{OK: false, Text: "failed: the screen did not change"})
	}
	if !m.Finish || m.Success || !strings.Contains(m.Reason, "open the first result") {
		t.Fatalf("after %d failed calls: %+v; want finish success=false naming the step", maxFailures, m)
	}
}

// The reference policy's provider reads the request the real AIPlanner
// builds: the listing of the turn and the result of its previous call.
func TestScriptedProviderReadsWhatTheAIPlannerSends(t *testing.T) {
	p, home := phoneAt(t, sim.Start{}, nil)
	sc, err := p.Device().Scene(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	prov := &scripted{d: newDecider([]tasks.Step{
		{Intent: "open Clock", Tool: tasks.ToolTap, Target: "Clock"},
		{Tool: tasks.ToolFinishTask, Args: map[string]any{"success": true, "reason": "Clock is open"}},
	})}
	planner := ai.NewWithProvider(ai.Config{Clock: clock.NewFake(epoch)}, prov)
	dec, err := planner.Plan(context.Background(), plan.Input{Goal: "open Clock", Scene: sc})
	if err != nil {
		t.Fatal(err)
	}
	if len(dec.Steps) != 1 || dec.Steps[0].Call.Name != tools.Tap {
		t.Fatalf("decision %+v", dec)
	}
	if i, _ := tools.ElementArg(dec.Steps[0].Call); i != lineIndex(t, home, "Clock") {
		t.Fatalf("tapped [%d]; want Clock [%d]", i, lineIndex(t, home, "Clock"))
	}
	if dec.Usage.InputTokens < int64(len(ai.SystemPrompt)/4) {
		t.Errorf("estimated input tokens %d; the system prompt alone is about %d", dec.Usage.InputTokens, len(ai.SystemPrompt)/4)
	}
	// The step ran and the screen changed: the next turn finishes.
	_, clk := phoneAt(t, sim.Start{}, launch("Clock"))
	csc := mustScene(t, clk)
	rec := plan.StepRecord{Number: 1, Intent: dec.Steps[0].Intent, Call: dec.Steps[0].Call, Status: "succeeded", Changed: true,
		Attempts: []plan.Attempt{{Number: 1, Result: "tapped [11]", Changed: true}}}
	dec, err = planner.Plan(context.Background(), plan.Input{Goal: "open Clock", Scene: csc, History: []plan.StepRecord{rec}})
	if err != nil {
		t.Fatal(err)
	}
	if dec.Finish == nil || !dec.Finish.Success {
		t.Fatalf("second decision %+v; want finish success", dec)
	}
}

func mustScene(t *testing.T, listing string) *scene.Scene {
	t.Helper()
	// Rebuild the scene of a listing: the planner needs a Scene whose
	// listing is this one; a fresh phone at the same screen gives it.
	p, err := sim.New(sim.Config{Locale: "en", Clock: clock.NewFake(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p.Device().LaunchApp(ctx, "Clock")
	sc, err := p.Device().Scene(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Listing() != listing {
		t.Fatalf("the Clock screen differs between two fresh phones")
	}
	return sc
}

func TestReadRequestRefusesARequestWithoutAScreen(t *testing.T) {
	_, _, err := readRequest(ai.Request{Messages: []ai.Message{{Role: ai.RoleUser, Parts: []ai.Part{{Text: "Goal: x"}}}}})
	if err == nil {
		t.Fatal("a request without <screen> was read")
	}
	if _, err := parseListing("[1] Button \"x\"\n"); err == nil {
		t.Fatal("a listing without its header was read")
	}
}

// A press that "succeeded" but left its button there while the next
// target is missing did not take (a popup came at that moment): the
// decision-maker presses it again, once.
func TestDeciderPressesAgainAButtonThatDidNotTake(t *testing.T) {
	const detail = "Screen 1080x2400 · app com.taobao.taobao\n[12] RecyclerView id=detail scrollable\n[16] Button \"Add to cart\" id=add_cart clickable\n[17] Button \"Buy now\" id=buy_now clickable\n"
	const ad = detail + "[22] Button \"Claim now\" id=poplayer_action clickable\n[23] ImageView \"Close\" id=poplayer_close clickable\n"
	d := newDecider([]tasks.Step{{Intent: "buy it", Tool: tasks.ToolTap, Target: "Buy now"}, {Intent: "pay", Tool: tasks.ToolTap, Target: "Pay now"}})
	moves := []struct {
		listing string
		want    int
	}{{detail, 17}, {ad, 23}, {detail, 17}}
	var prev *outcome
	for i, s := range moves {
		m := d.next(s.listing, prev)
		if m.Finish || int(args(t, m)["element"].(float64)) != s.want {
			t.Fatalf("move %d: %s %s; want a tap on [%d]", i, m.Call.Name, m.Call.Args, s.want)
		}
		prev = &outcome{OK: true}
	}
	// The same screen again and again: pressed again a bounded number of
	// times (a dropped tap; going back once), then it goes on to look for
	// Pay now (scrolling).
	m := d.next(detail, prev)
	for i := 0; i < 2*maxRepeats+2 && m.Call.Name == tools.Tap; i++ {
		m = d.next(detail, prev)
	}
	if m.Call.Name != tools.Scroll {
		t.Fatalf("after going back once: %s %s; want a scroll looking for Pay now", m.Call.Name, m.Call.Args)
	}
}

// A tap whose only "effect" was a popup coming over the same screen did
// not take: the popup is closed and the tap made again, before the script
// goes on (here: before it claims success).
func TestDeciderRetapsWhenOnlyAPopupCame(t *testing.T) {
	const page = "Screen 1080x2400 · app com.android.settings\n[8] LinearLayout \"Wi‑Fi\" clickable\n[10] Switch id=switch_widget unchecked\n"
	const popup = page + "[25] TextView \"Allow Settings to send you notifications?\" id=permission_message\n" +
		"[26] Button \"Allow\" id=permission_allow_button clickable\n[27] Button \"Don’t allow\" id=permission_deny_button clickable\n"
	d := newDecider([]tasks.Step{{Intent: "switch Wi-Fi on", Tool: tasks.ToolTap, Target: "Wi‑Fi"},
		{Tool: tasks.ToolFinishTask, Args: map[string]any{"success": true, "reason": "on"}}})
	for i, s := range []struct {
		listing string
		want    int
	}{{page, 8}, {popup, 27}, {page, 8}} {
		m := d.next(s.listing, &outcome{OK: true})
		if m.Finish || int(args(t, m)["element"].(float64)) != s.want {
			t.Fatalf("move %d: %+v; want a tap on [%d]", i, m, s.want)
		}
	}
	const on = "Screen 1080x2400 · app com.android.settings\n[8] LinearLayout \"Wi‑Fi\" clickable\n[10] Switch id=switch_widget checked\n"
	if m := d.next(on, &outcome{OK: true}); !m.Finish || !m.Success {
		t.Fatalf("after the switch shows checked: %+v; want finish success", m)
	}
}

// When the tap's own effect came with the popup (a line that is not the
// popup's: the app's dialog, a toast), the tap took: no second tap.
func TestDeciderDoesNotRetapWhenTheTapTookUnderAPopup(t *testing.T) {
	const page = "Screen 1080x2400 · app com.taobao.taobao\n[16] Button \"Add to cart\" id=add_cart clickable\n"
	const after = page + "[20] TextView \"Added to cart\" id=toast\n[22] Button \"Claim now\" id=poplayer_action clickable\n[23] ImageView \"Close\" id=poplayer_close clickable\n"
	d := newDecider([]tasks.Step{{Intent: "add it", Tool: tasks.ToolTap, Target: "Add to cart"},
		{Tool: tasks.ToolFinishTask, Args: map[string]any{"success": true, "reason": "added"}}})
	d.next(page, nil)
	m := d.next(after, &outcome{OK: true})
	if !m.Finish || !m.Success {
		t.Fatalf("after the tap took (toast) under an ad: %+v; want the script to go on (finish)", m)
	}
}

// A finish that claims what the screen shows (Step.Shows) is made once its
// element is listed: on a screen without it the decider looks for it
// first (it scrolls; a model does not claim what it has not seen).
func TestDeciderFinishesOnlyOnceItSeesWhatItClaims(t *testing.T) {
	_, settings := phoneAt(t, sim.Start{}, launch("Settings"))
	claim := tasks.Step{Tool: tasks.ToolFinishTask, Args: map[string]any{"success": true, "reason": "Wi-Fi is on"}}
	claim.Shows = "Wi‑Fi"
	d := newDecider([]tasks.Step{claim})
	if m := d.next(settings, nil); m.Finish || m.Call.Name != tools.Scroll {
		t.Fatalf("on Settings' main page, a finish resting on the Wi‑Fi row: %s %s (finish %v); want a scroll to find it", m.Call.Name, m.Call.Args, m.Finish)
	}
	claim.Shows = "Network & internet"
	d = newDecider([]tasks.Step{claim})
	if m := d.next(settings, nil); !m.Finish || !m.Success || m.Shows != "Network & internet" {
		t.Fatalf("with the row listed: %+v; want the script's finish, naming what it rests on", m)
	}
}

// A launch the tool answers "app not found" is not made again: the answer
// settles it, and the decider finishes with the script's own finish.
func TestDeciderFinishesOnAToolAnswerThatSettlesIt(t *testing.T) {
	_, home := phoneAt(t, sim.Start{}, nil)
	script := []tasks.Step{
		{Intent: "open WeChat", Tool: tasks.ToolLaunchApp, Args: map[string]any{"app": "WeChat"}},
		{Tool: tasks.ToolFinishTask, Args: map[string]any{"success": false, "reason": "WeChat is not installed"}},
	}
	d := newDecider(script)
	if m := d.next(home, nil); m.Call.Name != tools.LaunchApp {
		t.Fatalf("first move %s; want the launch", m.Call.Name)
	}
	m := d.next(home, &outcome{OK: false, Text: `launch_app "WeChat": sim launch "WeChat": app not found; no installed app has a name close to "WeChat"`})
	if !m.Finish || m.Success || m.Reason != "WeChat is not installed" {
		t.Fatalf("after the launch answered app not found: %s %s %+v; want the script's give-up", m.Call.Name, m.Call.Args, m)
	}
	// Another failure is still tried again (a tap the phone refused).
	d = newDecider(script)
	d.next(home, nil)
	if m := d.next(home, &outcome{OK: false, Text: "launch_app: the device did not answer"}); m.Finish {
		t.Fatalf("after a failure that says nothing of the app: %+v; want the launch again", m)
	}
}
