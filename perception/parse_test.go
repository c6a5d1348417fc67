package perception

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"phonepilot/scene"
)

func mustParse(t testing.TB, data []byte) *scene.Scene {
	t.Helper()
	sc, err := Parse(data, Options{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return sc
}

func TestEveryFixtureParsesIntoAConsistentTree(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data := readFixture(t, filepath.Base(f))
			sc := mustParse(t, data)
			if want := bytes.Count(data, []byte("<node ")); len(sc.Elements) != want {
				t.Errorf("%d elements, want one per <node> (%d)", len(sc.Elements), want)
			}
			if sc.Width <= 0 || sc.Height <= 0 {
				t.Errorf("screen size %dx%d not taken from the dump", sc.Width, sc.Height)
			}
			if sc.Package == "" || sc.Package == "com.android.systemui" && !strings.Contains(f, "lockscreen") {
				t.Errorf("foreground package %q", sc.Package)
			}
			for i, e := range sc.Elements {
				if e.Index != i {
					t.Fatalf("element %d has Index %d", i, e.Index)
				}
				if e.Parent == -1 {
					if e.Depth != 0 {
						t.Errorf("root %d has depth %d", i, e.Depth)
					}
					continue
				}
				p := sc.Elements[e.Parent]
				if e.Parent >= i || e.Depth != p.Depth+1 || e.Window != p.Window {
					t.Errorf("element %d: parent %d depth %d window %d inconsistent with parent (depth %d window %d)",
						i, e.Parent, e.Depth, e.Window, p.Depth, p.Window)
				}
				if e.Text == "null" || e.Desc == "null" {
					t.Errorf("element %d keeps a literal \"null\" label", i)
				}
			}
		})
	}
}

func TestMultiWindowDumpsPickTheAppWindow(t *testing.T) {
	cases := []struct {
		file    string
		windows int
		pkg     string
	}{
		{"facebook_feed_with_statusbar.xml", 3, "com.facebook.katana"},
		{"google_tasks_list.xml", 2, "com.google.android.apps.tasks"},  // status bar window comes first
		{"indriver_ride_requests_es.xml", 6, "sinet.startup.inDriver"}, // gesture strips + systemui overlays
		{"whatsapp_chat_samsung.xml", 4, "com.whatsapp"},               // launcher edge panel + systemui bars
	}
	for _, c := range cases {
		sc := mustParse(t, readFixture(t, c.file))
		roots := 0
		for _, e := range sc.Elements {
			if e.Parent == -1 {
				if e.Window != roots {
					t.Errorf("%s: root %d is window %d, want %d", c.file, e.Index, e.Window, roots)
				}
				roots++
			}
		}
		if roots != c.windows {
			t.Errorf("%s: %d windows, want %d", c.file, roots, c.windows)
		}
		if sc.Package != c.pkg {
			t.Errorf("%s: foreground %q, want %q", c.file, sc.Package, c.pkg)
		}
	}
}

func TestDialogWindowNotAtOrigin(t *testing.T) {
	sc := mustParse(t, readFixture(t, "android_permission_dialog_zh.xml"))
	if sc.Width != 1467 || sc.Height != 1080 {
		t.Errorf("size %dx%d, want the dialog window's extent 1467x1080", sc.Width, sc.Height)
	}
	allow, ok := sc.Resolve(scene.Selector{Value: "允许", Mode: scene.ModeExact})
	if !ok || scene.SimpleClass(allow.Class) != "Button" || !allow.Clickable {
		t.Fatalf("\"允许\" resolves to %+v, %v", allow, ok)
	}
	x, y := allow.Bounds.Center()
	root := sc.Elements[0].Bounds
	if !root.Contains(x, y) || x < 452 {
		t.Errorf("tap point (%d,%d) not inside the dialog %v", x, y, root)
	}
	if !strings.Contains(sc.Listing(), `Button "拒绝"`) {
		t.Errorf("deny button missing from listing:\n%s", sc.Listing())
	}

	// A caller that knows the real screen size gets it.
	sc2, err := Parse(readFixture(t, "android_permission_dialog_zh.xml"), Options{Width: 1920, Height: 1080})
	if err != nil || sc2.Width != 1920 || sc2.Height != 1080 {
		t.Errorf("Options size not honoured: %dx%d %v", sc2.Width, sc2.Height, err)
	}
}

