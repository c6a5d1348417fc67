package safety

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Rules say what to do with each category. An empty value is unset: it
// falls back to the next level (an app's rules → the global rules →
// confirm).
type Rules struct {
	Payment    Verdict `toml:"payment" json:"payment,omitempty"`
	Delete     Verdict `toml:"delete" json:"delete,omitempty"`
	Send       Verdict `toml:"send" json:"send,omitempty"`
	Account    Verdict `toml:"account" json:"account,omitempty"`
	Permission Verdict `toml:"permission" json:"permission,omitempty"`
	Install    Verdict `toml:"install" json:"install,omitempty"`
	Call       Verdict `toml:"call" json:"call,omitempty"`
}

// For returns the rule for c ("" when unset or c is unknown).
func (r Rules) For(c Category) Verdict {
	if v := r.field(c); v != nil {
		return *v
	}
	return ""
}

// Set sets the rule for c; an unknown category is left alone (callers
// check names against Categories first).
func (r *Rules) Set(c Category, v Verdict) {
	if f := r.field(c); f != nil {
		*f = v
	}
}

// field is the rule of c in r, nil for an unknown category: the one place
// that maps a category to its field.
func (r *Rules) field(c Category) *Verdict {
	switch c {
	case Payment:
		return &r.Payment
	case Delete:
		return &r.Delete
	case Send:
		return &r.Send
	case Account:
		return &r.Account
	case Permission:
		return &r.Permission
	case Install:
		return &r.Install
	case Call:
		return &r.Call
	}
	return nil
}

// Policy is what the user wrote about gated actions: the `[safety]`
// section of phonepilot.toml.
//
//	[safety]
//	payment = "deny"
//	send = "confirm"
//
//	[safety.apps."com.tencent.mm"]
//	send = "allow"
//
// The zero Policy confirms every category everywhere.
type Policy struct {
	Rules
	// Apps override the rules in the app in front, by package name.
	Apps map[string]Rules `toml:"apps" json:"apps,omitempty"`
}

// ErrPolicy is wrapped by every error Validate returns.
var ErrPolicy = errors.New("safety policy")

// Validate names the first bad value: a verdict that is not allow,
// confirm or deny, or an empty package name.
func (p Policy) Validate() error {
	if err := p.Rules.validate("safety"); err != nil {
		return err
	}
	pkgs := make([]string, 0, len(p.Apps))
	for pkg := range p.Apps {
		pkgs = append(pkgs, pkg)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		if strings.TrimSpace(pkg) == "" || strings.ContainsAny(pkg, " \t/") {
			return fmt.Errorf("%w: safety.apps: %q is not a package name", ErrPolicy, pkg)
		}
		if err := p.Apps[pkg].validate(fmt.Sprintf("safety.apps.%q", pkg)); err != nil {
			return err
		}
	}
	return nil
}

func (r Rules) validate(where string) error {
	for _, c := range categoryOrder {
		switch v := r.For(c); v {
		case "", Allow, Confirm, Deny:
		default:
			return fmt.Errorf("%w: %s.%s = %q: want %q, %q or %q", ErrPolicy, where, c, string(v), Allow, Confirm, Deny)
		}
	}
	return nil
}

// Verdict is the rule for category c in the app pkg: the app's own rule,
// else the global one, else confirm.
func (p Policy) Verdict(pkg string, c Category) Verdict {
	if r, ok := p.Apps[pkg]; ok {
		if v := r.For(c); v != "" {
			return v
		}
	}
	if v := p.Rules.For(c); v != "" {
		return v
	}
	return Confirm
}
