package flow

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"phonepilot/task"
)

// Bind returns a copy of f with every ${name} replaced: by values[name],
// else the parameter's default. A value for a parameter the flow does not
// declare, or a parameter with neither, is an error wrapping ErrParams.
func (f *Flow) Bind(values map[string]string) (*Flow, error) {
	for k := range values {
		if _, ok := f.Params[k]; !ok {
			return nil, fmt.Errorf("%w: the flow has no parameter %q (it has: %s)", ErrParams, k, f.paramList())
		}
	}
	vals := f.defaults(false)
	maps.Copy(vals, values)
	for _, name := range slices.Sorted(maps.Keys(f.Params)) {
		if _, ok := vals[name]; !ok {
			return nil, fmt.Errorf("%w: %q has no default; set it with --set %s=VALUE", ErrParams, name, name)
		}
	}
	out := *f
	out.Goal = substitute(f.Goal, vals)
	// The goal a task carries is the bound one: checked as every goal is,
	// after the parameters are in it.
	if err := task.CheckGoal(out.Goal, 0); err != nil {
		return nil, fmt.Errorf("%w: the goal with the parameters bound: %w", ErrParams, err)
	}
	out.Steps = make([]Step, len(f.Steps))
	for i, s := range f.Steps {
		s.Intent = f.boundIntent(s, vals)
		s.Args, _ = substituteAny(s.Args, vals).(map[string]any)
		s.Target = s.Target.substitute(vals)
		if s.Expect != nil {
			x := *s.Expect
			x.App, x.FieldText = substitute(x.App, vals), substitute(x.FieldText, vals)
			x.Present, x.Gone = x.Present.substitute(vals), x.Gone.substitute(vals)
			s.Expect = &x
		}
		out.Steps[i] = s
	}
	return &out, nil
}

// boundIntent is s's step line with the run's values: its ${name}s
// replaced, and in a line written without them (a flow exported before
// intents named parameters) the default of the parameter the step types
// replaced by the value set, so the line shows what is typed.
func (f *Flow) boundIntent(s Step, vals map[string]string) string {
	if strings.Contains(s.Intent, "${") {
		return substitute(s.Intent, vals)
	}
	ref, _ := s.Args["text"].(string)
	if m := paramRef.FindStringSubmatch(ref); m != nil && m[0] == ref {
		if def := f.Params[m[1]].Default; def != "" && vals[m[1]] != def {
			return strings.Replace(s.Intent, strconv.Quote(def), strconv.Quote(vals[m[1]]), 1)
		}
	}
	return s.Intent
}

// defaults are the parameters' defaults; with placeholder, a parameter
// without one gets a stand-in value (for validating arguments).
func (f *Flow) defaults(placeholder bool) map[string]string {
	out := map[string]string{}
	for name, p := range f.Params {
		switch {
		case p.Default != "":
			out[name] = p.Default
		case placeholder:
			out[name] = "x"
		}
	}
	return out
}

func (f *Flow) paramList() string {
	if len(f.Params) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(f.Params)), ", ")
}

// ParseSets reads --set key=value pairs.
func ParseSets(sets []string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range sets {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: --set %q: want name=value", ErrParams, kv)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%w: --set %s given twice", ErrParams, k)
		}
		out[k] = v
	}
	return out, nil
}

func substitute(s string, vals map[string]string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return paramRef.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := vals[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

func substituteAny(v any, vals map[string]string) any {
	switch x := v.(type) {
	case string:
		return substitute(x, vals)
	case map[string]any:
		if x == nil {
			return nil
		}
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = substituteAny(val, vals)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = substituteAny(val, vals)
		}
		return out
	}
	return v
}

func (s *Selector) substitute(vals map[string]string) *Selector {
	if s == nil {
		return nil
	}
	c := *s
	c.ID, c.Text, c.Desc = substitute(s.ID, vals), substitute(s.Text, vals), substitute(s.Desc, vals)
	c.Container = slices.Clone(s.Container)
	for i := range c.Container {
		c.Container[i] = substitute(c.Container[i], vals)
	}
	return &c
}
