package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/fake"
	"phonepilot/internal/clock"
	"phonepilot/scene"
	"phonepilot/tools"
)

// screen is a 1080x2400 search page with the awkward cases: a list, a node
// with no area, a row half off the bottom, and one entirely off screen.
func screen() *scene.Scene {
	return &scene.Scene{
		Width: 1080, Height: 2400, Package: "com.taobao.taobao",
		Elements: []scene.Element{
			{Index: 0, Parent: -1, Class: "android.widget.FrameLayout", Bounds: box(0, 0, 1080, 2400)},
			{Index: 1, Class: "android.widget.EditText", Text: "Search products", ResourceID: "com.taobao.taobao:id/search_edit", Bounds: box(100, 200, 900, 300), Editable: true, Clickable: true},
			{Index: 2, Class: "android.widget.Button", Text: "Search", Bounds: box(900, 200, 1080, 300), Clickable: true},
			{Index: 3, Class: "androidx.recyclerview.widget.RecyclerView", Bounds: box(0, 400, 1080, 2000), Scrollable: true},
			{Index: 4, Class: "android.view.View", Text: "ghost", Bounds: box(500, 500, 500, 500)},
			{Index: 5, Class: "android.widget.TextView", Text: "Mac mini M4 16GB", Bounds: box(0, 2300, 1080, 2600), Clickable: true},
			{Index: 6, Class: "android.widget.ImageView", ResourceID: "com.taobao.taobao:id/cart", Bounds: box(0, 2450, 100, 2550)},
			{Index: 7, Class: "android.widget.ImageView", ResourceID: "com.taobao.taobao:id/cart_icon", Bounds: box(980, 2200, 1080, 2300), Clickable: true},
		},
	}
}

func call(name, args string) tools.Call { return tools.Call{Name: name, Args: json.RawMessage(args)} }

func TestRunActsOnTheDevice(t *testing.T) {
	cases := []struct {
		name      string
		call      tools.Call
		want      []fake.Call
		text      string
		element   int // -1: no element in the result
		typedText string
	}{
		{"tap at the centre", call("tap", `{"element":2}`),
			[]fake.Call{{Method: fake.MethodTap, X: 990, Y: 250}}, `tapped [2] Button "Search"`, 2, ""},
		{"tap the visible part of a row half off screen", call("tap", `{"element":5}`),
			[]fake.Call{{Method: fake.MethodTap, X: 540, Y: 2350}}, `tapped [5] TextView "Mac mini M4 16GB"`, 5, ""},
		{"tap an unlabelled element names its id", call("tap", `{"element":7}`),
			[]fake.Call{{Method: fake.MethodTap, X: 1030, Y: 2250}}, `tapped [7] ImageView id=cart_icon`, 7, ""},
		{"long press holds 800ms", call("long_press", `{"element":1}`),
			[]fake.Call{{Method: fake.MethodLongPress, X: 500, Y: 250, Duration: 800 * time.Millisecond}}, `long-pressed [1] EditText "Search products"`, 1, ""},
		{"type into an element: focus, replace, enter", call("type_text", `{"text":"Mac mini","element":1,"submit":true}`),
			[]fake.Call{{Method: fake.MethodTap, X: 500, Y: 250}, {Method: fake.MethodTypeText, Text: "Mac mini"}, {Method: fake.MethodKey, Key: device.KeyEnter}},
			`typed 8 characters into [1] and pressed enter`, 1, "Mac mini"},
		{"type Chinese into the focused field", call("type_text", `{"text":"打开淘宝🍎"}`),
			[]fake.Call{{Method: fake.MethodTypeText, Text: "打开淘宝🍎"}}, `typed 5 characters into the focused field`, -1, "打开淘宝🍎"},
		{"scroll down in a list: finger moves up 80% of it, a tenth from its ends (UiScrollable)", call("scroll", `{"direction":"down","element":3}`),
			[]fake.Call{{Method: fake.MethodSwipe, X: 540, Y: 1840, X2: 540, Y2: 560, Duration: 300 * time.Millisecond}}, `scrolled down in [3]`, 3, ""},
		{"scroll up in a list: finger moves down", call("scroll", `{"direction":"up","element":3}`),
			[]fake.Call{{Method: fake.MethodSwipe, X: 540, Y: 560, X2: 540, Y2: 1840, Duration: 300 * time.Millisecond}}, `scrolled up in [3]`, 3, ""},
		{"scroll right: finger moves left", call("scroll", `{"direction":"right","element":3}`),
			[]fake.Call{{Method: fake.MethodSwipe, X: 972, Y: 1200, X2: 108, Y2: 1200, Duration: 300 * time.Millisecond}}, `scrolled right in [3]`, 3, ""},
		{"scroll left: finger moves right", call("scroll", `{"direction":"left","element":3}`),
			[]fake.Call{{Method: fake.MethodSwipe, X: 108, Y: 1200, X2: 972, Y2: 1200, Duration: 300 * time.Millisecond}}, `scrolled left in [3]`, 3, ""},
		{"scroll the screen's middle: half of it, a quarter from its edges", call("scroll", `{"direction":"down"}`),
			[]fake.Call{{Method: fake.MethodSwipe, X: 540, Y: 1800, X2: 540, Y2: 600, Duration: 300 * time.Millisecond}}, `scrolled down`, -1, ""},
		{"press back", call("press_key", `{"key":"back"}`),
			[]fake.Call{{Method: fake.MethodKey, Key: device.KeyBack}}, `pressed back`, -1, ""},
		{"press app_switch", call("press_key", `{"key":"app_switch"}`),
			[]fake.Call{{Method: fake.MethodKey, Key: device.KeyAppSwitch}}, `pressed app_switch`, -1, ""},
		{"launch by name", call("launch_app", `{"app":"Taobao"}`),
			[]fake.Call{{Method: fake.MethodLaunchApp, App: "Taobao"}}, `launched Taobao`, -1, ""},
		{"launch by Chinese name", call("launch_app", `{"app":"设置"}`),
			[]fake.Call{{Method: fake.MethodLaunchApp, App: "设置"}}, `launched 设置`, -1, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dev := fake.New()
			res, err := tools.Run(context.Background(), dev, screen(), tc.call, tools.RunOptions{Clock: clock.NewFake(time.Time{})})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := dev.Calls(); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("device calls:\n got %v\nwant %v", got, tc.want)
			}
			if res.Text != tc.text {
				t.Errorf("text = %q, want %q", res.Text, tc.text)
			}
			switch {
			case tc.element < 0 && res.Element != nil:
				t.Errorf("result names element %d, want none", res.Element.Index)
			case tc.element >= 0 && (res.Element == nil || res.Element.Index != tc.element):
				t.Errorf("result element = %v, want [%d]", res.Element, tc.element)
			}
			if res.Finish != nil {
				t.Error("only finish_task may set Finish")
			}
			if got := dev.TypedText(); got != tc.typedText {
				t.Errorf("field holds %q, want %q", got, tc.typedText)
			}
		})
	}
}

