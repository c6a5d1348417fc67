package plan

import "phonepilot/tools"

// ExpectationOf is what a call's own tool expects of the screen after it,
// for a step that states nothing more specific (the AIPlanner, an MCP
// client, a flow step without `expect`): a change for inputs, the text in
// the field for typing without submit, nothing for scroll and wait (the
// next Scene judges those).
func ExpectationOf(call tools.Call) Expectation {
	t, ok := tools.Lookup(call.Name)
	if !ok {
		return Expectation{}
	}
	switch eff := t.Effect(call); eff.Kind {
	case tools.EffectChange:
		return Expectation{Kind: ExpectChanged}
	case tools.EffectFieldText:
		return Expectation{Kind: ExpectFieldText, Text: eff.Text}
	}
	return Expectation{}
}
