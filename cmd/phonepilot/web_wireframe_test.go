package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"phonepilot/scene"
)

// clockDialogScene is the simulated Clock app with its "Set alarm time"
// dialog open over a list of three alarms: a modal in a real Scene, with
// page labels under it. It returns the Scene's JSON, the index of the
// dialog's card and the indices of the card and everything inside it (not
// the scrim it sits on: the page shows, dimmed, through a scrim).
func clockDialogScene(t *testing.T) (js []byte, card int, dialog []int) {
	t.Helper()
	ctx := t.Context()
	od, err := openDevice(ctx, "sim", deviceOptions{SimLocale: "en"})
	if err != nil {
		t.Fatal(err)
	}
	dev := od.Device
	if err := dev.LaunchApp(ctx, "Clock"); err != nil {
		t.Fatal(err)
	}
	// tap taps the element that matches, and returns the Scene after.
	tap := func(what string, match func(scene.Element) bool) *scene.Scene {
		t.Helper()
		sc, err := dev.Scene(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range sc.Elements {
			if match(e) {
				x, y := e.Bounds.Center()
				if err := dev.Tap(ctx, x, y); err != nil {
					t.Fatal(err)
				}
				if sc, err = dev.Scene(ctx); err != nil {
					t.Fatal(err)
				}
				return sc
			}
		}
		t.Fatalf("no %s on the screen of %s", what, sc.Package)
		return nil
	}
	byID := func(id string) func(scene.Element) bool {
		return func(e scene.Element) bool { return strings.HasSuffix(e.ResourceID, ":id/"+id) }
	}
	addAlarm := func(e scene.Element) bool { return e.Desc == "Add alarm" }
	// A third alarm, so that a row of the list lies under the dialog.
	tap("the add button", addAlarm)
	if err := dev.TypeText(ctx, "7"); err != nil {
		t.Fatal(err)
	}
	tap("the minute field", byID("material_minute_text_input"))
	if err := dev.TypeText(ctx, "15"); err != nil {
		t.Fatal(err)
	}
	tap("the OK button", byID("material_timepicker_ok_button"))
	sc := tap("the add button", addAlarm)
	card = -1
	for _, e := range sc.Elements {
		if byID("material_timepicker_container")(e) {
			card = e.Index
		}
	}
	if card < 0 {
		t.Fatal("tapping \"Add alarm\" opened no dialog")
	}
	in := map[int]bool{card: true}
	for _, e := range sc.Elements {
		if in[e.Parent] {
			in[e.Index] = true
		}
	}
	for i := range in {
		dialog = append(dialog, i)
	}
	js, err = json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	return js, card, dialog
}

// The wireframe of a Scene with a modal, drawn by the page in Chromium:
// every page label under the dialog's card is hidden by it (what is on top
// at any point of it belongs to the card), the page around the card is under
// the dim scrim, labels are at least 10 px tall and dark on light; and a
// task's final_scene is drawn as the last card, titled "final screen",
// even when steps arrive after it.
func TestWireframeModalAndLabelsInChromium(t *testing.T) {
	t.Parallel()
	chromium := chromiumPath(t)
	fixture, card, dialog := clockDialogScene(t)
	a := startServedAPI(t, openTestSQLite(t), "")

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(t.Context(),
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 860))
	defer cancelAlloc()
	ctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	if err := chromedp.Do(ctx, chromedp.Navigate(a.url+"/")); err != nil {
		t.Fatalf("browser: %v", err)
	}
	boot, err := chromedp.Run(ctx, chromedp.Poll[string](`document.body.dataset.boot || ""`,
		chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatalf("the page never started: %v", err)
	}
	if boot != "ready" {
		msg, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("detail-empty")))
		t.Fatalf("the page did not start (%s): %s", boot, msg)
	}
	dialogJS, _ := json.Marshal(dialog)
	type probe struct {
		Label    string `json:"label"`
		Hit      int    `json:"hit"`
		HitClass string `json:"hitClass"`
	}
	type drawn struct {
		Covered  []probe   `json:"covered"`
		Around   probe     `json:"around"`
		Heights  []float64 `json:"heights"`
		Fill     string    `json:"fill"`
		CardFill string    `json:"cardFill"`
	}
	expr := fmt.Sprintf(`(() => {
  const S = %s, dialog = new Set(%s), card = %d;
  const svg = wireframe(S, null);
  svg.id = "fixture";
  svg.style.position = "fixed"; svg.style.left = "0px"; svg.style.top = "0px"; svg.style.zIndex = "1000";
  document.body.append(svg);
  const cardEl = svg.querySelector('rect[data-index="' + card + '"]');
  const cb = cardEl.getBoundingClientRect();
  const at = (x, y, label) => {
    const hit = document.elementFromPoint(x, y);
    const i = hit && hit.dataset && hit.dataset.index !== undefined ? Number(hit.dataset.index) : -1;
    return { label, hit: i, hitClass: hit ? (hit.getAttribute("class") || hit.tagName) : "" };
  };
  const covered = [];
  for (const t of svg.querySelectorAll("text")) {
    if (dialog.has(Number(t.dataset.index))) continue;
    const b = t.getBoundingClientRect();
    const x = b.left + b.width / 2, y = b.top + b.height / 2;
    if (!(x > cb.left && x < cb.right && y > cb.top && y < cb.bottom)) continue;
    // Along the label: between glyphs as well as on them.
    for (let k = 0; k < 9; k++) {
      const px = b.left + b.width * (k + 0.5) / 9;
      if (px > cb.left && px < cb.right) covered.push(at(px, y, t.textContent));
    }
  }
  return {
    covered,
    around: at(cb.left + cb.width / 2, cb.top - 6, "above the card"),
    heights: [...svg.querySelectorAll("text")].map((t) => t.getBoundingClientRect().height),
    fill: getComputedStyle(svg.querySelector("text")).fill,
    cardFill: getComputedStyle(cardEl).fill + " " + getComputedStyle(cardEl).fillOpacity,
  };
})()`, fixture, dialogJS, card)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[drawn](expr))
	if err != nil {
		t.Fatalf("browser: draw the fixture: %v", err)
	}
	inDialog := map[int]bool{}
	for _, i := range dialog {
		inDialog[i] = true
	}
	t.Logf("card fill %s; %d points of page labels under the card; %d labels, text fill %s", got.CardFill, len(got.Covered), len(got.Heights), got.Fill)
	if len(got.Covered) == 0 {
		t.Fatal("fixture: no page label lies under the dialog's card; the test would prove nothing")
	}
	for _, p := range got.Covered {
		if !inDialog[p.Hit] {
			t.Errorf("page label %q shows through the dialog: on top there is element %d (%s), not the dialog's card", p.Label, p.Hit, p.HitClass)
			break
		}
	}
	if !strings.Contains(got.Around.HitClass, "scrim") {
		t.Errorf("just above the card the page is not under the scrim: on top is %d (%q)", got.Around.Hit, got.Around.HitClass)
	}
	if len(got.Heights) < 5 {
		t.Errorf("only %d labels drawn", len(got.Heights))
	}
	for _, h := range got.Heights {
		if h < 10 {
			t.Errorf("a label is %.1f px tall on the page, want at least 10 px", h)
			break
		}
	}
	if c := contrastOnWhite(t, got.Fill); c < 4.5 {
		t.Errorf("label colour %s has contrast %.1f on white, want at least 4.5 (WCAG AA)", got.Fill, c)
	}

	// The final screen: drawn last, stays last when a step comes after it,
	// goes when the task has none.
	order, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(`(() => {
  const S = %s;
  document.getElementById("task").hidden = false;
  document.getElementById("steps").replaceChildren();
  addStep({ number: 1, intent: "open the dialog", call: { name: "tap", args: { element: 3 } }, attempts: [], status: V.step_statuses[0], scene: S });
  showFinal({ final_scene: S });
  addStep({ number: 2, intent: "late step", call: { name: "tap", args: {} }, attempts: [], status: V.step_statuses[0], scene: S });
  const ids = [...document.getElementById("steps").children].map((li) =>
    li.id + "|" + li.querySelector(".title").textContent + "|" + li.querySelectorAll("svg.wireframe rect").length);
  showFinal({});
  ids.push("after:" + (document.getElementById("final-screen") ? "still there" : "gone"));
  return ids;
})()`, fixture)))
	if err != nil {
		t.Fatalf("browser: final screen: %v", err)
	}
	t.Logf("cards: %v", order)
	if len(order) != 4 || !strings.HasPrefix(order[2], "final-screen|final screen|") || order[3] != "after:gone" {
		t.Fatalf("cards %v, want step 1, step 2, then the final screen; gone when the task has none", order)
	}
	if n, _ := strconv.Atoi(order[2][strings.LastIndex(order[2], "|")+1:]); n < 10 {
		t.Errorf("the final screen's wireframe has %d boxes", n)
	}
}

// contrastOnWhite is the WCAG contrast ratio of a CSS rgb() colour on white.
func contrastOnWhite(t *testing.T, css string) float64 {
	t.Helper()
	m := regexp.MustCompile(`rgb\((\d+), (\d+), (\d+)\)`).FindStringSubmatch(css)
	if m == nil {
		t.Fatalf("colour %q is not rgb()", css)
	}
	lin := func(s string) float64 {
		v, _ := strconv.Atoi(s)
		c := float64(v) / 255
		if c <= 0.03928 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	l := 0.2126*lin(m[1]) + 0.7152*lin(m[2]) + 0.0722*lin(m[3])
	return 1.05 / (l + 0.05)
}
