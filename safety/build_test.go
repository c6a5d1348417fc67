package safety_test

import (
	"phonepilot/scene"
	"phonepilot/tools"
)

// n is a node of a synthetic screen; build flattens a tree of them into a
// Scene the way perception.Parse does (document order, parents, depths).
type n struct {
	class, text, desc, id, pkg           string
	b                                    scene.Bounds
	click, longClick, checkable, checked bool
	editable, password, focused          bool
	kids                                 []n
}

const app = "com.example.app"

func build(pkg string, roots ...n) *scene.Scene {
	sc := &scene.Scene{Width: 1080, Height: 2400, Package: pkg}
	var add func(x n, parent, depth, window int)
	add = func(x n, parent, depth, window int) {
		if x.pkg == "" {
			x.pkg = pkg
		}
		if x.class == "" {
			x.class = "android.widget.FrameLayout"
		}
		if x.b == (scene.Bounds{}) {
			x.b = scene.Bounds{Left: 0, Top: 0, Right: 1080, Bottom: 2400}
		}
		e := scene.Element{Index: len(sc.Elements), Parent: parent, Depth: depth, Window: window, Class: x.class,
			Text: x.text, Desc: x.desc, ResourceID: x.id, Package: x.pkg, Bounds: x.b, Clickable: x.click,
			LongClickable: x.longClick, Checkable: x.checkable, Checked: x.checked, Editable: x.editable,
			Password: x.password, Focused: x.focused, Focusable: x.editable, Enabled: true}
		sc.Elements = append(sc.Elements, e)
		for _, k := range x.kids {
			add(k, e.Index, depth+1, window)
		}
	}
	for w, r := range roots {
		add(r, -1, 0, w)
	}
	return sc
}

// screen puts nodes in one full-screen window of pkg.
func screen(pkg string, kids ...n) *scene.Scene {
	return build(pkg, n{kids: kids})
}

func button(text string) n {
	return n{class: "android.widget.Button", text: text, click: true, b: box(1)}
}

func textView(text string) n { return n{class: "android.widget.TextView", text: text, b: box(1)} }

// box is the i-th 100-pixel-high strip of the screen.
func box(i int) scene.Bounds {
	return scene.Bounds{Left: 0, Top: i * 100, Right: 1080, Bottom: i*100 + 100}
}

// find returns the first element with that label (text or desc).
func find(sc *scene.Scene, label string) *scene.Element {
	for i := range sc.Elements {
		if sc.Elements[i].Label() == label {
			e := sc.Elements[i]
			return &e
		}
	}
	panic("no element " + label)
}

func tapOn(e *scene.Element) tools.Call {
	return tools.NewCall(tools.Tap, map[string]int{"element": e.Index})
}
