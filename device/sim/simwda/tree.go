package simwda

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"phonepilot/device/sim"
)

// boolStr is how WDA's JSON source writes a flag.
func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// jsonNode is one element of `/source?format=json`, with WDA's keys.
func jsonNode(e *sim.XCElement, excluded map[string]bool) map[string]any {
	rect := map[string]any{"x": e.Rect.Min.X, "y": e.Rect.Min.Y, "width": e.Rect.Dx(), "height": e.Rect.Dy()}
	m := map[string]any{
		"type":             e.Type,
		"rawIdentifier":    nullable(e.Name, e.Name != "" && e.Name != e.Label),
		"name":             nullable(e.Name, e.Name != ""),
		"label":            nullable(e.Label, e.Label != ""),
		"value":            nullable(e.Value, e.HasValue),
		"rect":             rect,
		"frame":            fmt.Sprintf("{{%d, %d}, {%d, %d}}", e.Rect.Min.X, e.Rect.Min.Y, e.Rect.Dx(), e.Rect.Dy()),
		"isEnabled":        boolStr(e.Enabled),
		"isVisible":        boolStr(e.Visible),
		"isAccessible":     boolStr(e.Accessible),
		"isFocused":        boolStr(e.Focused),
		"isSelected":       boolStr(e.Selected),
		"traits":           traits(e),
		"placeholderValue": nullable(e.Placeholder, e.Placeholder != ""),
	}
	for k := range excluded {
		delete(m, k)
	}
	if len(e.Children) > 0 {
		kids := make([]any, 0, len(e.Children))
		for _, k := range e.Children {
			kids = append(kids, jsonNode(k, excluded))
		}
		m["children"] = kids
	}
	return m
}

func nullable(s string, ok bool) any {
	if !ok {
		return nil
	}
	return s
}

// traits is UIAccessibilityTraits as WDA spells them.
func traits(e *sim.XCElement) string {
	switch e.Type {
	case "Button", "Cell", "Icon":
		return "Button"
	case "StaticText":
		return "StaticText"
	case "Image":
		return "Image"
	case "SearchField":
		return "SearchField"
	case "Switch":
		return "Button, ToggleButton"
	}
	return ""
}

// xmlSource is `/source?format=xml`: tags XCUIElementType…, attributes as
// WDA writes them.
func xmlSource(root *sim.XCElement, excluded map[string]bool) string {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	index := 0
	writeXML(&b, root, 0, &index, excluded)
	return b.String()
}

func writeXML(b *bytes.Buffer, e *sim.XCElement, depth int, index *int, excluded map[string]bool) {
	tag := "XCUIElementType" + e.Type
	b.WriteString(strings.Repeat("  ", depth))
	b.WriteString("<" + tag)
	attr := func(k, v string, ok bool) {
		if !ok || excluded[k] {
			return
		}
		b.WriteString(" " + k + `="`)
		_ = xml.EscapeText(b, []byte(v))
		b.WriteString(`"`)
	}
	tf := func(v bool) string { return strconv.FormatBool(v) }
	attr("type", tag, true)
	attr("value", e.Value, e.HasValue)
	attr("name", e.Name, e.Name != "")
	attr("label", e.Label, e.Label != "")
	attr("enabled", tf(e.Enabled), true)
	attr("visible", tf(e.Visible), true)
	attr("accessible", tf(e.Accessible), true)
	attr("x", strconv.Itoa(e.Rect.Min.X), true)
	attr("y", strconv.Itoa(e.Rect.Min.Y), true)
	attr("width", strconv.Itoa(e.Rect.Dx()), true)
	attr("height", strconv.Itoa(e.Rect.Dy()), true)
	attr("index", strconv.Itoa(*index), true)
	attr("placeholderValue", e.Placeholder, e.Placeholder != "")
	attr("traits", traits(e), traits(e) != "")
	*index++
	if len(e.Children) == 0 {
		b.WriteString("/>\n")
		return
	}
	b.WriteString(">\n")
	for _, k := range e.Children {
		writeXML(b, k, depth+1, index, excluded)
	}
	b.WriteString(strings.Repeat("  ", depth) + "</" + tag + ">\n")
}

// elemRef is what a found element's uuid stands for: the tree is read anew
// for every command, and the element is found again by what it is.
type elemRef struct {
	typ, name, label string
	x, y, w, h       int
}

func refOf(e *sim.XCElement) elemRef {
	return elemRef{e.Type, e.Name, e.Label, e.Rect.Min.X, e.Rect.Min.Y, e.Rect.Dx(), e.Rect.Dy()}
}

func walk(e *sim.XCElement, f func(*sim.XCElement)) {
	f(e)
	for _, k := range e.Children {
		walk(k, f)
	}
}