func TestZeroAreaAndOffScreenNodesAreNeverListedOrMatched(t *testing.T) {
	for _, f := range fixtures(t) {
		sc := mustParse(t, readFixture(t, filepath.Base(f)))
		for _, e := range sc.Listed() {
			if !sc.Visible(e) {
				t.Errorf("%s: listed [%d] %v is not visible", filepath.Base(f), e.Index, e.Bounds)
			}
		}
	}
	sc := mustParse(t, readFixture(t, "jukandian_news_article_large.xml"))
	zero := 0
	for _, e := range sc.Elements {
		if e.Bounds.Empty() {
			zero++
			if e.Label() == "" {
				continue
			}
			for _, m := range sc.Find(scene.Selector{Value: e.Label(), Mode: scene.ModeExact}) {
				if m.Element.Bounds.Empty() {
					t.Fatalf("zero-area [%d] %q matched", m.Element.Index, e.Label())
				}
			}
		}
	}
	if zero < 400 {
		t.Errorf("only %d zero-area nodes seen in jukandian (expected ~468)", zero)
	}
	if n := len(sc.Listed()); n == 0 || n > 40 {
		t.Errorf("jukandian lists %d elements; want the few visible ones", n)
	}
}

func TestContentDescLabelsAndLiteralNull(t *testing.T) {
	sc := mustParse(t, readFixture(t, "wechat_contacts.xml"))
	e, ok := sc.Resolve(scene.Selector{Value: "更多功能按钮"})
	if !ok || e.Desc != "更多功能按钮" || !e.Clickable {
		t.Errorf("content-desc label not found: %+v %v", e, ok)
	}
	if !strings.Contains(sc.Listing(), `"更多功能按钮"`) {
		t.Error("content-desc label missing from listing")
	}

	data := readFixture(t, "vivo_launcher_home_zh.xml")
	if !bytes.Contains(data, []byte(`content-desc="null"`)) {
		t.Fatal("fixture no longer has a literal null label")
	}
	sc = mustParse(t, data)
	for _, e := range sc.Elements {
		if strings.HasSuffix(e.ResourceID, ":id/drag_layer") && e.Desc != "" {
			t.Errorf("literal \"null\" kept as label %q", e.Desc)
		}
	}
	if strings.Contains(sc.Listing(), `"null"`) {
		t.Error("listing shows a \"null\" label")
	}
}

func TestEntitiesAndNewlinesInText(t *testing.T) {
	sc := mustParse(t, readFixture(t, "playstore_search_suggestions_zh.xml"))
	e, ok := sc.Resolve(scene.Selector{Value: "Manus AI", Mode: scene.ModeContains})
	if !ok || e.Desc != "Manus AI\n已安装\n" {
		t.Errorf("&#10; not decoded to newlines: %q", e.Desc)
	}
	if !strings.Contains(sc.Listing(), `"Manus AI\n已安装"`) {
		t.Errorf("listing must keep a label on one line with \\n:\n%s", sc.Listing())
	}
	sc = mustParse(t, readFixture(t, "futu_rebalance_history_zh.xml"))
	if _, ok := sc.Resolve(scene.Selector{Field: scene.FieldText, Value: "40.41%->50.00%", Mode: scene.ModeExact}); !ok {
		t.Error("&gt; not decoded")
	}
	sc = mustParse(t, readFixture(t, "jukandian_news_article_large.xml"))
	found := false
	for _, e := range sc.Elements {
		if strings.Contains(e.Desc, "src=read&imageUrl=") {
			found = true
		}
		if strings.Contains(e.Desc, "&amp;") {
			t.Fatalf("&amp; left encoded in %q", e.Desc)
		}
	}
	if !found {
		t.Error("&amp; not decoded")
	}
	// Attribute-value normalisation: a literal newline is a space.
	sc = mustParse(t, minimalDump(`text="two`+"\n"+`lines &#10;kept"`))
	if got := sc.Elements[1].Text; got != "two lines \nkept" {
		t.Errorf("text %q", got)
	}
}

