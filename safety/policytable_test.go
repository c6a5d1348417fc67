package safety_test

import (
	"fmt"
	"testing"

	"phonepilot/safety"
	"phonepilot/tools"
)

// sampleOf is an action the gate files under each category: a button on a
// plain screen of an ordinary app. A category without a sample fails
// TestPolicyTable, so a new category gets its rows.
var sampleOf = map[safety.Category]string{
	safety.Payment: "Pay now", safety.Delete: "Delete", safety.Send: "Send", safety.Account: "Log out",
	safety.Permission: "Allow", safety.Install: "Install", safety.Call: "Call",
}

// policyRow is one rule of the policy and what it must decide: a policy as
// a user writes it, an action, and the verdict and category. Every rule
// has its inverse beside it (the same policy on an action the rule must
// not touch, or the opposite policy), so inverting the rule by hand in
// policy.go or gate.go fails a row that names it.
type policyRow struct {
	rule   string
	toml   string
	action func(t *testing.T) safety.Input
	want   safety.Verdict
	cat    safety.Category
}

// tapIn taps a button labelled label on a plain screen of pkg.
func tapIn(pkg, label string) func(t *testing.T) safety.Input {
	return func(t *testing.T) safety.Input {
		sc := screen(pkg, button(label))
		e := find(sc, label)
		return safety.Input{Scene: sc, Call: tapOn(e), Element: e}
	}
}

// launchFrom launches app with pkg in front.
func launchFrom(pkg, app string) func(t *testing.T) safety.Input {
	return func(t *testing.T) safety.Input {
		return safety.Input{Scene: screen(pkg, button("Search")), Call: tools.NewCall(tools.LaunchApp, tools.LaunchAppArgs{App: app})}
	}
}

// sendOnSheet taps a "Send" button on a payment sheet: a send and a
// payment at once.
func sendOnSheet(t *testing.T) safety.Input {
	sc := paymentSheet()
	sc.Elements = append(sc.Elements, sc.Elements[len(sc.Elements)-1])
	last := &sc.Elements[len(sc.Elements)-1]
	last.Index, last.Text = len(sc.Elements)-1, "Send"
	return safety.Input{Scene: sc, Call: tapOn(last), Element: last}
}

const (
	alipay   = "com.eg.android.AlipayGphone"
	launcher = "com.google.android.apps.nexuslauncher"
	wechat   = "com.tencent.mm"
)

