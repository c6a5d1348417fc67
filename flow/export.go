package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"phonepilot/lifecycle"
	"phonepilot/plan"
	"phonepilot/plan/rule"
	"phonepilot/scene"
	"phonepilot/storage"
	"phonepilot/task"
	"phonepilot/tools"
)

// ErrNotExportable: the task did not complete, or left no step to replay.
var ErrNotExportable = errors.New("flow: cannot export")

// Export turns a completed task's recorded steps into a flow, whichever
// planner ran it. Failed attempts and refused or cancelled steps are left
// out, and so are waits (the Executor waits for each target), questions to
// a person, and the closing of popups (the replay closes those that show,
// as the rule planner does). Each text typed becomes a parameter whose
// default is the recorded value, named after its field where that is
// clear (query for a search box), else text1, text2, …
func Export(t storage.Task, steps []storage.Step) (*Flow, error) {
	if t.Status != lifecycle.Completed {
		reason := ""
		if t.Reason != "" {
			reason = " (" + t.Reason + ")"
		}
		return nil, fmt.Errorf("%w: task %s is %s%s; only a completed task is a flow", ErrNotExportable, t.ID, t.Status, reason)
	}
	f := &Flow{Version: Version, Goal: t.Goal, Params: map[string]Param{},
		Recorded: &Recorded{Task: t.ID, Planner: t.Planner, Device: t.Device, Locale: localeOf(t.Config), At: t.Created.UTC()}}
	vals := map[string]string{} // parameter → the recorded value
	var apps []string
	var history []storage.Step
	for _, st := range steps {
		if st.Status != lifecycle.StepSucceeded {
			continue
		}
		var sc *scene.Scene
		if len(st.Scene) > 0 && string(st.Scene) != "null" {
			sc = new(scene.Scene)
			if err := json.Unmarshal(st.Scene, sc); err != nil {
				return nil, fmt.Errorf("flow: export: step %d's scene: %w", st.Number, err)
			}
			if f.Recorded.Screen == "" && sc.Width > 0 {
				f.Recorded.Screen = fmt.Sprintf("%dx%d", sc.Width, sc.Height)
			}
			if sc.Package != "" && !slices.Contains(apps, sc.Package) && !sc.OnHomeScreen() {
				apps = append(apps, sc.Package)
			}
		}
		if skip(st, sc, history) {
			history = append(history, st)
			continue
		}
		history = append(history, st)
		s := Step{}
		if text, ok := typed(st.Call); ok && text != "" {
			name := paramFor(sc, st.Call, vals)
			vals[name] = text
			f.Params[name] = Param{Default: text}
			s = stepOf(st.Call, sc, vals)
			// The step line shows the value a run types (--set), not the
			// recorded one.
			s.Intent = strings.Replace(cleanIntent(st.Intent), strconv.Quote(text), `"${`+name+`}"`, 1)
		} else {
			s = stepOf(st.Call, sc, vals)
			s.Intent = cleanIntent(st.Intent)
		}
		f.Steps = append(f.Steps, s)
	}
	if len(f.Steps) == 0 {
		return nil, fmt.Errorf("%w: task %s has no step to replay", ErrNotExportable, t.ID)
	}
	fromTheStart(&f.Steps[0])
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		if v := vals[name]; strings.Contains(f.Goal, v) {
			f.Goal = strings.ReplaceAll(f.Goal, v, "${"+name+"}")
		}
	}
	if len(f.Params) == 0 {
		f.Params = nil
	}
	// The device's own answers, recorded by the task service when the task
	// ended (tasks before that, or on a device that cannot say, have none).
	info := task.DeviceInfoOf(t.Config)
	if info.Locale != "" {
		f.Recorded.Locale = info.Locale
	}
	for _, pkg := range apps {
		a := App{Package: pkg}
		for _, ai := range info.Apps {
			if ai.Package == pkg {
				a.Version = ai.Version
			}
		}
		f.Recorded.Apps = append(f.Recorded.Apps, a)
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("flow: export of task %s: %w", t.ID, err)
	}
	return f, nil
}

// fromTheStart makes a flow that opens with launch_app start that app from
// its first screen (stop: true), whatever screen the last task left it on
// (Maestro's launchApp with stopApp). A flow recorded from inside an app,
// with no launch first, starts where the phone is.
func fromTheStart(s *Step) {
	t, ok := tools.Lookup(s.Tool)
	if call, err := s.call(nil); !ok || err != nil || t.Act(call).Kind != tools.ActLaunch {
		return
	}
	if s.Args == nil {
		s.Args = map[string]any{}
	}
	s.Args["stop"] = true
	if app, ok := s.Args["app"].(string); ok && s.Intent == "launch "+app {
		s.Intent = "launch " + app + " from its start"
	}
}

