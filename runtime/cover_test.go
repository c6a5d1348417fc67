package runtime

import (
	"strings"
	"testing"

	"phonepilot/scene"
)

// An approved tap does not run when something came over its element while
// the person decided (issue 12, hostile: an ad layer over Taobao's cashier
// took the approved Pay now tap, the task completed and no order existed);
// a toast that came up beside it does not stop it.
func TestApprovedTapNotRunUnderWhatCameOverIt(t *testing.T) {
	pay := scene.Element{Index: 1, Parent: 0, Class: "android.widget.Button", Text: "Pay now", ResourceID: "com.taobao.taobao:id/pay", Clickable: true,
		Bounds: scene.Bounds{Left: 40, Top: 2100, Right: 1040, Bottom: 2220}}
	root := scene.Element{Index: 0, Parent: -1, Class: "android.widget.FrameLayout", Bounds: scene.Bounds{Right: 1080, Bottom: 2400}}
	was := &scene.Scene{Width: 1080, Height: 2400, Package: "com.taobao.taobao", Elements: []scene.Element{root, pay}}
	ad := scene.Element{Index: 2, Parent: 0, Class: "android.widget.FrameLayout", ResourceID: "com.taobao.taobao:id/poplayer_ad", Bounds: scene.Bounds{Right: 1080, Bottom: 2400}}
	covered := &scene.Scene{Width: 1080, Height: 2400, Package: "com.taobao.taobao", Elements: []scene.Element{root, pay, ad}}
	if why := sameTarget(&pay, was, covered); !strings.Contains(why, "covered by FrameLayout poplayer_ad") {
		t.Errorf("an ad layer over Pay now: %q, want the tap not run", why)
	}
	toast := scene.Element{Index: 2, Parent: 0, Class: "android.widget.TextView", ResourceID: "android:id/message", Text: "Added to cart",
		Bounds: scene.Bounds{Left: 357, Top: 2008, Right: 723, Bottom: 2118}}
	if why := sameTarget(&pay, was, &scene.Scene{Width: 1080, Height: 2400, Package: "com.taobao.taobao", Elements: []scene.Element{root, pay, toast}}); why != "" {
		t.Errorf("a toast near Pay now: %q, want the tap to run", why)
	}
	if why := sameTarget(&pay, was, was); why != "" {
		t.Errorf("the same screen: %q", why)
	}
}