func policyRows(t *testing.T) []policyRow {
	var rows []policyRow
	// Each category's rule reads its own field: set to each verdict, it
	// decides its category, and every other category stays at the default
	// (confirm). permission = "deny" read from another field fails here.
	for _, c := range safety.Categories() {
		label, ok := sampleOf[c]
		if !ok {
			t.Fatalf("no sample action for category %s", c)
		}
		for _, v := range []safety.Verdict{safety.Allow, safety.Confirm, safety.Deny} {
			policy := fmt.Sprintf("[safety]\n%s = %q\n", c, v)
			rows = append(rows, policyRow{fmt.Sprintf("%s = %s decides a %s", c, v, c), policy, tapIn(app, label), v, c})
			for _, other := range safety.Categories() {
				if other != c {
					rows = append(rows, policyRow{fmt.Sprintf("%s = %s leaves a %s at the default", c, v, other), policy,
						tapIn(app, sampleOf[other]), safety.Confirm, other})
				}
			}
		}
	}
	rows = append(rows,
		// Per app: the app's rule wins in that app, and only there; a
		// category the app does not set falls back to the global rule.
		policyRow{"an app's rule decides in that app", "[safety]\nsend = \"deny\"\n[safety.apps.\"com.tencent.mm\"]\nsend = \"allow\"\n",
			tapIn(wechat, "发送"), safety.Allow, safety.Send},
		policyRow{"an app's rule does not decide in another app", "[safety]\nsend = \"deny\"\n[safety.apps.\"com.tencent.mm\"]\nsend = \"allow\"\n",
			tapIn("com.whatsapp", "Send"), safety.Deny, safety.Send},
		policyRow{"an app's unset category falls back to the global rule", "[safety]\npayment = \"deny\"\n[safety.apps.\"com.tencent.mm\"]\nsend = \"allow\"\n",
			tapIn(wechat, "Pay now"), safety.Deny, safety.Payment},
		policyRow{"an app's rule is stricter than the global one", "[safety]\ndelete = \"allow\"\n[safety.apps.\"com.tencent.mm\"]\ndelete = \"deny\"\n",
			tapIn(wechat, "Delete"), safety.Deny, safety.Delete},
		policyRow{"with neither rule set: confirm", "[safety.apps.\"com.tencent.mm\"]\nsend = \"allow\"\n",
			tapIn(wechat, "Delete"), safety.Confirm, safety.Delete},

		// launch_app is judged by the app it launches, not the app in front.
		policyRow{"launch is judged by the launched app's rules", "[safety]\npayment = \"deny\"\n[safety.apps.\"com.eg.android.AlipayGphone\"]\npayment = \"allow\"\n",
			launchFrom(launcher, alipay), safety.Allow, safety.Payment},
		policyRow{"launch is not judged by the app in front", "[safety]\npayment = \"deny\"\n[safety.apps.\"com.google.android.apps.nexuslauncher\"]\npayment = \"allow\"\n",
			launchFrom(launcher, alipay), safety.Deny, safety.Payment},
		policyRow{"launch by name is judged by the global rule", "[safety]\npayment = \"deny\"\n[safety.apps.\"com.google.android.apps.nexuslauncher\"]\npayment = \"allow\"\n",
			launchFrom(launcher, "Alipay"), safety.Deny, safety.Payment},
		policyRow{"launch by name is judged by the named app's rules", "[safety]\npayment = \"deny\"\n[safety.apps.\"com.eg.android.AlipayGphone\"]\npayment = \"allow\"\n",
			launchFrom(launcher, "支付宝"), safety.Allow, safety.Payment},
		policyRow{"launching an ordinary app is no payment", "[safety]\npayment = \"deny\"\n",
			launchFrom(launcher, "com.android.settings"), safety.Allow, ""},

		// The strictest finding decides, whichever category it is.
		policyRow{"strictest wins: payment deny over send allow", "[safety]\nsend = \"allow\"\npayment = \"deny\"\n",
			sendOnSheet, safety.Deny, safety.Payment},
		policyRow{"strictest wins: send deny over payment allow", "[safety]\nsend = \"deny\"\npayment = \"allow\"\n",
			sendOnSheet, safety.Deny, safety.Send},
		policyRow{"strictest wins: deny over confirm", "[safety]\nsend = \"deny\"\npayment = \"confirm\"\n",
			sendOnSheet, safety.Deny, safety.Send},
		policyRow{"strictest wins: confirm over allow", "[safety]\nsend = \"allow\"\npayment = \"confirm\"\n",
			sendOnSheet, safety.Confirm, safety.Payment},
		policyRow{"all allowed: allowed, the first finding (the element's own) named", "[safety]\nsend = \"allow\"\npayment = \"allow\"\n",
			sendOnSheet, safety.Allow, safety.Send},

		// "Send money" is a payment: allowing sends does not let money go.
		policyRow{"send money is a payment", "[safety]\nsend = \"allow\"\n", tapIn(app, "Send money"), safety.Confirm, safety.Payment},
		policyRow{"send money is denied with payments", "[safety]\nsend = \"allow\"\npayment = \"deny\"\n", tapIn(app, "Send money"), safety.Deny, safety.Payment},
		policyRow{"send a message is a send", "[safety]\nsend = \"allow\"\npayment = \"deny\"\n", tapIn(app, "Send message"), safety.Allow, safety.Send},
		policyRow{"转账 is a payment, not a send", "[safety]\nsend = \"allow\"\n", tapIn(wechat, "转账"), safety.Confirm, safety.Payment},
	)
	return rows
}

// TestPolicyTable: every rule of the policy and its inverse, one row each
// (docs/safety.md, "The policy").
func TestPolicyTable(t *testing.T) {
	rows := policyRows(t)
	for _, r := range rows {
		p, err := decodePolicy(t, r.toml)
		if err != nil {
			t.Fatalf("%s: %v", r.rule, err)
		}
		g, err := safety.New(p)
		if err != nil {
			t.Fatalf("%s: %v", r.rule, err)
		}
		d := g.Check(r.action(t))
		if d.Verdict != r.want || d.Category != r.cat {
			t.Errorf("%s: %s %s (%s), want %s %s", r.rule, d.Verdict, d.Category, d.Reason, r.want, r.cat)
		}
	}
	t.Logf("%d rows", len(rows))
}
