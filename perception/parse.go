// Package perception turns what a device reports about its screen (a
// uiautomator XML dump) into a scene.Scene, and types the dump's retryable
// errors. Waiting for the screen to settle is the Executor's
// (runtime/settle.go), which needs the step's expectation. It never sees
// pixels: screenshots live in perception/frame, which this package does not
// import.
package perception

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"phonepilot/scene"
)

// ErrIdleState is uiautomator's "ERROR: could not get idle state.": the
// screen kept animating for the whole idle wait. The dump can be retried.
var ErrIdleState = errors.New("uiautomator: could not get idle state (screen still animating)")

// ErrNullRoot is uiautomator's "ERROR: null root node returned by
// UiTestAutomationBridge.": no window was ready. The dump can be retried.
var ErrNullRoot = errors.New("uiautomator: null root node returned (no window ready)")

// ParseError reports input that is not a usable uiautomator dump, with the
// byte offset where the problem was found.
type ParseError struct {
	Offset int
	Msg    string
	Err    error // scene.ErrTooBig for a dump over the limits, else nil
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("uiautomator dump: byte %d: %s", e.Offset, e.Msg)
}

func (e *ParseError) Unwrap() error { return e.Err }

// MaxDumpBytes bounds a dump: a larger one is refused before it is read
// (the largest real dump among the fixtures is 170 KB).
const MaxDumpBytes = 8 << 20

// Options tell Parse what the caller already knows about the screen.
type Options struct {
	// Width and Height are the screen size in pixels. Zero takes the size
	// from the dump: the extent of the top-level windows.
	Width, Height int
}

// Retryable reports whether err is a transient device condition that a new
// dump may not have (ErrIdleState, ErrNullRoot).
func Retryable(err error) bool {
	return errors.Is(err, ErrIdleState) || errors.Is(err, ErrNullRoot)
}

// Parse reads the XML of `uiautomator dump` or uiautomator2's
// dumpWindowHierarchy into a Scene. It accepts the device's own error lines
// (returned as ErrIdleState / ErrNullRoot) and the trailing "UI hierchary
// dumped to: …" line; anything else that is not a dump is a *ParseError.
// It never panics.
func Parse(data []byte, opt Options) (*scene.Scene, error) {
	if opt.Width < 0 || opt.Height < 0 {
		return nil, fmt.Errorf("perception: negative screen size %dx%d", opt.Width, opt.Height)
	}
	if len(data) > MaxDumpBytes {
		return nil, &ParseError{Offset: MaxDumpBytes, Msg: fmt.Sprintf("%v: %d bytes, more than %d", scene.ErrTooBig, len(data), MaxDumpBytes), Err: scene.ErrTooBig}
	}
	if err := deviceError(data); err != nil {
		return nil, err
	}
	p := parser{data: data, intern: make(map[string]string, 64)}
	sc, err := p.parse()
	if err != nil {
		return nil, err
	}
	finish(sc, opt)
	return sc, nil
}

// deviceError recognises uiautomator's error lines when no hierarchy
// follows them.
func deviceError(data []byte) error {
	if bytes.Contains(data, []byte("<hierarchy")) {
		return nil
	}
	switch {
	case bytes.Contains(data, []byte("could not get idle state")):
		return ErrIdleState
	case bytes.Contains(data, []byte("null root node returned")):
		return ErrNullRoot
	}
	return nil
}

// parser is a hand-written scanner for the uiautomator dialect of XML: a
// prolog, one <hierarchy> root, nested <node> elements carrying everything in
// attributes, no character data. It is several times faster than
// encoding/xml and reports offsets precisely.
type parser struct {
	data   []byte
	pos    int
	intern map[string]string
	sc     *scene.Scene
	stack  []int // element index per open <node>, or skipped
	window int   // next window number
}

const skipped = -2 // stack marker: a node hidden from the user, and its subtree

