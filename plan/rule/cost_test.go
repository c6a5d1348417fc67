package rule

import (
	"context"
	"fmt"
	"testing"

	"phonepilot/plan"
	"phonepilot/scene"
)

// deepScreen is a Taobao screen at the tree limits: chains of elements
// nested scene.MaxDepth-1 deep, side by side, n elements in all, each
// chain ending in a clickable row with text. A dump past the limits is
// refused when it is read (perception, scene), so this is the largest
// screen the planner is ever given.
func deepScreen(n int) *scene.Scene {
	sc := &scene.Scene{Width: 1080, Height: 2400, Package: "com.taobao.taobao"}
	root := scene.Element{Index: 0, Parent: -1, Class: "android.widget.FrameLayout", Bounds: scene.Bounds{Right: 1080, Bottom: 2400}, Enabled: true}
	sc.Elements = append(sc.Elements, root)
	for len(sc.Elements) < n {
		parent := 0
		for d := 1; d < scene.MaxDepth-1 && len(sc.Elements) < n; d++ {
			i := len(sc.Elements)
			el := scene.Element{Index: i, Parent: parent, Depth: d, Class: "android.widget.LinearLayout", Enabled: true,
				Bounds: scene.Bounds{Left: 0, Top: 100 + i%2000, Right: 1080, Bottom: 160 + i%2000}}
			if d == scene.MaxDepth-2 || len(sc.Elements) == n-1 {
				el.Class, el.Text, el.Clickable = "android.widget.TextView", fmt.Sprintf("row %d", i), true
			}
			sc.Elements = append(sc.Elements, el)
			parent = i
		}
	}
	return sc
}

// BenchmarkPlanOnTheLargestScreens measures one plan on screens at the
// depth limit as they grow to the element limit (issue 19: a dump nested
// 20k deep cost 14.6 s a plan, walking every element's ancestors). With
// the depth capped, the cost grows with the element count, not its square:
// compare ns/op across the sizes.
func BenchmarkPlanOnTheLargestScreens(b *testing.B) {
	for _, n := range []int{5000, 10000, 20000, scene.MaxElements} {
		sc := deepScreen(n)
		b.Run(fmt.Sprintf("elements=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := New().Plan(context.Background(), plan.Input{Goal: "open Taobao and search Mac mini", Scene: sc}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
