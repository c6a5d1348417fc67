package scene

import (
	"encoding/json"
	"fmt"
)

// The JSON form of a Scene (docs/scene-json.md) is compact and stable:
// bounds as [left,top,right,bottom], flags as a short list of names, empty
// fields omitted, an element's package omitted when it is the Scene's.

type sceneJSON struct {
	Width    int           `json:"width"`
	Height   int           `json:"height"`
	Rotation int           `json:"rotation,omitempty"`
	Package  string        `json:"package,omitempty"`
	Activity string        `json:"activity,omitempty"`
	Secure   bool          `json:"secure,omitempty"`
	Elements []elementJSON `json:"elements"`
}

type elementJSON struct {
	Index   int      `json:"index"`
	Parent  int      `json:"parent"`
	Depth   int      `json:"depth,omitempty"`
	Window  int      `json:"window,omitempty"`
	Class   string   `json:"class,omitempty"`
	Text    string   `json:"text,omitempty"`
	Desc    string   `json:"desc,omitempty"`
	Hint    string   `json:"hint,omitempty"`
	ID      string   `json:"id,omitempty"`
	Package *string  `json:"package,omitempty"`
	Bounds  [4]int   `json:"bounds"`
	Flags   []string `json:"flags,omitempty"`
}

// Flag names in the JSON form, in the order they are written. "disabled"
// is written when Enabled is false: enabled is the common case.
var flagNames = [...]string{"clickable", "long-clickable", "editable", "scrollable",
	"checkable", "checked", "selected", "focusable", "focused", "disabled", "password"}

func flagPtrs(e *Element) [len(flagNames)]*bool {
	return [...]*bool{&e.Clickable, &e.LongClickable, &e.Editable, &e.Scrollable,
		&e.Checkable, &e.Checked, &e.Selected, &e.Focusable, &e.Focused, nil, &e.Password}
}

// MarshalJSON writes the documented JSON form. It has a value receiver so
// that a Scene held by value in another struct is written the same way.
func (s Scene) MarshalJSON() ([]byte, error) {
	out := sceneJSON{Width: s.Width, Height: s.Height, Rotation: s.Rotation,
		Package: s.Package, Activity: s.Activity, Secure: s.Secure, Elements: make([]elementJSON, len(s.Elements))}
	for i := range s.Elements {
		e := &s.Elements[i]
		j := elementJSON{Index: e.Index, Parent: e.Parent, Depth: e.Depth, Window: e.Window,
			Class: e.Class, Text: e.Text, Desc: e.Desc, Hint: e.Hint, ID: e.ResourceID,
			Bounds: [4]int{e.Bounds.Left, e.Bounds.Top, e.Bounds.Right, e.Bounds.Bottom}}
		if e.Package != s.Package {
			j.Package = &e.Package
		}
		for k, p := range flagPtrs(e) {
			if p == nil && !e.Enabled || p != nil && *p {
				j.Flags = append(j.Flags, flagNames[k])
			}
		}
		out.Elements[i] = j
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the documented JSON form and checks that the element
// list is a consistent tree (index = position, parents before children).
func (s *Scene) UnmarshalJSON(data []byte) error {
	var in sceneJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("scene json: %w", err)
	}
	if len(in.Elements) > MaxElements {
		return fmt.Errorf("scene json: %w: %d elements, more than %d", ErrTooBig, len(in.Elements), MaxElements)
	}
	depth := make([]int, len(in.Elements))
	sc := Scene{Width: in.Width, Height: in.Height, Rotation: in.Rotation,
		Package: in.Package, Activity: in.Activity, Secure: in.Secure, Elements: make([]Element, len(in.Elements))}
	for i, j := range in.Elements {
		if j.Index != i {
			return fmt.Errorf("scene json: elements[%d] has index %d", i, j.Index)
		}
		if j.Parent < -1 || j.Parent >= i {
			return fmt.Errorf("scene json: elements[%d] has parent %d (want -1 or an earlier index)", i, j.Parent)
		}
		if j.Parent >= 0 {
			if depth[i] = depth[j.Parent] + 1; depth[i] >= MaxDepth {
				return fmt.Errorf("scene json: %w: elements[%d] nests deeper than %d", ErrTooBig, i, MaxDepth)
			}
		}
		e := Element{Index: j.Index, Parent: j.Parent, Depth: j.Depth, Window: j.Window,
			Class: j.Class, Text: j.Text, Desc: j.Desc, Hint: j.Hint, ResourceID: j.ID, Package: sc.Package,
			Bounds: Bounds{j.Bounds[0], j.Bounds[1], j.Bounds[2], j.Bounds[3]}, Enabled: true}
		if j.Package != nil {
			e.Package = *j.Package
		}
		ptrs := flagPtrs(&e)
	flags:
		for _, f := range j.Flags {
			for k, name := range flagNames {
				if f != name {
					continue
				}
				if ptrs[k] == nil {
					e.Enabled = false
				} else {
					*ptrs[k] = true
				}
				continue flags
			}
			return fmt.Errorf("scene json: elements[%d]: unknown flag %q", i, f)
		}
		sc.Elements[i] = e
	}
	*s = sc
	return nil
}
