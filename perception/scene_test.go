package perception

import (
	"bytes"
	"strings"
	"testing"

	"phonepilot/scene"
)

// withDialog returns screen with the dialog dump's window added on top, as
// uiautomator reports a dialog window in a multi-window dump.
func withDialog(t *testing.T, screen, dialog []byte) []byte {
	t.Helper()
	start := bytes.Index(dialog, []byte("<node "))
	end := bytes.LastIndex(dialog, []byte("</hierarchy>"))
	at := bytes.LastIndex(screen, []byte("</hierarchy>"))
	if start < 0 || end < 0 || at < 0 {
		t.Fatal("fixture without a hierarchy")
	}
	out := append([]byte(nil), screen[:at]...)
	out = append(out, dialog[start:end]...)
	return append(out, screen[at:]...)
}

func TestFingerprintIgnoresClockBatteryAndNotificationIcons(t *testing.T) {
	cases := []struct {
		file  string
		edits [][2]string
	}{
		{"facebook_feed_with_statusbar.xml", [][2]string{
			{`text="2:06" resource-id="com.android.systemui:id/clock"`, `text="2:07" resource-id="com.android.systemui:id/clock"`},
			{`content-desc="2:06 PM"`, `content-desc="2:07 PM"`},
			{`content-desc="Battery charging, 90 percent"`, `content-desc="Battery charging, 91 percent"`},
			{`content-desc="Phone three bars."`, `content-desc="Phone two bars."`},
			{`content-desc="Temu notification: Order out for delivery"`, `content-desc="Temu notification: Delivered"`},
		}},
		{"whatsapp_chat_samsung.xml", [][2]string{
			{`text="11:32"`, `text="11:33"`},
			{`text="59%"`, `text="58%"`},
			{`content-desc="Battery charging, 59 percent."`, `content-desc="Battery charging, 58 percent."`},
		}},
		{"google_tasks_list.xml", [][2]string{
			{`text="3:17"`, `text="3:18"`},
			{`text="1.26"`, `text="0.00"`}, // network speed
			{`text="74"`, `text="75"`},
		}},
		{"lockscreen_notifications_pt.xml", [][2]string{
			{`content-desc="A bateria está a carregar, 77 por cento."`, `content-desc="A bateria está a carregar, 78 por cento."`},
			{`text="77% • Carregando (2 h até a conclusão)"`, `text="78% • Carregando (2 h até a conclusão)"`},
		}},
	}
	for _, c := range cases {
		before := readFixture(t, c.file)
		after := before
		for _, e := range c.edits {
			after = replaceOnce(t, after, e[0], e[1])
		}
		a, b := mustParse(t, before), mustParse(t, after)
		if a.Fingerprint() != b.Fingerprint() {
			t.Errorf("%s: status bar change altered the fingerprint", c.file)
		}
		if ch := scene.Diff(a, b); !ch.Empty() {
			t.Errorf("%s: status bar change shows in the diff: %+v", c.file, ch)
		}
	}
}