// query finds the elements a W3C locator names. Strategies: accessibility
// id / id / name (the name), class name (XCUIElementType…), predicate
// string (comparisons of type, name, label, value joined by AND), and the
// simplest xpath (//Type or //Type[@attr="v"]).
func query(root *sim.XCElement, using, value string) ([]*sim.XCElement, error) {
	var match func(*sim.XCElement) bool
	switch using {
	case "accessibility id", "id", "name":
		match = func(e *sim.XCElement) bool { return e.Name == value }
	case "class name":
		match = func(e *sim.XCElement) bool { return "XCUIElementType"+e.Type == value }
	case "predicate string":
		m, err := predicate(value)
		if err != nil {
			return nil, err
		}
		match = m
	case "xpath":
		m, err := simpleXPath(value)
		if err != nil {
			return nil, err
		}
		match = m
	default:
		return nil, errf(http.StatusBadRequest, "invalid selector", "Locator strategy %q is not supported by this simulator (accessibility id, id, name, class name, predicate string, simple xpath)", using)
	}
	var out []*sim.XCElement
	walk(root, func(e *sim.XCElement) {
		if match(e) {
			out = append(out, e)
		}
	})
	return out, nil
}

func attrOf(e *sim.XCElement, name string) (string, bool) {
	switch name {
	case "type", "elementType":
		return "XCUIElementType" + e.Type, true
	case "name", "identifier":
		return e.Name, true
	case "label":
		return e.Label, true
	case "value":
		return e.Value, e.HasValue
	case "placeholderValue":
		return e.Placeholder, e.Placeholder != ""
	case "enabled":
		return strconv.FormatBool(e.Enabled), true
	case "visible":
		return strconv.FormatBool(e.Visible), true
	case "accessible":
		return strconv.FormatBool(e.Accessible), true
	case "selected":
		return strconv.FormatBool(e.Selected), true
	case "focused", "hasFocus":
		return strconv.FormatBool(e.Focused), true
	case "rect":
		return fmt.Sprintf(`{"x":%d,"y":%d,"width":%d,"height":%d}`, e.Rect.Min.X, e.Rect.Min.Y, e.Rect.Dx(), e.Rect.Dy()), true
	}
	return "", false
}

var predTerm = regexp.MustCompile(`^\s*(\w+)\s*(==|!=|CONTAINS|BEGINSWITH|ENDSWITH)(\[c\])?\s*(?:'([^']*)'|"([^"]*)")\s*$`)

func predicate(src string) (func(*sim.XCElement) bool, error) {
	var terms []func(*sim.XCElement) bool
	for _, part := range regexp.MustCompile(`(?i)\s+AND\s+`).Split(src, -1) {
		m := predTerm.FindStringSubmatch(part)
		if m == nil {
			return nil, errf(http.StatusBadRequest, "invalid selector", "Unsupported predicate %q: use attribute == 'value' terms joined by AND", part)
		}
		attr, op, fold, want := m[1], m[2], m[3] != "", m[4]+m[5]
		terms = append(terms, func(e *sim.XCElement) bool {
			got, _ := attrOf(e, attr)
			if fold {
				got, want = strings.ToLower(got), strings.ToLower(want)
			}
			switch op {
			case "==":
				return got == want
			case "!=":
				return got != want
			case "CONTAINS":
				return strings.Contains(got, want)
			case "BEGINSWITH":
				return strings.HasPrefix(got, want)
			}
			return strings.HasSuffix(got, want)
		})
	}
	return func(e *sim.XCElement) bool {
		for _, t := range terms {
			if !t(e) {
				return false
			}
		}
		return true
	}, nil
}

var xpathRE = regexp.MustCompile(`^//(\*|XCUIElementType\w+)(?:\[@(\w+)=(?:'([^']*)'|"([^"]*)")\])?$`)

func simpleXPath(src string) (func(*sim.XCElement) bool, error) {
	m := xpathRE.FindStringSubmatch(strings.TrimSpace(src))
	if m == nil {
		return nil, errf(http.StatusBadRequest, "invalid selector", "This simulator understands only //Type and //Type[@attr=\"value\"] xpaths, not %q", src)
	}
	typ, attr, want := m[1], m[2], m[3]+m[4]
	return func(e *sim.XCElement) bool {
		if typ != "*" && "XCUIElementType"+e.Type != typ {
			return false
		}
		if attr == "" {
			return true
		}
		got, _ := attrOf(e, attr)
		return got == want
	}, nil
}

const w3cElementKey = "element-6066-11e4-a52e-4f735466cecf"

func (s *Server) remember(e *sim.XCElement) map[string]any {
	id := newID()
	s.mu.Lock()
	s.elements[id] = refOf(e)
	s.mu.Unlock()
	return map[string]any{"ELEMENT": id, w3cElementKey: id}
}