// minimalDump is a one-window dump whose only child carries attrs.
func minimalDump(attrs string) []byte {
	return []byte(`<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">` +
		`<node index="0" text="" class="android.widget.FrameLayout" package="com.example" bounds="[0,0][1080,2400]">` +
		`<node index="0" ` + attrs + ` class="android.widget.TextView" package="com.example" clickable="true" bounds="[10,10][500,100]" />` +
		`</node></hierarchy>`)
}

func TestTrailingDumpedToLineIsIgnored(t *testing.T) {
	data := readFixture(t, "gmail_inbox.xml")
	want := mustParse(t, data)
	for _, trailer := range []string{
		"UI hierchary dumped to: /dev/tty\n",
		"\r\nUI hierchary dumped to: /sdcard/window_dump.xml",
		"\nUI hierchary dumped to: /dev/tty\r\n\n",
	} {
		got, err := Parse(append(append([]byte(nil), data...), trailer...), Options{})
		if err != nil {
			t.Fatalf("trailer %q: %v", trailer, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("trailer %q changed the scene", trailer)
		}
	}
	_, err := Parse(append(append([]byte(nil), data...), "\ngarbage"...), Options{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Offset != len(data)+1 {
		t.Errorf("other trailing content: %v, want ParseError at %d", err, len(data)+1)
	}
}

func TestDeviceErrorLinesAreRetryable(t *testing.T) {
	cases := map[string]error{
		"ERROR: could not get idle state.\n":                                    ErrIdleState,
		"ERROR: could not get idle state.":                                      ErrIdleState,
		"ERROR: null root node returned by UiTestAutomationBridge.\n":           ErrNullRoot,
		"Killed\nERROR: null root node returned by UiTestAutomationBridge.\r\n": ErrNullRoot,
	}
	for in, want := range cases {
		sc, err := Parse([]byte(in), Options{})
		if !errors.Is(err, want) || sc != nil {
			t.Errorf("%q: got %v, want %v", in, err, want)
		}
		if !Retryable(err) {
			t.Errorf("%q: not retryable", in)
		}
	}
	if Retryable(&ParseError{}) {
		t.Error("a ParseError is not retryable")
	}
}

func TestBadInputGetsParseErrorWithOffset(t *testing.T) {
	good := readFixture(t, "permission_location_dialog.xml")
	textAt := bytes.Index(good, []byte(`text="Precise"`)) + len(`text="`)
	cases := []struct {
		name   string
		in     []byte
		offset int
		msg    string
	}{
		{"empty", nil, 0, "empty input"},
		{"whitespace", []byte(" \n\t"), 0, "empty input"},
		{"not XML", []byte("hello world"), 0, "not XML"},
		{"JSON", []byte(`{"hierarchy": []}`), 0, "not XML"},
		{"HTML", []byte("<html><body></body></html>"), 0, "expected <hierarchy>"},
		{"empty hierarchy", []byte(`<?xml version='1.0' ?><hierarchy rotation="0"></hierarchy>`), 22, "empty hierarchy"},
		{"self-closed hierarchy", []byte(`<hierarchy rotation="0"/>`), 0, "empty hierarchy"},
		{"truncated mid-attribute", good[:textAt+3], textAt + 3, "truncated"},
		{"truncated between nodes", good[:bytes.LastIndex(good, []byte("</node>"))], bytes.LastIndex(good, []byte("</node>")), "truncated"},
		{"control character", replaceOnce(t, good, `text="Precise"`, "text=\"Pre\x01cise\""), textAt + 3, "invalid character"},
		{"invalid UTF-8", replaceOnce(t, good, `text="Precise"`, "text=\"Pre\xffcise\""), textAt + 3, "invalid UTF-8"},
		{"bad char reference", replaceOnce(t, good, `text="Precise"`, `text="Pre&#0;cise"`), textAt + 3, "not a valid XML character"},
		{"unknown entity", replaceOnce(t, good, `text="Precise"`, `text="Pre&nbsp;cise"`), textAt + 3, "unknown entity"},
		{"bare ampersand", replaceOnce(t, good, `text="Precise"`, `text="Pre & cise"`), textAt + 4, "'&'"},
		{"bad bounds", []byte(`<hierarchy><node bounds="[0,0][1,x]"/></hierarchy>`), 25, "bounds"},
		{"unexpected element", []byte(`<hierarchy><node bounds="[0,0][1,1]"><foo/></node></hierarchy>`), 37, "unexpected element <foo>"},
		{"mismatched close", []byte(`<hierarchy><node bounds="[0,0][1,1]"></hierarchy>`), 37, "still open"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc, err := Parse(c.in, Options{})
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v (scene %v), want *ParseError", err, sc != nil)
			}
			if pe.Offset != c.offset || !strings.Contains(pe.Msg, c.msg) {
				t.Errorf("got offset %d %q, want offset %d and %q", pe.Offset, pe.Msg, c.offset, c.msg)
			}
			if !strings.Contains(err.Error(), "byte ") {
				t.Errorf("message %q does not say where", err)
			}
		})
	}
}

func TestEveryTruncationIsAnErrorNotAPanic(t *testing.T) {
	data := readFixture(t, "android_permission_dialog_zh.xml")
	end := bytes.LastIndex(data, []byte("</hierarchy>"))
	for n := 0; n < end; n++ {
		_, err := Parse(data[:n], Options{})
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("cut at %d: %v, want *ParseError", n, err)
		}
		if pe.Offset < 0 || pe.Offset > n {
			t.Fatalf("cut at %d: offset %d outside the input", n, pe.Offset)
		}
	}
}

