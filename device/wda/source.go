package wda

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"phonepilot/scene"
)

// Node is one element of WDA's accessibility tree, in points, read from
// either form of /source.
type Node struct {
	Type        string // short: "Button"
	Name        string
	Label       string
	Value       string
	HasValue    bool
	Placeholder string
	X, Y, W, H  float64
	Enabled     bool
	Visible     bool
	Focused     bool
	Selected    bool
	Children    []*Node
}

// Limits on a tree: scene's, for every source of a screen.
const (
	maxDepth = scene.MaxDepth
	maxNodes = scene.MaxElements
)

// ErrTreeTooBig: the tree is deeper or larger than phonepilot reads.
var ErrTreeTooBig = scene.ErrTooBig

// jsonNode is `/source?format=json`'s shape. Flags are "1"/"0" strings in
// WDA's JSON (booleans accepted too).
type jsonNode struct {
	Type        string          `json:"type"`
	Name        *string         `json:"name"`
	Label       *string         `json:"label"`
	Value       json.RawMessage `json:"value"`
	Placeholder *string         `json:"placeholderValue"`
	Rect        struct {
		X, Y, Width, Height float64
	} `json:"rect"`
	IsEnabled  flag        `json:"isEnabled"`
	IsVisible  flag        `json:"isVisible"`
	IsFocused  flag        `json:"isFocused"`
	IsSelected flag        `json:"isSelected"`
	Children   []*jsonNode `json:"children"`
}

// flag reads WDA's "1"/"0" (or true/false).
type flag struct{ set, v bool }

func (f *flag) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	f.set = s != "null"
	f.v = s == "1" || s == "true"
	return nil
}

func (f flag) or(def bool) bool {
	if !f.set {
		return def
	}
	return f.v
}

// ParseJSON reads the value of `/source?format=json`.
func ParseJSON(raw []byte) (*Node, error) {
	var j jsonNode
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("wda source: not WDA's JSON tree: %v", err)
	}
	count := 0
	return fromJSON(&j, 0, &count)
}

func fromJSON(j *jsonNode, depth int, count *int) (*Node, error) {
	*count++
	if depth > maxDepth || *count > maxNodes {
		return nil, fmt.Errorf("wda source: %w (over %d levels or %d elements)", ErrTreeTooBig, maxDepth, maxNodes)
	}
	n := &Node{Type: strings.TrimPrefix(j.Type, "XCUIElementType"), X: j.Rect.X, Y: j.Rect.Y, W: j.Rect.Width, H: j.Rect.Height,
		Enabled: j.IsEnabled.or(true), Visible: j.IsVisible.or(true), Focused: j.IsFocused.or(false), Selected: j.IsSelected.or(false)}
	if j.Name != nil {
		n.Name = *j.Name
	}
	if j.Label != nil {
		n.Label = *j.Label
	}
	if j.Placeholder != nil {
		n.Placeholder = *j.Placeholder
	}
	if len(j.Value) > 0 && string(j.Value) != "null" {
		var s string
		if err := json.Unmarshal(j.Value, &s); err != nil {
			s = strings.Trim(string(j.Value), `"`) // a number or a bool
		}
		n.Value, n.HasValue = s, true
	}
	for _, k := range j.Children {
		c, err := fromJSON(k, depth+1, count)
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, c)
	}
	return n, nil
}

