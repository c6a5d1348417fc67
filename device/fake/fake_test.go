package fake

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/scene"
)

func named(pkg string) *scene.Scene { return &scene.Scene{Width: 100, Height: 200, Package: pkg} }

func TestScenesAdvanceOnlyOnSuccessfulActions(t *testing.T) {
	ctx := context.Background()
	d := New(named("a"), named("b"))
	pkg := func() string {
		t.Helper()
		sc, err := d.Scene(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return sc.Package
	}
	if got := pkg(); got != "a" {
		t.Fatalf("first scene = %q, want a", got)
	}
	if got := pkg(); got != "a" {
		t.Fatalf("observing again changed the scene to %q", got)
	}
	d.FailNext(MethodTap, device.ErrDisconnected)
	if err := d.Tap(ctx, 1, 2); !errors.Is(err, device.ErrDisconnected) {
		t.Fatalf("injected error: got %v", err)
	}
	if got := pkg(); got != "a" {
		t.Fatalf("a failed tap changed the scene to %q", got)
	}
	if err := d.Tap(ctx, 1, 2); err != nil {
		t.Fatalf("FailNext should fail once only: %v", err)
	}
	if got := pkg(); got != "b" {
		t.Fatalf("after a tap: scene %q, want b", got)
	}
	if err := d.Key(ctx, device.KeyBack); err != nil {
		t.Fatal(err)
	}
	if got := pkg(); got != "b" {
		t.Fatalf("past the script: scene %q, want to stay on b", got)
	}
}

func TestSceneIsACopy(t *testing.T) {
	orig := &scene.Scene{Elements: []scene.Element{{Index: 0, Text: "x"}}}
	d := New(orig)
	sc, _ := d.Scene(context.Background())
	sc.Elements[0].Text = "changed"
	if orig.Elements[0].Text != "x" {
		t.Fatal("a caller modifying the returned Scene changed the script")
	}
}

func TestNoScene(t *testing.T) {
	if _, err := new(Device).Scene(context.Background()); !errors.Is(err, ErrNoScene) {
		t.Fatalf("got %v, want ErrNoScene", err)
	}
}

func TestCallsRecordedInOrderWithArguments(t *testing.T) {
	ctx := context.Background()
	d := new(Device)
	d.FailAlways(MethodLaunchApp, device.ErrAppNotFound)
	_ = d.Tap(ctx, 10, 20)
	_ = d.LongPress(ctx, 3, 4, time.Second)
	_ = d.Swipe(ctx, 1, 2, 3, 4, 300*time.Millisecond)
	_ = d.TypeText(ctx, "淘宝")
	_ = d.Key(ctx, device.KeyEnter)
	_ = d.LaunchApp(ctx, "Taobao")
	want := []Call{
		{Method: MethodTap, X: 10, Y: 20},
		{Method: MethodLongPress, X: 3, Y: 4, Duration: time.Second},
		{Method: MethodSwipe, X: 1, Y: 2, X2: 3, Y2: 4, Duration: 300 * time.Millisecond},
		{Method: MethodTypeText, Text: "淘宝"},
		{Method: MethodKey, Key: device.KeyEnter},
		{Method: MethodLaunchApp, App: "Taobao", Err: device.ErrAppNotFound},
	}
	if got := d.Calls(); !reflect.DeepEqual(got, want) {
		t.Fatalf("calls:\n got %v\nwant %v", got, want)
	}
	d.FailAlways(MethodLaunchApp, nil)
	if err := d.LaunchApp(ctx, "Taobao"); err != nil {
		t.Fatalf("FailAlways(nil) should clear: %v", err)
	}
}

func TestFieldModel(t *testing.T) {
	ctx := context.Background()
	d := new(Device)
	_ = d.TypeText(ctx, "hello")
	_ = d.TypeText(ctx, "mac 迷你") // replaces, does not append
	_ = d.Key(ctx, device.KeyDelete)
	_ = d.Key(ctx, device.KeyEnter)
	if got := d.TypedText(); got != "mac 迷" {
		t.Fatalf("field = %q, want %q", got, "mac 迷")
	}
	if got := d.Submitted(); !reflect.DeepEqual(got, []string{"mac 迷"}) {
		t.Fatalf("submitted = %q", got)
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := New(named("a"), named("b"))
	if err := d.TypeText(ctx, "x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if d.TypedText() != "" {
		t.Fatal("a cancelled TypeText changed the field")
	}
	sc, _ := d.Scene(context.Background())
	if sc.Package != "a" {
		t.Fatal("a cancelled action advanced the script")
	}
}

func TestNewFuncSeesHistory(t *testing.T) {
	ctx := context.Background()
	d := NewFunc(func(history []Call) (*scene.Scene, error) {
		for _, c := range history {
			if c.Method == MethodLaunchApp && c.Err == nil {
				return named(c.App), nil
			}
		}
		return named("launcher"), nil
	})
	sc, _ := d.Scene(ctx)
	if sc.Package != "launcher" {
		t.Fatalf("got %q", sc.Package)
	}
	_ = d.LaunchApp(ctx, "com.taobao.taobao")
	sc, _ = d.Scene(ctx)
	if sc.Package != "com.taobao.taobao" {
		t.Fatalf("got %q", sc.Package)
	}
}