func TestRotationAndFlags(t *testing.T) {
	data := replaceOnce(t, minimalDump(`text="Hi" focused="true" checkable="true" checked="true" enabled="false" password="true" long-clickable="true" scrollable="true" selected="true" focusable="true"`),
		`rotation="0"`, `rotation="1"`)
	sc := mustParse(t, data)
	if sc.Rotation != 1 {
		t.Errorf("rotation %d", sc.Rotation)
	}
	e := sc.Elements[1]
	want := scene.Element{Index: 1, Parent: 0, Depth: 1, Class: "android.widget.TextView", Text: "Hi", Package: "com.example",
		Bounds: scene.Bounds{Left: 10, Top: 10, Right: 500, Bottom: 100}, Clickable: true, LongClickable: true, Scrollable: true,
		Checkable: true, Checked: true, Selected: true, Focusable: true, Focused: true, Enabled: false, Password: true}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("got  %+v\nwant %+v", e, want)
	}
	if _, err := Parse(replaceOnce(t, data, `rotation="1"`, `rotation="9"`), Options{}); err == nil {
		t.Error("rotation 9 accepted")
	}
}

func TestEditableFromClassAndFocusedField(t *testing.T) {
	for class, want := range map[string]bool{
		"android.widget.EditText":                                 true,
		"android.widget.AutoCompleteTextView":                     true,
		"android.widget.MultiAutoCompleteTextView":                true,
		"android.widget.SearchView$SearchAutoComplete":            true,
		"com.google.android.material.textfield.TextInputEditText": true,
		"android.widget.TextView":                                 false,
		"android.widget.Button":                                   false,
	} {
		sc := mustParse(t, replaceOnce(t, minimalDump(`text=""`), "android.widget.TextView", class))
		if got := sc.Elements[1].Editable; got != want {
			t.Errorf("%s: editable %v, want %v", class, got, want)
		}
	}
	sc := mustParse(t, readFixture(t, "whatsapp_chat_samsung.xml"))
	f, ok := sc.Focused()
	if !ok || f.Text != "Message" || !f.Editable {
		t.Errorf("focused field %+v %v, want the Message EditText", f, ok)
	}
	sc = mustParse(t, readFixture(t, "google_dialer_home_empty.xml"))
	if f, ok := sc.Focused(); ok {
		t.Errorf("dialer home has no focused field, got [%d]", f.Index)
	}
}