func TestFingerprintSeesWhatAUserSees(t *testing.T) {
	gmail := readFixture(t, "gmail_inbox.xml")
	base := mustParse(t, gmail)

	withDlg := mustParse(t, withDialog(t, gmail, readFixture(t, "permission_location_dialog.xml")))
	if withDlg.Fingerprint() == base.Fingerprint() {
		t.Error("a dialog window added did not change the fingerprint")
	}
	ch := scene.Diff(base, withDlg)
	if len(ch.Appeared) == 0 || len(ch.Disappeared) != 0 || len(ch.Changed) != 0 {
		t.Errorf("dialog diff: %d appeared, %d disappeared, %d changed", len(ch.Appeared), len(ch.Disappeared), len(ch.Changed))
	}
	var labels []string
	for _, e := range ch.Appeared {
		labels = append(labels, e.Label())
	}
	if !strings.Contains(strings.Join(labels, "|"), "Don’t allow") {
		t.Errorf("dialog buttons not among appeared: %q", labels)
	}
	// The listing keeps the dialog of a multi-window dump.
	if l := withDlg.Listing(); !strings.Contains(l, `Button "While using the app"`) || !strings.Contains(l, `Button "Compose"`) {
		t.Errorf("multi-window listing lost a window:\n%s", l)
	}

	// Text typed into a field, a switched radio button, a scrolled list.
	edits := map[string][2]string{
		"typed text":   {`text="Search in mail" resource-id="com.google.android.gm:id/open_search"`, `text="zimbra" resource-id="com.google.android.gm:id/open_search"`},
		"mail subject": {`text="Zimbra Test Email"`, `text="Other Email"`},
	}
	for name, e := range edits {
		b := mustParse(t, replaceOnce(t, gmail, e[0], e[1]))
		if b.Fingerprint() == base.Fingerprint() {
			t.Errorf("%s: fingerprint unchanged", name)
		}
		ch := scene.Diff(base, b)
		if len(ch.Changed) != 1 || len(ch.Appeared)+len(ch.Disappeared) != 0 {
			t.Errorf("%s: diff %+v, want exactly one changed element", name, ch)
		}
	}
	radio := readFixture(t, "permission_location_dialog.xml")
	a := mustParse(t, radio)
	flipped := bytes.Replace(radio, []byte(`checked="true"`), []byte(`checked="false"`), 1)
	if b := mustParse(t, flipped); b.Fingerprint() == a.Fingerprint() {
		t.Error("unchecking a radio button did not change the fingerprint")
	}
	if a.Fingerprint() != mustParse(t, radio).Fingerprint() {
		t.Error("fingerprint is not deterministic")
	}
	// Different screens differ.
	seen := map[string]string{}
	for _, f := range fixtures(t) {
		fp := mustParse(t, readFixture(t, baseName(f))).Fingerprint()
		if other, dup := seen[fp]; dup {
			t.Errorf("%s and %s share a fingerprint", f, other)
		}
		seen[fp] = f
	}
}

func TestFindOnRealScreens(t *testing.T) {
	cases := []struct {
		file string
		sel  scene.Selector
		want string // label, id or class of the best match
	}{
		{"vivo_launcher_home_zh.xml", scene.Selector{Value: "微信"}, "微信"},
		{"vivo_launcher_home_zh.xml", scene.Selector{Value: "哔哩"}, "哔哩哔哩"},                          // contains
		{"vivo_launcher_home_zh.xml", scene.Selector{Value: "权利卫士", Mode: scene.ModeExact}, "权利卫士"}, // exact beats "权利卫士自动化"
		{"vivo_launcher_home_zh.xml", scene.Selector{Value: "权力卫士"}, "权利卫士"},                        // fuzzy: one wrong character
		{"gmail_inbox.xml", scene.Selector{Value: "compose"}, "Compose"},
		{"gmail_inbox.xml", scene.Selector{Value: "Compse", Mode: scene.ModeFuzzy}, "Compose"},
		{"gmail_inbox.xml", scene.Selector{Field: scene.FieldID, Value: "compose_button"}, "Compose"},
		{"gmail_inbox.xml", scene.Selector{Field: scene.FieldID, Value: "com.google.android.gm:id/compose_button"}, "Compose"},
		{"gmail_inbox.xml", scene.Selector{Value: "search in mail", Editable: true}, "Search in mail"},
		{"gmail_inbox.xml", scene.Selector{Field: scene.FieldClass, Value: "EditText"}, "Search in mail"},
		{"gmail_inbox.xml", scene.Selector{Field: scene.FieldClass, Value: "android.widget.EditText"}, "Search in mail"},
		{"wechat_contacts.xml", scene.Selector{Value: "通讯录", Clickable: true}, "ll"}, // TextView inside a clickable row
	}
	for _, c := range cases {
		sc := mustParse(t, readFixture(t, c.file))
		e, ok := sc.Resolve(c.sel)
		if !ok {
			t.Errorf("%s %+v: no match", c.file, c.sel)
			continue
		}
		if e.Label() != c.want && scene.IDName(e.ResourceID) != c.want {
			t.Errorf("%s %+v: got [%d] %q id=%s", c.file, c.sel, e.Index, e.Label(), e.ResourceID)
		}
		if c.sel.Clickable && !e.Clickable || c.sel.Editable && !e.Editable {
			t.Errorf("%s %+v: [%d] does not satisfy the narrowing", c.file, c.sel, e.Index)
		}
	}
	sc := mustParse(t, readFixture(t, "gmail_inbox.xml"))
	e, ok := sc.Resolve(scene.Selector{Field: scene.FieldIndex, Value: "11"})
	if !ok || e.Text != "Compose" {
		t.Errorf("index 11: %+v %v", e, ok)
	}
	if m := sc.Find(scene.Selector{Value: "no such thing anywhere"}); len(m) != 0 {
		t.Errorf("nonsense matched %d elements", len(m))
	}
}

func baseName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }
