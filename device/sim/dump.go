package sim

import (
	"bytes"
	"errors"
	"strconv"
	"time"
)

// uiautomator's failures: while the screen animates, and while no window
// is ready.
var (
	errIdleState = errors.New("ERROR: could not get idle state.")
	errNullRoot  = errors.New("ERROR: null root node returned by UiTestAutomationBridge.")
)

// dumpLocked renders the current windows as uiautomator would: one line,
// attributes in uiautomator's order, the app window first. compressed
// drops the pure layout containers (`uiautomator dump --compressed`).
func (p *Phone) dumpLocked(now time.Time, compressed bool) ([]byte, error) {
	return p.dumpSince(now, now, compressed)
}

// dumpSince is a dump that began at start (when uiautomator started waiting
// for the screen to go idle) and captures the screen at now, after the
// dump's latency. An animation running at start makes it fail.
func (p *Phone) dumpSince(start, now time.Time, compressed bool) ([]byte, error) {
	return p.readSince(start, now, compressed, true)
}

// readSince is a read of the tree that began at start and captures the
// screen at now; idleWait says whether it waited for idle (uiautomator)
// and so fails while the screen animates (dumpFailure).
func (p *Phone) readSince(start, now time.Time, compressed, idleWait bool) ([]byte, error) {
	if err := p.dumpFailure(start, idleWait); err != nil {
		return nil, err
	}
	out, err := p.dumpAt(now, compressed)
	if err == nil && p.prof.hostile {
		p.thinkOverlay(now)
	}
	return out, err
}

// dumpAt renders the tree as a read ending at now shows it.
func (p *Phone) dumpAt(now time.Time, compressed bool) ([]byte, error) {
	ws := dumpOrder(p.windowsAt(now, true))
	var b bytes.Buffer
	b.Grow(16 << 10)
	b.WriteString(`<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">`)
	for _, w := range ws {
		writeNode(&b, w, 0, 0, compressed) // window roots: index 0, drawing-order 0
	}
	b.WriteString(`</hierarchy>`)
	return b.Bytes(), nil
}

func writeNode(b *bytes.Buffer, n *node, index, order int, compressed bool) {
	if compressed && n.plain && len(n.kids) > 0 && n.text == "" && n.desc == "" && n.id == "" {
		for i, k := range n.kids {
			writeNode(b, k, index+i, order+i, compressed)
		}
		return
	}
	b.WriteString(`<node index="`)
	b.WriteString(strconv.Itoa(index))
	attr(b, "text", n.text)
	attr(b, "resource-id", n.id)
	attr(b, "class", n.class)
	attr(b, "package", n.pkg)
	attr(b, "content-desc", n.desc)
	flag(b, "checkable", n.checkable)
	flag(b, "checked", n.checked)
	flag(b, "clickable", n.clickable)
	flag(b, "enabled", !n.disabled)
	flag(b, "focusable", n.focusable)
	flag(b, "focused", n.focused)
	flag(b, "scrollable", n.scrollable)
	flag(b, "long-clickable", n.longClickable)
	flag(b, "password", n.password)
	flag(b, "selected", n.selected)
	b.WriteString(`" bounds="[`)
	b.WriteString(strconv.Itoa(n.r.Min.X))
	b.WriteByte(',')
	b.WriteString(strconv.Itoa(n.r.Min.Y))
	b.WriteString(`][`)
	b.WriteString(strconv.Itoa(n.r.Max.X))
	b.WriteByte(',')
	b.WriteString(strconv.Itoa(n.r.Max.Y))
	b.WriteString(`]" drawing-order="`)
	b.WriteString(strconv.Itoa(order))
	attr(b, "hint", n.hint)
	if len(n.kids) == 0 {
		b.WriteString(`" />`)
		return
	}
	b.WriteString(`">`)
	for i, k := range n.kids {
		writeNode(b, k, i, i+1, compressed)
	}
	b.WriteString(`</node>`)
}

// attr closes the previous attribute's quote and writes name="value…
// (the caller closes the last one).
func attr(b *bytes.Buffer, name, v string) {
	b.WriteString(`" `)
	b.WriteString(name)
	b.WriteString(`="`)
	escape(b, v)
}

func flag(b *bytes.Buffer, name string, v bool) {
	b.WriteString(`" `)
	b.WriteString(name)
	if v {
		b.WriteString(`="true`)
	} else {
		b.WriteString(`="false`)
	}
}

// escape writes v as XmlSerializer does for attribute values.
func escape(b *bytes.Buffer, v string) {
	for _, r := range v {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\n':
			b.WriteString("&#10;")
		case '\r':
			b.WriteString("&#13;")
		case '\t':
			b.WriteString("&#9;")
		default:
			if r < 0x20 {
				// XML 1.0 cannot carry other control characters; Android
				// replaces them too.
				b.WriteByte('?')
				continue
			}
			b.WriteRune(r)
		}
	}
}