func TestHiddenNodesAreLeftOut(t *testing.T) {
	data := []byte(`<hierarchy rotation="0"><node package="a" class="F" bounds="[0,0][100,100]">` +
		`<node text="gone" visible-to-user="false" package="a" class="T" bounds="[0,0][10,10]"><node text="child" package="a" class="T" bounds="[0,0][10,10]"/></node>` +
		`<node text="shown" visible-to-user="true" package="a" class="T" bounds="[0,0][10,10]"/></node></hierarchy>`)
	sc := mustParse(t, data)
	if len(sc.Elements) != 2 || sc.Elements[1].Text != "shown" || sc.Elements[1].Parent != 0 {
		t.Errorf("got %+v", sc.Elements)
	}
}

func TestDeepNestingParsesAndLists(t *testing.T) {
	// The parser and the listing are iterative: the deepest tree read
	// (scene.MaxDepth) is neither a stack overflow nor a quadratic walk.
	const depth = scene.MaxDepth - 1
	var b bytes.Buffer
	b.WriteString(`<hierarchy rotation="0">`)
	for i := 0; i < depth; i++ {
		b.WriteString(`<node class="android.widget.FrameLayout" package="p" clickable="true" bounds="[0,0][100,100]">`)
	}
	b.WriteString(`<node text="leaf" class="android.widget.TextView" package="p" bounds="[0,0][10,10]"/>`)
	for i := 0; i < depth; i++ {
		b.WriteString(`</node>`)
	}
	b.WriteString(`</hierarchy>`)
	sc := mustParse(t, b.Bytes())
	if len(sc.Elements) != depth+1 || sc.Elements[depth].Depth != depth {
		t.Fatalf("%d elements, leaf depth %d", len(sc.Elements), sc.Elements[len(sc.Elements)-1].Depth)
	}
	// The innermost clickable takes the leaf's label.
	if !strings.Contains(sc.Listing(), fmt.Sprintf(`[%d] FrameLayout "leaf" clickable`, depth-1)) {
		t.Error("innermost clickable did not take the leaf label")
	}
	if e, ok := sc.Resolve(scene.Selector{Value: "leaf", Clickable: true}); !ok || e.Index != depth-1 {
		t.Errorf("resolved to %d, want %d", e.Index, depth-1)
	}
}

// The dumps: 20k levels deep (it cost the rule planner 14.6 s a
// plan), 650k levels deep (a task ran over 12 minutes), 60k siblings, and
// 9 MB of one attribute: each is refused with scene.ErrTooBig, saying
// which limit, having read no further than the limit, with memory bounded
// by the limit, not by the dump.
func TestDumpsOverTheLimitsRefused(t *testing.T) {
	deep := func(n int) []byte {
		return []byte(`<hierarchy rotation="0">` + strings.Repeat(`<node bounds="[0,0][9,9]">`, n) + strings.Repeat(`</node>`, n) + `</hierarchy>`)
	}
	for _, c := range []struct {
		name string
		dump []byte
		want string
	}{
		{"20k deep", deep(20000), "nest deeper than 200"},
		{"650k deep", deep(650000), "more than 8388608"},
		{"650k deep, compact", []byte(`<hierarchy>` + strings.Repeat(`<node>`, 650000)), "nest deeper than 200"},
		{"60k siblings", []byte(`<hierarchy><node bounds="[0,0][9,9]">` + strings.Repeat(`<node bounds="[0,0][9,9]"/>`, 60000) + `</node></hierarchy>`), "more than 50000 <node>"},
		{"9 MB attribute", []byte(`<hierarchy><node text="` + strings.Repeat("a", 9<<20) + `"/></hierarchy>`), "more than 8388608"},
	} {
		var before, after goruntime.MemStats
		goruntime.ReadMemStats(&before)
		sc, err := Parse(c.dump, Options{})
		goruntime.ReadMemStats(&after)
		var pe *ParseError
		if sc != nil || !errors.Is(err, scene.ErrTooBig) || !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want scene.ErrTooBig saying %q", c.name, err, c.want)
			continue
		}
		// At most the limit's worth of elements (50000 of them, the slice
		// grown by doubling: 44 MB allocated in all, measured) plus the
		// parser's own buffers; never in proportion to the dump.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
			t.Errorf("%s (%d KB): %d KB allocated", c.name, len(c.dump)>>10, alloc>>10)
		}
		t.Logf("%s (%d KB): %v", c.name, len(c.dump)>>10, err)
	}
}

