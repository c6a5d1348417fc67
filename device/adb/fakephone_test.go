package adb

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"phonepilot/internal/clock"
	"phonepilot/internal/testlog"
)

// shSplit splits a command line the way the device's sh does for the
// quoting Quote produces and more: single quotes, double quotes with
// backslash escapes, backslash outside quotes. Metacharacters are plain
// characters here; an unquoted one is reported so tests can catch it.
func shSplit(line string) (words []string, unquotedMeta bool) {
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			inWord = true
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, true
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				if line[i] == '$' || line[i] == '`' {
					unquotedMeta = true
				}
				cur.WriteByte(line[i])
			}
		case c == '\\' && i+1 < len(line):
			inWord = true
			i++
			cur.WriteByte(line[i])
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			if strings.IndexByte("&;|<>()$`*?[#~", c) >= 0 {
				unquotedMeta = true
			}
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, unquotedMeta
}

// inputTextDecode does what Android's `input text` does to its argument:
// "%s" becomes a space, nothing else changes.
func inputTextDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+1 < len(s) && s[i+1] == 's' {
			b.WriteByte(' ')
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// fakePhone answers the shell commands the driver sends, with just enough
// state (one text field, the IME, installed packages) to check effects.
type fakePhone struct {
	t testing.TB

	mu          sync.Mutex
	field       string
	focused     bool
	ime         string
	enabledIMEs map[string]bool
	packages    []string
	ttyWorks    bool
	dumpScript  []string // outputs for the next dumps, consumed in order
	fileDump    string   // what the last dump to a file wrote
	wmSize      string
	window      string // dumpsys window output
	activities  string // dumpsys activity activities output
	screencap   []byte
	cmds        []string
	launched    []string
	legacyShell bool
	props       map[string]string // getprop
}

func newFakePhone(t testing.TB) *fakePhone {
	return &fakePhone{
		t:        t,
		focused:  true,
		ime:      "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME",
		packages: []string{"com.android.settings", "com.taobao.taobao", "com.android.adbkeyboard", "org.mozilla.firefox", "com.google.android.apps.nexuslauncher"},
		ttyWorks: true,
		wmSize:   "Physical size: 1080x2400\n",
		window:   "  mCurrentFocus=Window{a1 u0 com.android.settings/com.android.settings.Settings}\n  mFocusedApp=ActivityRecord{b2 u0 com.android.settings/.Settings t7}\n",
	}
}

func (p *fakePhone) commands() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.cmds...)
}