func TestTypeTextReplacesContent(t *testing.T) {
	dev := fake.New()
	ctx := context.Background()
	for _, text := range []string{"mac", "Mac mini"} {
		if _, err := tools.Run(ctx, dev, screen(), tools.NewCall(tools.TypeText, map[string]any{"text": text, "element": 1}), tools.RunOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := dev.TypedText(); got != "Mac mini" {
		t.Fatalf("field = %q, want the second text only (replace, not append)", got)
	}
}

func TestBadCallsNeverTouchTheDevice(t *testing.T) {
	cases := []struct {
		call tools.Call
		want string
	}{
		{call("tap", `{"element":57}`), "no element 57; valid 0..7"},
		{call("long_press", `{"element":8}`), "no element 8; valid 0..7"},
		{call("type_text", `{"text":"x","element":99}`), "no element 99; valid 0..7"},
		{call("scroll", `{"direction":"down","element":1000}`), "no element 1000; valid 0..7"},
		{call("tap", `{"element":4}`), "element 4 has no area on the screen (bounds [500,500][500,500]); choose another element"},
		{call("tap", `{"element":6}`), "element 6 has no area on the screen (bounds [0,2450][100,2550]); choose another element"},
		{call("type_text", `{"text":"x","element":4,"submit":true}`), "element 4 has no area"},
		{call("tap", `{"element":"2"}`), `tap: argument "element": must be an integer`},
		{call("click", `{"element":2}`), `unknown tool "click"`},
		{call("type_text", `{"element":1}`), `type_text: argument "text": required`},
		{call("tap", `{"element":1e20}`), `tap: argument "element": must be an element index`},
	}
	for _, tc := range cases {
		dev := fake.New()
		_, err := tools.Run(context.Background(), dev, screen(), tc.call, tools.RunOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.call, err, tc.want)
		}
		var ee *tools.ElementError
		var ae *tools.ArgError
		if !errors.As(err, &ee) && !errors.As(err, &ae) {
			t.Errorf("%s: %T is neither *ElementError nor *ArgError", tc.call, err)
		}
		if calls := dev.Calls(); len(calls) != 0 {
			t.Errorf("%s: the device was touched: %v", tc.call, calls)
		}
	}
}

func TestElementErrorData(t *testing.T) {
	_, err := tools.Run(context.Background(), fake.New(), screen(), call("tap", `{"element":57}`), tools.RunOptions{})
	var ee *tools.ElementError
	if !errors.As(err, &ee) || ee.Index != 57 || ee.Count != 8 || ee.NoArea {
		t.Fatalf("got %#v", err)
	}
	_, err = tools.Run(context.Background(), fake.New(), &scene.Scene{}, call("tap", `{"element":0}`), tools.RunOptions{})
	if err == nil || err.Error() != "no element 0; the screen has no elements" {
		t.Fatalf("empty scene: got %v", err)
	}
	_, err = tools.Run(context.Background(), fake.New(), nil, call("tap", `{"element":0}`), tools.RunOptions{})
	if !errors.As(err, &ee) {
		t.Fatalf("nil scene: got %v", err)
	}
}

func TestDeviceErrorsAreWrapped(t *testing.T) {
	dev := fake.New()
	dev.FailAlways(fake.MethodLaunchApp, device.ErrAppNotFound)
	_, err := tools.Run(context.Background(), dev, screen(), call("launch_app", `{"app":"Nope"}`), tools.RunOptions{})
	if !errors.Is(err, device.ErrAppNotFound) || !strings.Contains(err.Error(), `launch_app "Nope"`) {
		t.Fatalf("got %v", err)
	}

	// A failed focus tap stops type_text before any text is sent.
	dev = fake.New()
	dev.FailNext(fake.MethodTap, device.ErrDisconnected)
	_, err = tools.Run(context.Background(), dev, screen(), call("type_text", `{"text":"x","element":1,"submit":true}`), tools.RunOptions{})
	if !errors.Is(err, device.ErrDisconnected) {
		t.Fatalf("got %v", err)
	}
	if got := dev.Actions(); len(got) != 1 {
		t.Fatalf("after the failed focus tap nothing else may run: %v", got)
	}

	// Typing with no focused field: the driver's sentinel reaches the caller.
	dev = fake.New()
	dev.FailNext(fake.MethodTypeText, device.ErrNoFocus)
	_, err = tools.Run(context.Background(), dev, screen(), call("type_text", `{"text":"x","submit":true}`), tools.RunOptions{})
	if !errors.Is(err, device.ErrNoFocus) {
		t.Fatalf("got %v", err)
	}
	if got := dev.Actions(); len(got) != 1 {
		t.Fatalf("enter must not be pressed after a failed type: %v", got)
	}
}

func TestWaitUsesTheClock(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	dev := fake.New()
	res, err := tools.Run(context.Background(), dev, screen(), call("wait", `{"seconds":1.5}`), tools.RunOptions{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "waited 1.5s" {
		t.Errorf("text = %q", res.Text)
	}
	if got := clk.Sleeps(); !reflect.DeepEqual(got, []time.Duration{1500 * time.Millisecond}) {
		t.Errorf("slept %v, want [1.5s]", got)
	}
	if len(dev.Calls()) != 0 {
		t.Errorf("wait touched the device: %v", dev.Calls())
	}
}

func TestWaitHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	clk := clock.NewFake(time.Time{})
	_, err := tools.Run(ctx, fake.New(), screen(), call("wait", `{"seconds":10}`), tools.RunOptions{Clock: clk})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if clk.Slept() != 0 {
		t.Fatalf("a cancelled wait advanced the clock by %v", clk.Slept())
	}
}

// blockingClock sleeps until ctx ends: a wait of 10 s must still end as soon
// as the task is cancelled.
type blockingClock struct{ clock.Real }

func (blockingClock) Sleep(ctx context.Context, d time.Duration) error {
	<-ctx.Done()
	return ctx.Err()
}

func TestWaitCancelledWhileWaiting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := tools.Run(ctx, fake.New(), screen(), call("wait", `{"seconds":10}`), tools.RunOptions{Clock: blockingClock{}})
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("wait did not return after cancellation")
	}
}

func TestCancelledContextActsOnNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dev := fake.New()
	_, err := tools.Run(ctx, dev, screen(), call("tap", `{"element":2}`), tools.RunOptions{})
	if !errors.Is(err, context.Canceled) || len(dev.Calls()) != 0 {
		t.Fatalf("got %v, calls %v", err, dev.Calls())
	}
}

func TestFinishTask(t *testing.T) {
	for _, tc := range []struct {
		args string
		want tools.Finish
		text string
	}{
		{`{"success":true,"reason":"search results for Mac mini are shown"}`, tools.Finish{true, "search results for Mac mini are shown"}, "task succeeded: search results for Mac mini are shown"},
		{`{"success":false,"reason":"Taobao is not installed"}`, tools.Finish{false, "Taobao is not installed"}, "task failed: Taobao is not installed"},
	} {
		dev := fake.New()
		res, err := tools.Run(context.Background(), dev, screen(), call("finish_task", tc.args), tools.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Finish == nil || *res.Finish != tc.want {
			t.Errorf("Finish = %v, want %v", res.Finish, tc.want)
		}
		if res.Text != tc.text {
			t.Errorf("text = %q, want %q", res.Text, tc.text)
		}
		if len(dev.Calls()) != 0 {
			t.Errorf("finish_task touched the device: %v", dev.Calls())
		}
	}
}

func TestScrollWithoutScreenSizeUsesElementsExtent(t *testing.T) {
	sc := screen()
	sc.Width, sc.Height = 0, 0
	sc.Elements = sc.Elements[1:4] // no full-screen root: extent 1080x2000
	dev := fake.New()
	if _, err := tools.Run(context.Background(), dev, sc, call("scroll", `{"direction":"down"}`), tools.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []fake.Call{{Method: fake.MethodSwipe, X: 540, Y: 1500, X2: 540, Y2: 500, Duration: tools.ScrollDuration}}
	if got := dev.Calls(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	_, err := tools.Run(context.Background(), fake.New(), &scene.Scene{}, call("scroll", `{"direction":"down"}`), tools.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "screen size is unknown") {
		t.Fatalf("no size, no elements: got %v", err)
	}
}

func TestElementArgAndWithElement(t *testing.T) {
	for args, want := range map[string]int{`{"element":4}`: 4, `{"element":4.0,"x":1}`: 4, `{"element":0}`: 0} {
		if got, ok := tools.ElementArg(call("tap", args)); !ok || got != want {
			t.Errorf("ElementArg(%s) = %d, %v", args, got, ok)
		}
	}
	for _, args := range []string{``, `{}`, `{"element":"4"}`, `{"element":4.5}`, `[4]`, `garbage`} {
		if _, ok := tools.ElementArg(call("tap", args)); ok {
			t.Errorf("ElementArg(%s) reported an element", args)
		}
	}

	orig := call("type_text", `{"text":"Mac mini","submit":true}`)
	got := tools.WithElement(orig, 3)
	if string(orig.Args) != `{"text":"Mac mini","submit":true}` {
		t.Fatalf("WithElement modified its input: %s", orig.Args)
	}
	if got.Name != "type_text" || tools.Validate(got) != nil {
		t.Fatalf("WithElement produced %s (%v)", got, tools.Validate(got))
	}
	var m map[string]any
	_ = json.Unmarshal(got.Args, &m)
	if !reflect.DeepEqual(m, map[string]any{"text": "Mac mini", "submit": true, "element": 3.0}) {
		t.Fatalf("WithElement args = %s", got.Args)
	}
	if idx, _ := tools.ElementArg(tools.WithElement(call("tap", `{"element":1}`), 9)); idx != 9 {
		t.Fatalf("WithElement did not replace an existing element: %d", idx)
	}
	if got := tools.WithElement(call("tap", ``), 2); string(got.Args) != `{"element":2}` {
		t.Fatalf("from empty args: %s", got.Args)
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		e    scene.Element
		want string
	}{
		{scene.Element{Index: 4, Class: "android.widget.Button", Text: "Search"}, `[4] Button "Search"`},
		{scene.Element{Index: 9, Class: "android.widget.ImageView", Desc: "购物车"}, `[9] ImageView "购物车"`},
		{scene.Element{Index: 2, Class: "android.view.View", Text: "line one\n  line two"}, `[2] View "line one line two"`},
		{scene.Element{Index: 3, Class: "android.widget.TextView", Text: strings.Repeat("很长", 30)}, `[3] TextView "` + strings.Repeat("很长", 19) + `很…"`},
		{scene.Element{Index: 1}, `[1]`},
	} {
		if got := tools.Describe(tc.e); got != tc.want {
			t.Errorf("Describe = %s, want %s", got, tc.want)
		}
	}
}

func box(l, t, r, b int) scene.Bounds { return scene.Bounds{Left: l, Top: t, Right: r, Bottom: b} }
