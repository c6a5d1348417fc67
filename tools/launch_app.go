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
	// Stop force-stops the app first, so it opens on its first screen
	// whatever the last task left (Maestro's launchApp with stopApp): how a
	// flow starts.
	Stop bool `json:"stop,omitempty"`
}

var launchAppTool = register(&Tool{
	name:        LaunchApp,
	description: "Start an app, or bring it to the front, by the name a user knows it by (\"Taobao\", \"淘宝\", \"Settings\", \"设置\") or by its package name (\"com.taobao.taobao\").",
	schemaText: `{
  "type": "object",
  "properties": {
    "app": {"type": "string", "minLength": 1, "description": "The app's name as shown to users, or its Android package name."},
    "stop": {"type": "boolean", "description": "Stop the app first, so it opens on its first screen instead of where it was left."}
  },
  "required": ["app"],
  "additionalProperties": false
}`,
	example: Example{`{"app":"Taobao"}`, `launched Taobao`},
	inputs: func(c Call, _ *runEnv) []Input {
		a := args[LaunchAppArgs](c)
		launch := Input{Kind: InputLaunch, On: -1, Hit: -1, App: a.App, what: fmt.Sprintf("launch_app %q", a.App)}
		if !a.Stop {
			return []Input{launch}
		}
		return []Input{{Kind: InputStop, On: -1, Hit: -1, App: a.App, what: fmt.Sprintf("launch_app %q: stop it first", a.App)}, launch}
	},
	run: func(_ context.Context, _ *runEnv, c Call) (Result, error) {
		a := args[LaunchAppArgs](c)
		if a.Stop {
			return Result{Text: "stopped and launched " + oneLine(a.App, 60)}, nil
		}
		return Result{Text: "launched " + oneLine(a.App, 60)}, nil
	},
	intent: func(c Call, _ string) string {
		a := args[LaunchAppArgs](c)
		if a.Stop {
			return "launch " + a.App + " from its start"
		}
		return "launch " + a.App
	},
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
})