func (p *parser) fail(off int, format string, args ...any) error {
	return &ParseError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) parse() (*scene.Scene, error) {
	d := p.data
	if len(bytes.TrimSpace(d)) == 0 {
		return nil, p.fail(0, "empty input: no XML")
	}
	if bytes.HasPrefix(d, []byte("\xef\xbb\xbf")) {
		p.pos = 3
	}
	// Prolog: XML declaration, comments, whitespace.
	for {
		p.skipSpace()
		if p.pos >= len(d) {
			return nil, p.fail(p.pos, "truncated: no <hierarchy> element")
		}
		if d[p.pos] != '<' {
			return nil, p.fail(p.pos, "not XML: expected '<', found %s", quoteByte(d, p.pos))
		}
		if bytes.HasPrefix(d[p.pos:], []byte("<?")) {
			end := bytes.Index(d[p.pos:], []byte("?>"))
			if end < 0 {
				return nil, p.fail(len(d), "truncated: unterminated <? declaration opened at byte %d", p.pos)
			}
			p.pos += end + 2
			continue
		}
		if bytes.HasPrefix(d[p.pos:], []byte("<!--")) {
			if err := p.skipComment(); err != nil {
				return nil, err
			}
			continue
		}
		break
	}
	start := p.pos
	p.pos++
	name := p.name()
	if string(name) != "hierarchy" {
		if len(name) == 0 {
			return nil, p.fail(start, "not XML: '<' not followed by an element name")
		}
		return nil, p.fail(start, "expected <hierarchy> root element, found <%s>", clipName(name))
	}
	p.sc = &scene.Scene{Elements: make([]scene.Element, 0, len(d)/300+8)}
	selfClosing, err := p.attrs(start, func(name, raw []byte, off int) error {
		if string(name) == "rotation" {
			r, err := strconv.Atoi(string(raw))
			if err != nil || r < 0 || r > 3 {
				return p.fail(off, "rotation %s is not 0..3", quoteInput(raw))
			}
			p.sc.Rotation = r
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if selfClosing {
		return nil, p.fail(start, "empty hierarchy: no <node> elements")
	}
	if err := p.body(start); err != nil {
		return nil, err
	}
	if len(p.sc.Elements) == 0 {
		return nil, p.fail(start, "empty hierarchy: no <node> elements")
	}
	if err := p.trailer(); err != nil {
		return nil, err
	}
	return p.sc, nil
}

// body reads the content of <hierarchy> up to and including </hierarchy>.
func (p *parser) body(rootStart int) error {
	d := p.data
	for {
		// Character data between tags must be whitespace in this dialect.
		for p.pos < len(d) && d[p.pos] != '<' {
			switch d[p.pos] {
			case ' ', '\t', '\n', '\r':
				p.pos++
			default:
				return p.fail(p.pos, "unexpected text %s between elements", quoteByte(d, p.pos))
			}
		}
		if p.pos >= len(d) {
			if n := len(p.stack); n > 0 {
				return p.fail(len(d), "truncated: input ends inside <node> (%d still open)", n)
			}
			return p.fail(len(d), "truncated: input ends before </hierarchy> (opened at byte %d)", rootStart)
		}
		start := p.pos
		p.pos++
		if p.pos >= len(d) {
			return p.fail(len(d), "truncated: input ends inside a tag")
		}
		switch d[p.pos] {
		case '/':
			p.pos++
			name := p.name()
			p.skipSpace()
			if p.pos >= len(d) {
				return p.fail(len(d), "truncated: input ends inside </%s>", clipName(name))
			}
			if d[p.pos] != '>' {
				return p.fail(p.pos, "expected '>' to close </%s>, found %s", clipName(name), quoteByte(d, p.pos))
			}
			p.pos++
			switch string(name) {
			case "node":
				if len(p.stack) == 0 {
					return p.fail(start, "</node> without a matching <node>")
				}
				p.stack = p.stack[:len(p.stack)-1]
			case "hierarchy":
				if len(p.stack) > 0 {
					return p.fail(start, "</hierarchy> while %d <node> elements are still open", len(p.stack))
				}
				return nil
			default:
				return p.fail(start, "unexpected closing tag </%s>", clipName(name))
			}
		case '!':
			if !bytes.HasPrefix(d[start:], []byte("<!--")) {
				return p.fail(start, "unexpected markup '<!' (only comments are allowed)")
			}
			p.pos = start
			if err := p.skipComment(); err != nil {
				return err
			}
		default:
			name := p.name()
			if string(name) != "node" {
				if len(name) == 0 {
					return p.fail(start, "'<' not followed by an element name")
				}
				return p.fail(start, "unexpected element <%s> (expected <node>)", clipName(name))
			}
			if err := p.node(start); err != nil {
				return err
			}
		}
	}
}

// node reads one <node …> start tag (its name already consumed).
func (p *parser) node(start int) error {
	if len(p.stack) >= scene.MaxDepth {
		return &ParseError{Offset: start, Msg: fmt.Sprintf("%v: <node> elements nest deeper than %d", scene.ErrTooBig, scene.MaxDepth), Err: scene.ErrTooBig}
	}
	if len(p.sc.Elements) >= scene.MaxElements {
		return &ParseError{Offset: start, Msg: fmt.Sprintf("%v: more than %d <node> elements", scene.ErrTooBig, scene.MaxElements), Err: scene.ErrTooBig}
	}
	parent := -1
	if n := len(p.stack); n > 0 {
		parent = p.stack[n-1]
	}
	if parent == skipped {
		selfClosing, err := p.attrs(start, func([]byte, []byte, int) error { return nil })
		if err == nil && !selfClosing {
			p.stack = append(p.stack, skipped)
		}
		return err
	}
	e := scene.Element{Index: len(p.sc.Elements), Parent: parent, Depth: len(p.stack), Enabled: true}
	if parent < 0 {
		e.Window = p.window
		p.window++
	} else {
		e.Window = p.sc.Elements[parent].Window
	}
	hidden := false
	selfClosing, err := p.attrs(start, func(name, raw []byte, off int) error {
		switch string(name) {
		case "text":
			s, err := p.text(raw, off)
			e.Text = s
			return err
		case "content-desc":
			s, err := p.text(raw, off)
			e.Desc = s
			return err
		case "hint":
			s, err := p.text(raw, off)
			e.Hint = s
			return err
		case "resource-id":
			s, err := p.interned(raw, off)
			e.ResourceID = s
			return err
		case "class":
			s, err := p.interned(raw, off)
			e.Class = s
			return err
		case "package":
			s, err := p.interned(raw, off)
			e.Package = s
			return err
		case "bounds":
			b, ok := parseBounds(raw)
			if !ok {
				return p.fail(off, "bounds %s is not [left,top][right,bottom]", quoteInput(raw))
			}
			e.Bounds = b
		case "clickable":
			e.Clickable = isTrue(raw)
		case "long-clickable":
			e.LongClickable = isTrue(raw)
		case "scrollable":
			e.Scrollable = isTrue(raw)
		case "checkable":
			e.Checkable = isTrue(raw)
		case "checked":
			e.Checked = isTrue(raw)
		case "selected":
			e.Selected = isTrue(raw)
		case "focusable":
			e.Focusable = isTrue(raw)
		case "focused":
			e.Focused = isTrue(raw)
		case "enabled":
			e.Enabled = isTrue(raw)
		case "password":
			e.Password = isTrue(raw)
		case "visible-to-user":
			hidden = string(raw) == "false"
		}
		return nil
	})
	if err != nil {
		return err
	}
	if hidden {
		if parent < 0 {
			p.window-- // a hidden root is not a window
		}
		if !selfClosing {
			p.stack = append(p.stack, skipped)
		}
		return nil
	}
	e.Editable = scene.EditableClass(e.Class)
	p.sc.Elements = append(p.sc.Elements, e)
	if !selfClosing {
		p.stack = append(p.stack, e.Index)
	}
	return nil
}

// attrs reads attributes up to '>' or '/>' and calls f with each raw value
// (entities not yet decoded) and the value's offset.
func (p *parser) attrs(start int, f func(name, raw []byte, off int) error) (selfClosing bool, err error) {
	d := p.data
	for {
		p.skipSpace()
		if p.pos >= len(d) {
			return false, p.fail(len(d), "truncated: input ends inside the tag opened at byte %d", start)
		}
		switch d[p.pos] {
		case '>':
			p.pos++
			return false, nil
		case '/':
			if p.pos+1 >= len(d) {
				return false, p.fail(len(d), "truncated: input ends inside the tag opened at byte %d", start)
			}
			if d[p.pos+1] != '>' {
				return false, p.fail(p.pos, "expected '/>', found %s", quoteByte(d, p.pos+1))
			}
			p.pos += 2
			return true, nil
		}
		nameOff := p.pos
		name := p.name()
		if len(name) == 0 {
			return false, p.fail(p.pos, "expected an attribute name, found %s", quoteByte(d, p.pos))
		}
		p.skipSpace()
		if p.pos >= len(d) {
			return false, p.fail(len(d), "truncated: input ends inside the tag opened at byte %d", start)
		}
		if d[p.pos] != '=' {
			return false, p.fail(p.pos, "expected '=' after attribute %s, found %s", clipName(name), quoteByte(d, p.pos))
		}
		p.pos++
		p.skipSpace()
		if p.pos >= len(d) {
			return false, p.fail(len(d), "truncated: input ends inside the tag opened at byte %d", start)
		}
		q := d[p.pos]
		if q != '"' && q != '\'' {
			return false, p.fail(p.pos, "attribute %s: value must be quoted, found %s", clipName(name), quoteByte(d, p.pos))
		}
		p.pos++
		valOff := p.pos
		end := bytes.IndexByte(d[p.pos:], q)
		if end < 0 {
			return false, p.fail(len(d), "truncated: attribute %s (byte %d) has no closing quote", clipName(name), nameOff)
		}
		raw := d[valOff : valOff+end]
		if i := bytes.IndexByte(raw, '<'); i >= 0 {
			return false, p.fail(valOff+i, "attribute %s: '<' inside a value", clipName(name))
		}
		p.pos = valOff + end + 1
		if err := f(name, raw, valOff); err != nil {
			return false, err
		}
	}
}

// name reads an XML name ([A-Za-z_:][A-Za-z0-9_:.-]*).
func (p *parser) name() []byte {
	d := p.data
	s := p.pos
	for p.pos < len(d) {
		c := d[p.pos]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':' ||
			p.pos > s && (c >= '0' && c <= '9' || c == '-' || c == '.') {
			p.pos++
			continue
		}
		break
	}
	return d[s:p.pos]
}

func (p *parser) skipComment() error {
	end := bytes.Index(p.data[p.pos+4:], []byte("-->"))
	if end < 0 {
		return p.fail(len(p.data), "truncated: unterminated comment opened at byte %d", p.pos)
	}
	p.pos += 4 + end + 3
	return nil
}

// trailer accepts whitespace and the "UI hierchary dumped to: …" line after
// </hierarchy>.
func (p *parser) trailer() error {
	d := p.data
	for {
		p.skipSpace()
		if p.pos >= len(d) {
			return nil
		}
		rest := d[p.pos:]
		if bytes.HasPrefix(rest, []byte("UI hierchary dumped to")) || bytes.HasPrefix(rest, []byte("UI hierarchy dumped to")) {
			nl := bytes.IndexByte(rest, '\n')
			if nl < 0 {
				return nil
			}
			p.pos += nl + 1
			continue
		}
		if bytes.HasPrefix(rest, []byte("<!--")) {
			if err := p.skipComment(); err != nil {
				return err
			}
			continue
		}
		return p.fail(p.pos, "unexpected content %s after </hierarchy>", quoteByte(d, p.pos))
	}
}

// interned returns the value as a string shared by every equal value in the
// dump (class names, packages and ids repeat hundreds of times).
func (p *parser) interned(raw []byte, off int) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	if s, ok := p.intern[string(raw)]; ok {
		return s, nil
	}
	s, err := p.text(raw, off)
	if err != nil {
		return "", err
	}
	p.intern[string(raw)] = s
	return s, nil
}

// text decodes an attribute value: entities, attribute-value normalisation
// of literal whitespace, checks for characters XML forbids, and uiautomator's
// literal "null" for a missing label.
func (p *parser) text(raw []byte, off int) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	clean := true
	for i := 0; i < len(raw); {
		c := raw[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '&' || c == '\t' || c == '\n' || c == '\r':
				clean = false
			case c < 0x20:
				return "", p.fail(off+i, "invalid character 0x%02x in attribute value", c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && n == 1 {
			return "", p.fail(off+i, "invalid UTF-8 byte 0x%02x", c)
		}
		if !validXMLRune(r) {
			return "", p.fail(off+i, "invalid character U+%04X", r)
		}
		i += n
	}
	if clean {
		if len(raw) == 4 && string(raw) == "null" {
			return "", nil
		}
		return string(raw), nil
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case '\t', '\n', '\r':
			out = append(out, ' ') // XML attribute-value normalisation
			continue
		case '&':
		default:
			out = append(out, c)
			continue
		}
		semi := bytes.IndexByte(raw[i:], ';')
		if semi < 0 || semi > 12 {
			return "", p.fail(off+i, "'&' that does not start an entity")
		}
		ent := raw[i+1 : i+semi]
		switch string(ent) {
		case "amp":
			out = append(out, '&')
		case "lt":
			out = append(out, '<')
		case "gt":
			out = append(out, '>')
		case "quot":
			out = append(out, '"')
		case "apos":
			out = append(out, '\'')
		default:
			r, ok := charRef(ent)
			if !ok {
				return "", p.fail(off+i, "unknown entity %s", quoteInput(raw[i:i+semi+1]))
			}
			if !validXMLRune(r) {
				return "", p.fail(off+i, "character reference %s is not a valid XML character", quoteInput(raw[i:i+semi+1]))
			}
			out = utf8.AppendRune(out, r)
		}
		i += semi
	}
	if string(out) == "null" {
		return "", nil
	}
	return string(out), nil
}

func charRef(ent []byte) (rune, bool) {
	if len(ent) < 2 || ent[0] != '#' {
		return 0, false
	}
	base, digits := 10, ent[1:]
	if digits[0] == 'x' || digits[0] == 'X' {
		base, digits = 16, digits[1:]
	}
	if len(digits) == 0 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(digits), base, 32)
	if err != nil || v > utf8.MaxRune {
		return 0, false
	}
	return rune(v), true
}

// validXMLRune is the XML 1.0 Char production.
func validXMLRune(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

func isTrue(raw []byte) bool { return string(raw) == "true" }

// parseBounds reads "[l,t][r,b]".
func parseBounds(raw []byte) (scene.Bounds, bool) {
	var v [4]int
	i := 0
	for k := 0; k < 4; k++ {
		want := byte(',')
		if k%2 == 0 {
			if i >= len(raw) || raw[i] != '[' {
				return scene.Bounds{}, false
			}
			i++
		} else {
			want = ']'
		}
		neg := false
		if i < len(raw) && raw[i] == '-' {
			neg = true
			i++
		}
		s := i
		n := 0
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			if i-s >= 9 {
				return scene.Bounds{}, false
			}
			n = n*10 + int(raw[i]-'0')
			i++
		}
		if i == s || i >= len(raw) || raw[i] != want {
			return scene.Bounds{}, false
		}
		i++ // past ',' or ']'
		if neg {
			n = -n
		}
		v[k] = n
	}
	if i != len(raw) {
		return scene.Bounds{}, false
	}
	return scene.Bounds{Left: v[0], Top: v[1], Right: v[2], Bottom: v[3]}, true
}

// quoteByte describes the input at off for an error message.
// maxQuoted is the most of an input value an error quotes: enough to
// recognise it, never the whole of a runaway value (a 26 MB bounds
// attribute once gave 26 MB of stderr).
const maxQuoted = 48

// quoteInput quotes b for an error message, cut to maxQuoted bytes (at a
// UTF-8 boundary) with its full length said when it is longer.
func quoteInput(b []byte) string {
	if len(b) <= maxQuoted {
		return strconv.Quote(string(b))
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strconv.Quote(string(b[:cut])) + "… (" + strconv.Itoa(len(b)) + " bytes)"
}

// clipName shortens an element or attribute name (ASCII by construction,
// see name) the way quoteInput shortens a value.
func clipName(b []byte) string {
	if len(b) <= maxQuoted {
		return string(b)
	}
	return string(b[:maxQuoted]) + "… (" + strconv.Itoa(len(b)) + " bytes)"
}

func quoteByte(d []byte, off int) string {
	if off >= len(d) {
		return "end of input"
	}
	end := off + 16
	if end > len(d) {
		end = len(d)
	}
	return strconv.Quote(string(d[off:end]))
}

// finish fills what needs the whole tree: screen size and foreground app.
func finish(sc *scene.Scene, opt Options) {
	sc.Width, sc.Height = opt.Width, opt.Height
	if sc.Width == 0 || sc.Height == 0 {
		w, h := 0, 0
		for _, e := range sc.Elements {
			if e.Parent >= 0 {
				continue
			}
			w = max(w, e.Bounds.Right)
			h = max(h, e.Bounds.Bottom)
		}
		if sc.Width == 0 {
			sc.Width = w
		}
		if sc.Height == 0 {
			sc.Height = h
		}
	}
	sc.Package = scene.ForegroundPackage(sc)
}
