package tasks

// The tools of TOOLS.md a Step names (tools' own constants; the names are a
// contract outside the project, so they are spelled here too and a test
// holds them equal).
const (
	ToolLaunchApp  = "launch_app"
	ToolTap        = "tap"
	ToolLongPress  = "long_press"
	ToolTypeText   = "type_text"
	ToolScroll     = "scroll"
	ToolPressKey   = "press_key"
	ToolWait       = "wait"
	ToolFinishTask = "finish_task"
)

// Small constructors keep each task's script one line per intent.

func launch(app string) Step {
	return Step{Intent: "open " + app, Tool: ToolLaunchApp, Args: map[string]any{"app": app}}
}

func tap(intent, target string) Step {
	return Step{Intent: intent, Tool: ToolTap, Target: target}
}

// tapIfShown taps target when the current screen lists it and moves on
// when it does not (a popup that may or may not be there): no scrolling.
func tapIfShown(intent, target string) Step {
	return Step{Intent: intent, Tool: ToolTap, Target: target, IfMissing: "skip", Here: true}
}

// typeInto replaces the content of the field labelled target with text,
// pressing Enter afterwards when submit is true.
func typeInto(intent, target, text string, submit bool) Step {
	args := map[string]any{"text": text}
	if submit {
		args["submit"] = true
	}
	return Step{Intent: intent, Tool: ToolTypeText, Target: target, Args: args}
}

func key(intent, k string) Step {
	return Step{Intent: intent, Tool: ToolPressKey, Args: map[string]any{"key": k}}
}

func done(reason string) Step {
	return Step{Intent: "the goal is reached", Tool: ToolFinishTask, Args: map[string]any{"success": true, "reason": reason}}
}

// doneShowing finishes on what the screen shows: the element labelled
// shows, which the claim rests on (Step.Shows).
func doneShowing(reason, shows string) Step {
	st := done(reason)
	st.Shows = shows
	return st
}

func giveUp(reason string) Step {
	return Step{Intent: "the goal cannot be reached", Tool: ToolFinishTask, Args: map[string]any{"success": false, "reason": reason}}
}

// tr picks the label of locale: en, or zh for "zh".
func tr(locale, en, zh string) string {
	if locale == "zh" {
		return zh
	}
	return en
}

func boolp(v bool) *bool { return &v }