// skip says which recorded steps a flow leaves out.
func skip(st storage.Step, sc *scene.Scene, before []storage.Step) bool {
	t, ok := tools.Lookup(st.Call.Name)
	switch {
	case !ok, t.Ends(), t.Passive(): // finish_task; a wait (the replay waits for each target)
		return true
	}
	if _, asks, _ := tools.Question(st.Call); asks {
		return true
	}
	// A popup closed: the replay closes it when (and only when) it shows.
	if idx, ok := tools.ElementArg(st.Call); ok && sc != nil {
		hist := make([]plan.StepRecord, 0, len(before))
		for _, b := range before {
			hist = append(hist, b.StepRecord)
		}
		if ps, ok := rule.DismissPopup(sc, hist); ok && ps.Target != nil {
			if el, found := sc.Resolve(*ps.Target); found && (el.Index == idx || descends(sc, scene.Element{Index: idx, Parent: parentOf(sc, idx)}, el.Index)) {
				return true
			}
		}
	}
	return false
}

func parentOf(sc *scene.Scene, i int) int {
	if e, ok := sc.Element(i); ok {
		return e.Parent
	}
	return -1
}

// stepOf is the flow step of a call on sc: the element index becomes a
// selector, a parameter's value in a text becomes ${name}, and the
// expectation is the call's own effect, written out.
func stepOf(call tools.Call, sc *scene.Scene, vals map[string]string) Step {
	var args map[string]any
	_ = json.Unmarshal(call.Args, &args)
	s := Step{Tool: call.Name}
	if idx, ok := tools.ElementArg(call); ok {
		delete(args, "element")
		if el, found := sc.Element(idx); found {
			sel := SelectorFor(sc, el)
			s.Target = &sel
		}
	}
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		v := vals[name]
		if txt, ok := args["text"].(string); ok && txt == v {
			args["text"] = "${" + name + "}"
		}
	}
	if len(args) > 0 {
		s.Args = args
	}
	if t, ok := tools.Lookup(call.Name); ok {
		if act := t.Act(call); act.Kind == tools.ActLaunch && act.App != "" {
			// Launching expects its app in front.
			s.Expect = &Expect{App: act.App}
			return s
		}
	}
	switch x := plan.ExpectationOf(call); x.Kind {
	case "changed":
		s.Expect = &Expect{Changed: true}
	case "field_text":
		s.Expect = &Expect{FieldText: x.Text}
		if t, ok := s.Args["text"].(string); ok {
			s.Expect.FieldText = t // the ${name} form
		}
	default:
		s.Expect = &Expect{None: true}
	}
	return s
}

// typed is the text a call types, if it types one.
func typed(c tools.Call) (string, bool) {
	t, ok := tools.Lookup(c.Name)
	if !ok {
		return "", false
	}
	act := t.Act(c)
	return act.Text, act.Kind == tools.ActType
}

var searchy = []string{"search", "query", "keyword", "搜索", "查找", "搜"}

// fieldWord cleans an id into a parameter name: "login_phone_edit" → "login_phone".
var fieldWord = regexp.MustCompile(`(?i)(^|_)(edit|edittext|input|field|text|et|box|view)$`)

// paramFor names the parameter of a typed text: query for a search box,
// the field's id where it says something (phone, code), else textN.
func paramFor(sc *scene.Scene, call tools.Call, taken map[string]string) string {
	var el scene.Element
	found := false
	if idx, ok := tools.ElementArg(call); ok && sc != nil {
		el, found = sc.Element(idx)
	} else if sc != nil {
		el, found = sc.Focused()
	}
	name := ""
	if found {
		hay := strings.ToLower(el.ResourceID + " " + el.Text + " " + el.Desc)
		for _, w := range searchy {
			if strings.Contains(hay, w) {
				name = "query"
				break
			}
		}
		if name == "" {
			id := strings.ToLower(scene.IDName(el.ResourceID))
			for fieldWord.MatchString(id) {
				id = fieldWord.ReplaceAllString(id, "")
			}
			if paramName.MatchString(id) && len(id) >= 2 {
				name = id
			}
		}
	}
	if name != "" {
		if _, dup := taken[name]; !dup {
			return name
		}
	}
	for n := 1; ; n++ {
		if _, dup := taken[fmt.Sprintf("text%d", n)]; !dup {
			return fmt.Sprintf("text%d", n)
		}
	}
}

// localeOf reads the simulator's locale from a task's config snapshot.
func localeOf(cfg json.RawMessage) string {
	var c struct {
		Sim *struct {
			Locale string `json:"locale"`
		} `json:"sim"`
	}
	if json.Unmarshal(cfg, &c) != nil || c.Sim == nil {
		return ""
	}
	if c.Sim.Locale == "" {
		return "en"
	}
	return c.Sim.Locale
}

// elementRef is an element index in an intent line ("tap [5] Button"):
// meaningless on another screen, so a flow leaves it out.
var elementRef = regexp.MustCompile(`\[\d+\] `)

func cleanIntent(s string) string { return elementRef.ReplaceAllString(s, "") }