func TestBoundsNotation(t *testing.T) {
	good := map[string]scene.Bounds{
		"[0,0][1080,2400]":    {Left: 0, Top: 0, Right: 1080, Bottom: 2400},
		"[-120,5][30,-1]":     {Left: -120, Top: 5, Right: 30, Bottom: -1},
		"[452,42][1467,1080]": {Left: 452, Top: 42, Right: 1467, Bottom: 1080},
	}
	for in, want := range good {
		got, ok := parseBounds([]byte(in))
		if !ok || got != want {
			t.Errorf("%s: got %v %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "[0,0]", "[0,0][1,1", "[0,0][1,1]x", "[a,0][1,1]", "[0;0][1,1]", "[0,0][1,9999999999]", "[-,0][1,1]"} {
		if _, ok := parseBounds([]byte(in)); ok {
			t.Errorf("%q accepted", in)
		}
	}
}

// A runaway value (a 26 MB bounds attribute once gave 26 MB of stderr) is
// quoted by a short prefix and its length, wherever it sits.
func TestParseErrorQuotesOnlyAPrefixOfHugeValues(t *testing.T) {
	const size = 1 << 20
	huge := strings.Repeat("9", size)
	hugeName := strings.Repeat("x", size)
	cases := []struct{ name, in, prefix string }{
		{"bounds", `<hierarchy><node bounds="[0,0][1,` + huge + `"/></hierarchy>`, `"[0,0][1,999`},
		{"rotation", `<hierarchy rotation="` + huge + `"><node bounds="[0,0][1,1]"/></hierarchy>`, `"9999`},
		{"multi-byte value", `<hierarchy><node bounds="a` + strings.Repeat("界", size/3) + `"/></hierarchy>`, `"a界界`},
		{"root element", `<` + hugeName + `/>`, "<xxxx"},
		{"element", `<hierarchy><node bounds="[0,0][1,1]"><` + hugeName + `/></node></hierarchy>`, "<xxxx"},
		{"closing tag", `<hierarchy><node bounds="[0,0][1,1]"></` + hugeName + `></hierarchy>`, "</xxxx"},
		{"attribute name", `<hierarchy><node ` + hugeName + ` bounds="[0,0][1,1]"/></hierarchy>`, "xxxx"},
		{"unquoted value", `<hierarchy><node ` + hugeName + `=1/></hierarchy>`, "xxxx"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.in), Options{})
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want *ParseError", err)
			}
			msg := err.Error()
			if len(msg) > 250 {
				t.Fatalf("error is %d bytes long; want a short prefix quoted: %.300s…", len(msg), msg)
			}
			if !strings.Contains(msg, c.prefix) || !strings.Contains(msg, "bytes)") {
				t.Errorf("error %q: want the value's start %s and its length", msg, c.prefix)
			}
			if !utf8.ValidString(msg) || strings.Contains(msg, `\x`) {
				t.Errorf("error %q has a cut rune", msg)
			}
		})
	}
}