func (p *fakePhone) dumpXML() string {
	return fmt.Sprintf(`<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">`+
		`<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.android.settings" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][1080,2400]">`+
		`<node index="0" text="%s" resource-id="com.android.settings:id/search" class="android.widget.EditText" package="com.android.settings" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="%t" scrollable="false" long-clickable="true" password="false" selected="false" bounds="[40,200][1040,320]" />`+
		`</node></hierarchy>`, xmlEscape(p.field), p.focused)
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&apos;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (p *fakePhone) handle(serial, service, cmd string) reply {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cmds = append(p.cmds, cmd)
	args, meta := shSplit(cmd)
	if meta {
		p.t.Errorf("command has an unquoted shell metacharacter: %q", cmd)
	}
	tty := strings.HasPrefix(service, "exec:") || (strings.HasPrefix(service, "shell:") && p.legacyShell)
	if len(args) == 0 {
		return reply{exit: 0}
	}
	switch args[0] {
	case "sleep":
		return reply{hang: true}
	case "uiautomator":
		out := p.dumpXML()
		if len(p.dumpScript) > 0 {
			out, p.dumpScript = p.dumpScript[0], p.dumpScript[1:]
		}
		target := args[len(args)-1]
		if target == "/dev/tty" {
			if !tty || !p.ttyWorks {
				return reply{out: []byte("ERROR: could not open /dev/tty\n"), exit: 1}
			}
			if strings.Contains(out, "<hierarchy") {
				out += "UI hierchary dumped to: /dev/tty\n"
			}
			return reply{out: []byte(out)}
		}
		if !strings.Contains(out, "<hierarchy") {
			return reply{out: []byte(out)}
		}
		p.fileDump = out
		return reply{out: []byte("UI hierchary dumped to: " + target + "\n")}
	case "cat":
		return reply{out: []byte(p.fileDump)}
	case "wm":
		return reply{out: []byte(p.wmSize)}
	case "getprop":
		if len(args) > 1 {
			return reply{out: []byte(p.props[args[1]] + "\n")}
		}
		return reply{}
	case "dumpsys":
		if len(args) > 1 && args[1] == "window" {
			return reply{out: []byte(p.window)}
		}
		return reply{out: []byte(p.activities)}
	case "screencap":
		return reply{out: p.screencap}
	case "settings":
		return reply{out: []byte(p.ime + "\n")}
	case "ime":
		if p.enabledIMEs == nil {
			p.enabledIMEs = map[string]bool{p.ime: true}
		}
		switch {
		case len(args) == 3 && args[1] == "list":
			var b strings.Builder
			for id, on := range p.enabledIMEs {
				if on {
					b.WriteString(id + "\n")
				}
			}
			return reply{out: []byte(b.String())}
		case len(args) == 3 && args[1] == "set":
			if !p.enabledIMEs[args[2]] {
				return reply{stderr: []byte("Unknown input method " + args[2] + " cannot be selected for user #0\n"), exit: 255}
			}
			p.ime = args[2]
		case len(args) == 3 && (args[1] == "enable" || args[1] == "disable"):
			p.enabledIMEs[args[2]] = args[1] == "enable"
		}
		return reply{out: []byte("Input method " + args[len(args)-1] + " done for user #0\n")}
	case "pm":
		var b strings.Builder
		for _, pkg := range p.packages {
			b.WriteString("package:" + pkg + "\n")
		}
		return reply{out: []byte(b.String())}
	case "monkey":
		if len(args) > 2 {
			p.launched = append(p.launched, args[2])
		}
		return reply{out: []byte("Events injected: 1\n")}
	case "am":
		if len(args) >= 3 && args[1] == "broadcast" && p.ime == adbKeyboardIME {
			switch args[3] {
			case "ADB_CLEAR_TEXT":
				p.field = ""
			case "ADB_INPUT_B64":
				b, err := base64.StdEncoding.DecodeString(args[len(args)-1])
				if err != nil {
					p.t.Errorf("bad base64 in %q", cmd)
				}
				p.field += string(b)
			}
		}
		return reply{out: []byte("Broadcasting: Intent { act=" + args[len(args)-1] + " }\nBroadcast completed: result=0\n")}
	case "input":
		if len(args) < 2 {
			return reply{exit: 1}
		}
		switch args[1] {
		case "text":
			if len(args) != 3 {
				p.t.Errorf("input text got %d arguments (want exactly one): %q", len(args)-2, cmd)
			}
			p.field += inputTextDecode(args[2])
		case "keyevent":
			for _, k := range args[2:] {
				if k == "67" {
					if r := []rune(p.field); len(r) > 0 {
						p.field = string(r[:len(r)-1])
					}
				}
			}
		case "tap", "swipe":
			for _, a := range args[2:] {
				if _, err := strconv.Atoi(a); err != nil {
					return reply{out: []byte("Error: bad number " + a), exit: 1}
				}
			}
		}
		return reply{}
	}
	return reply{out: []byte("/system/bin/sh: " + args[0] + ": not found\n"), exit: 127}
}

// openFake starts a fake server with the phone and opens the driver on it.
func openFake(t *testing.T, p *fakePhone) (*Device, *fakeServer) {
	t.Helper()
	s := newFakeServer(t, p.handle)
	if p.legacyShell {
		s.setFeatures("cmd")
	}
	d, err := Open(t.Context(), Config{
		Server: s.addr(), Logger: testlog.New(t),
		// The fake server speaks no sync or localabstract: these tests are the uiautomator path's.
		Observer: ObserverUIAutomator,
		Clock:    clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		Timeouts: Timeouts{Command: 2 * time.Second, Dump: 2 * time.Second, Screenshot: 2 * time.Second, Probe: time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	return d, s
}

func solidPNG(t testing.TB, w, h int, c color.Color) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func noisyPNG(t testing.TB, w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 7), uint8(y * 13), uint8(x ^ y), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