// ParseXML reads `/source?format=xml` (what Appium asks for).
func ParseXML(raw []byte) (*Node, error) {
	dec := xml.NewDecoder(bytes.NewReader(raw))
	var stack []*Node
	var root *Node
	count := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("wda source: not WDA's XML tree: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			count++
			if len(stack) >= maxDepth || count > maxNodes {
				return nil, fmt.Errorf("wda source: %w (over %d levels or %d elements)", ErrTreeTooBig, maxDepth, maxNodes)
			}
			n := &Node{Type: strings.TrimPrefix(t.Name.Local, "XCUIElementType"), Enabled: true, Visible: true}
			for _, a := range t.Attr {
				switch a.Name.Local {
				case "name":
					n.Name = a.Value
				case "label":
					n.Label = a.Value
				case "value":
					n.Value, n.HasValue = a.Value, true
				case "placeholderValue":
					n.Placeholder = a.Value
				case "x":
					n.X = atof(a.Value)
				case "y":
					n.Y = atof(a.Value)
				case "width":
					n.W = atof(a.Value)
				case "height":
					n.H = atof(a.Value)
				case "enabled":
					n.Enabled = a.Value == "true"
				case "visible":
					n.Visible = a.Value == "true"
				case "focused":
					n.Focused = a.Value == "true"
				case "selected":
					n.Selected = a.Value == "true"
				}
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.Children = append(p.Children, n)
			} else if root == nil {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("wda source: the XML holds no element")
	}
	return root, nil
}

func atof(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

// actionable lists the types a person can act on: WDA's tree has no
// clickable flag, so it is derived from the type.
var actionable = map[string]bool{
	"Button": true, "Cell": true, "Link": true, "Switch": true, "Toggle": true, "TextField": true,
	"SecureTextField": true, "SearchField": true, "TextView": true, "Icon": true, "Key": true,
	"Tab": true, "MenuItem": true, "SegmentedControl": true, "Slider": true, "Stepper": true,
	"PickerWheel": true, "Image": false,
}

var editable = map[string]bool{"TextField": true, "SecureTextField": true, "SearchField": true, "TextView": true}

var scrollable = map[string]bool{"ScrollView": true, "Table": true, "CollectionView": true, "WebView": true}

// ToScene flattens the tree into a Scene in pixels: x scale. Elements off
// the screen (WDA lists every cell of a list, Android only the visible
// ones) and invisible ones are left out with their subtrees. bundle is the
// app in front.
//
// The Application's children are its windows (the app's own first, then
// what it shows above it: a HUD's window, the keyboard, the status bar):
// each is a window of the Scene, as uiautomator lists an Android screen's
// windows; the Application and its first window are window 0.
func ToScene(root *Node, scale float64, bundle string) *scene.Scene {
	if scale <= 0 {
		scale = 1
	}
	px := func(v float64) int { return int(math.Round(v * scale)) }
	sc := &scene.Scene{Width: px(root.W), Height: px(root.H), Package: bundle}
	screen := scene.Bounds{Right: sc.Width, Bottom: sc.Height}
	var add func(n *Node, parent, depth, window int)
	add = func(n *Node, parent, depth, window int) {
		b := scene.Bounds{Left: px(n.X), Top: px(n.Y), Right: px(n.X + n.W), Bottom: px(n.Y + n.H)}
		if !n.Visible || !overlaps(b, screen) {
			return
		}
		b = clip(b, screen)
		e := element(n, b)
		e.Index, e.Parent, e.Depth, e.Window, e.Package = len(sc.Elements), parent, depth, window, bundle
		sc.Elements = append(sc.Elements, e)
		for _, k := range n.Children {
			add(k, e.Index, depth+1, window)
		}
	}
	b := scene.Bounds{Left: px(root.X), Top: px(root.Y), Right: px(root.X + root.W), Bottom: px(root.Y + root.H)}
	app := element(root, clip(b, screen))
	app.Parent, app.Package = -1, bundle
	sc.Elements = append(sc.Elements, app)
	window := 0
	for i, w := range root.Children {
		if i == 0 {
			add(w, app.Index, 1, 0)
			continue
		}
		n := len(sc.Elements)
		if add(w, -1, 0, window+1); len(sc.Elements) > n {
			window++
		}
	}
	return sc
}

func element(n *Node, b scene.Bounds) scene.Element {
	e := scene.Element{
		Class: "XCUIElementType" + n.Type, Bounds: b, Enabled: n.Enabled, Focused: n.Focused, Selected: n.Selected,
		Clickable:     actionable[n.Type] && n.Enabled,
		LongClickable: actionable[n.Type] && n.Enabled,
		Editable:      editable[n.Type] && n.Enabled,
		Password:      n.Type == "SecureTextField",
		Scrollable:    scrollable[n.Type],
		Checkable:     n.Type == "Switch" || n.Type == "Toggle",
		Focusable:     editable[n.Type],
		Hint:          n.Placeholder,
	}
	if e.Checkable {
		e.Checked = n.Value == "1" || strings.EqualFold(n.Value, "true")
	}
	if n.Name != "" && n.Name != n.Label {
		e.ResourceID = n.Name
	}
	switch {
	case e.Editable:
		// A field's text is its value; empty, it shows its placeholder (the
		// Scene's convention: Text == Hint means empty).
		e.Text, e.Desc = n.Value, n.Label
		if !n.HasValue || n.Value == "" || n.Value == n.Placeholder {
			e.Text = n.Placeholder
		}
	case n.Type == "StaticText":
		e.Text = n.Label
		if e.Text == "" {
			e.Text = n.Value
		}
	default:
		e.Text = n.Label
	}
	return e
}

func overlaps(a, b scene.Bounds) bool {
	return a.Left < b.Right && b.Left < a.Right && a.Top < b.Bottom && b.Top < a.Bottom
}

func clip(a, b scene.Bounds) scene.Bounds {
	return scene.Bounds{Left: max(a.Left, b.Left), Top: max(a.Top, b.Top), Right: min(a.Right, b.Right), Bottom: min(a.Bottom, b.Bottom)}
}
