package tools

import (
	"context"
	"fmt"

	"phonepilot/apps"
)

// LaunchApp is the name of the launch_app tool.
const LaunchApp = "launch_app"

// LaunchAppArgs are launch_app's arguments.
type LaunchAppArgs struct {
	App string `json:"app"`
}

var launchAppTool = &Tool{
	name:        LaunchApp,
	description: "Start an app, or bring it to the front, by the name a user knows it by (\"Taobao\", \"淘宝\", \"Settings\", \"设置\") or by its package name (\"com.taobao.taobao\").",
	schemaText: `{
  "type": "object",
  "properties": {
    "app": {"type": "string", "minLength": 1, "description": "The app's name as shown to users, or its Android package name."}
  },
  "required": ["app"],
  "additionalProperties": false
}`,
	example: Example{`{"app":"Taobao"}`, `launched Taobao`},
	inputs: func(c Call, _ *runEnv) []Input {
		app := args[LaunchAppArgs](c).App
		return []Input{{Kind: InputLaunch, On: -1, Hit: -1, App: app, what: fmt.Sprintf("launch_app %q", app)}}
	},
	run: func(_ context.Context, _ *runEnv, c Call) (Result, error) {
		return Result{Text: "launched " + oneLine(args[LaunchAppArgs](c).App, 60)}, nil
	},
	intent: func(c Call, _ string) string { return "launch " + args[LaunchAppArgs](c).App },
	act:    func(c Call) Act { return Act{Kind: ActLaunch, App: args[LaunchAppArgs](c).App} },
	effect: func(Call) Effect { return Effect{Kind: EffectChange} },
	// The app in front is the effect, also when it was in front already
	// (nothing on the screen changes then).
	changed: func(c Call, o Outcome) (bool, string) {
		if o.Changed || (o.After != nil && apps.InFront(o.After.Package, args[LaunchAppArgs](c).App)) {
			return true, ""
		}
		return false, "the screen did not change"
	},
	// Launched already: the app is in front, or another app came to the
	// front (a name the table does not know resolves to some package).
	tookEffect: func(c Call, o Outcome) bool {
		if o.After == nil || o.Before == nil {
			return false
		}
		return apps.InFront(o.After.Package, args[LaunchAppArgs](c).App) || o.After.Package != o.Before.Package
	},
}
