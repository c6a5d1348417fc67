package safety_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"phonepilot/safety"
)

// The [safety] section as a user writes it in phonepilot.toml, decoded the
// way cmd decodes the file (every key must be known).
const policyTOML = `
[safety]
payment = "deny"
send = "allow"

[safety.apps."com.tencent.mm"]
send = "confirm"
payment = "confirm"

[safety.apps."com.android.vending"]
install = "allow"
`

func decodePolicy(t *testing.T, src string) (safety.Policy, error) {
	t.Helper()
	var cfg struct {
		Safety safety.Policy `toml:"safety"`
	}
	md, err := toml.Decode(src, &cfg)
	if err != nil {
		return safety.Policy{}, err
	}
	if und := md.Undecoded(); len(und) > 0 {
		t.Fatalf("keys not decoded: %v", und)
	}
	return cfg.Safety, nil
}

func TestPolicyFromTOML(t *testing.T) {
	p, err := decodePolicy(t, policyTOML)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pkg  string
		cat  safety.Category
		want safety.Verdict
	}{
		{"com.taobao.taobao", safety.Payment, safety.Deny},
		{"com.whatsapp", safety.Send, safety.Allow},
		{"com.whatsapp", safety.Delete, safety.Confirm}, // unset: the default
		{"com.tencent.mm", safety.Send, safety.Confirm},
		{"com.tencent.mm", safety.Payment, safety.Confirm},
		{"com.tencent.mm", safety.Delete, safety.Confirm},
		{"com.android.vending", safety.Install, safety.Allow},
		{"com.example", safety.Install, safety.Confirm},
	} {
		if got := p.Verdict(tc.pkg, tc.cat); got != tc.want {
			t.Errorf("%s in %s: %s, want %s", tc.cat, tc.pkg, got, tc.want)
		}
	}
	// The same policy round-trips through JSON (the API shows it).
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back safety.Policy
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, p) {
		t.Errorf("JSON round trip: %s → %+v, want %+v", js, back, p)
	}
	if !strings.Contains(string(js), `"payment":"deny"`) {
		t.Errorf("JSON %s: want flat category keys", js)
	}
}

func TestDefaultPolicyConfirmsEveryCategory(t *testing.T) {
	var p safety.Policy
	for _, c := range safety.Categories() {
		if v := p.Verdict("any.app", c); v != safety.Confirm {
			t.Errorf("%s: %s, want confirm", c, v)
		}
	}
	if len(safety.Categories()) < 7 {
		t.Errorf("categories %v", safety.Categories())
	}
}

func TestValidateNamesTheBadValue(t *testing.T) {
	for _, tc := range []struct {
		src, want string
	}{
		{"[safety]\npayment = \"maybe\"\n", `safety.payment = "maybe"`},
		{"[safety]\nsend = \"Allow\"\n", `safety.send = "Allow"`},
		{"[safety.apps.\"com.tencent.mm\"]\ncall = \"yes\"\n", `safety.apps."com.tencent.mm".call = "yes"`},
		{"[safety.apps.\"\"]\ncall = \"deny\"\n", `safety.apps: "" is not a package name`},
	} {
		p, err := decodePolicy(t, tc.src)
		if err != nil {
			t.Fatal(err)
		}
		err = p.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, safety.ErrPolicy) {
			t.Errorf("%q: Validate = %v, want an ErrPolicy naming %s", tc.src, err, tc.want)
		}
		if _, err := safety.New(p); err == nil {
			t.Errorf("%q: New accepted an invalid policy", tc.src)
		}
	}
}

// An unknown category is a key TOML cannot place: cmd's strict decoding
// reports it.
func TestUnknownCategoryIsAnUndecodedKey(t *testing.T) {
	var cfg struct {
		Safety safety.Policy `toml:"safety"`
	}
	md, err := toml.Decode("[safety]\npaymnet = \"allow\"\n", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if und := md.Undecoded(); len(und) != 1 || und[0].String() != "safety.paymnet" {
		t.Fatalf("undecoded %v, want safety.paymnet", und)
	}
}

func TestPolicyDecides(t *testing.T) {
	p, err := decodePolicy(t, policyTOML)
	if err != nil {
		t.Fatal(err)
	}
	g, err := safety.New(p)
	if err != nil {
		t.Fatal(err)
	}
	tap := func(pkg, label string) safety.Decision {
		sc := screen(pkg, button(label))
		e := find(sc, label)
		return g.Check(safety.Input{Scene: sc, Call: tapOn(e), Element: e})
	}
	// The Gate keeps its own copy of the policy.
	p.Apps["com.whatsapp"] = safety.Rules{Send: safety.Deny}
	if d := tap("com.taobao.taobao", "立即购买"); d.Verdict != safety.Deny || d.Category != safety.Payment {
		t.Errorf("payment=deny: %s %s", d.Verdict, d.Category)
	}
	if d := tap("com.whatsapp", "Send"); d.Verdict != safety.Allow || d.Category != safety.Send {
		t.Errorf("send=allow: %s %s (an allowed finding keeps its category for the record)", d.Verdict, d.Category)
	}
	if d := tap("com.tencent.mm", "发送"); d.Verdict != safety.Confirm {
		t.Errorf("send in WeChat (per-app confirm): %s", d.Verdict)
	}
	// The strictest finding decides: a Send button on a payment sheet is
	// allowed as a send but denied as a payment.
	sc := paymentSheet()
	sc.Elements = append(sc.Elements, sc.Elements[len(sc.Elements)-1])
	last := &sc.Elements[len(sc.Elements)-1]
	last.Index, last.Text = len(sc.Elements)-1, "Send"
	d := g.Check(safety.Input{Scene: sc, Call: tapOn(last), Element: last})
	if d.Verdict != safety.Deny || d.Category != safety.Payment || len(d.Findings) < 2 {
		t.Errorf("send on a payment sheet: %s %s %v, want deny payment with both findings", d.Verdict, d.Category, d.Findings)
	}
}