func (s *Server) find(ctx context.Context, args map[string]any) ([]*sim.XCElement, error) {
	using, _ := args["using"].(string)
	value, _ := args["value"].(string)
	if using == "" {
		return nil, invalidArg("\"using\" is required")
	}
	root, err := s.p.IOSSource(ctx)
	if err != nil {
		return nil, err
	}
	return query(root, using, value)
}

func (s *Server) findElement(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	found, err := s.find(ctx, args)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, errf(http.StatusNotFound, "no such element", "unable to find an element using '%v', value '%v'", args["using"], args["value"])
	}
	return s.remember(found[0]), nil
}

func (s *Server) findElements(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	found, err := s.find(ctx, args)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(found))
	for _, e := range found {
		out = append(out, s.remember(e))
	}
	return out, nil
}

// element finds a remembered element in a fresh tree.
func (s *Server) element(ctx context.Context, args map[string]any) (*sim.XCElement, error) {
	id, _ := args[":uuid"].(string)
	s.mu.Lock()
	ref, ok := s.elements[id]
	s.mu.Unlock()
	if !ok {
		return nil, errf(http.StatusNotFound, "no such element", "The element identified by %q is either not present or it has expired from the internal cache", id)
	}
	root, err := s.p.IOSSource(ctx)
	if err != nil {
		return nil, err
	}
	var same, moved *sim.XCElement
	walk(root, func(e *sim.XCElement) {
		r := refOf(e)
		if r.typ != ref.typ || r.name != ref.name || r.label != ref.label {
			return
		}
		if r == ref && same == nil {
			same = e
		}
		if moved == nil {
			moved = e
		}
	})
	if same != nil {
		return same, nil
	}
	if moved != nil {
		return moved, nil
	}
	return nil, errf(http.StatusNotFound, "stale element reference", "The previously found element %q is not present in the current view anymore", id)
}

func (s *Server) elemRect(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	e, err := s.element(ctx, args)
	if err != nil {
		return nil, err
	}
	return map[string]any{"x": e.Rect.Min.X, "y": e.Rect.Min.Y, "width": e.Rect.Dx(), "height": e.Rect.Dy()}, nil
}

func (s *Server) elemText(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	e, err := s.element(ctx, args)
	if err != nil {
		return nil, err
	}
	if e.HasValue && e.Value != "" {
		return e.Value, nil
	}
	return e.Label, nil
}

func (s *Server) elemName(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	e, err := s.element(ctx, args)
	if err != nil {
		return nil, err
	}
	return "XCUIElementType" + e.Type, nil
}

func (s *Server) elemBool(f func(*sim.XCElement) bool) handler {
	return func(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
		e, err := s.element(ctx, args)
		if err != nil {
			return nil, err
		}
		return f(e), nil
	}
}

func (s *Server) elemAttr(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	e, err := s.element(ctx, args)
	if err != nil {
		return nil, err
	}
	v, ok := attrOf(e, args[":name"].(string))
	if !ok {
		return nil, nil
	}
	return v, nil
}

func center(e *sim.XCElement) (float64, float64) {
	return float64(e.Rect.Min.X) + float64(e.Rect.Dx())/2, float64(e.Rect.Min.Y) + float64(e.Rect.Dy())/2
}

func (s *Server) elemClick(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	e, err := s.element(ctx, args)
	if err != nil {
		return nil, err
	}
	x, y := center(e)
	return nil, s.p.IOSTap(ctx, x, y)
}

// elemValue types into the element: it is tapped for focus first, as
// XCUITest's typeText does.
func (s *Server) elemValue(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	e, err := s.element(ctx, args)
	if err != nil {
		return nil, err
	}
	text, err := joinValue(firstOf(args, "value", "text"))
	if err != nil {
		return nil, err
	}
	if !e.Focused {
		x, y := center(e)
		if err := s.p.IOSTap(ctx, x, y); err != nil {
			return nil, err
		}
	}
	return nil, s.p.IOSKeys(ctx, text)
}

func firstOf(args map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := args[k]; ok {
			return v
		}
	}
	return nil
}

func (s *Server) elemClear(ctx context.Context, _ string, args map[string]any, _ *http.Request) (any, error) {
	e, err := s.element(ctx, args)
	if err != nil {
		return nil, err
	}
	if !e.Focused {
		x, y := center(e)
		if err := s.p.IOSTap(ctx, x, y); err != nil {
			return nil, err
		}
	}
	n := len([]rune(e.Value))
	if n == 0 {
		return nil, nil
	}
	return nil, s.p.IOSKeys(ctx, strings.Repeat("\b", n))
}
