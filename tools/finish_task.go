package tools

import (
	"context"
	"errors"
)

// FinishTask is the name of the finish_task tool.
const FinishTask = "finish_task"

// FinishTaskArgs are finish_task's arguments.
type FinishTaskArgs struct {
	Success *bool  `json:"success"`
	Reason  string `json:"reason"`
}

// Finish is the end of a task as the model declared it with finish_task.
type Finish struct {
	Success bool
	Reason  string
}

var finishTaskTool = register(&Tool{
	name:        FinishTask,
	description: "End the task. This is the only way to finish: call it with success=true once the goal is visibly achieved on the screen, or success=false with the reason when the goal cannot be achieved. Replying without a tool call does not end the task.",
	schemaText: `{
  "type": "object",
  "properties": {
    "success": {"type": "boolean", "description": "true if the goal was achieved, false if it cannot be."},
    "reason": {"type": "string", "description": "A short explanation: what shows the goal is achieved, or why it cannot be."}
  },
  "required": ["success", "reason"],
  "additionalProperties": false
}`,
	example: Example{`{"success":true,"reason":"results for Mac mini are shown"}`, `task succeeded: results for Mac mini are shown`},
	run: func(_ context.Context, _ *runEnv, c Call) (Result, error) {
		f, err := finishOf(c)
		if err != nil {
			return Result{}, &ArgError{Tool: FinishTask, Arg: "success", Msg: err.Error()}
		}
		outcome := "failed"
		if f.Success {
			outcome = "succeeded"
		}
		return Result{Text: "task " + outcome + ": " + oneLine(f.Reason, 120), Finish: &f}, nil
	},
	intent: func(c Call, _ string) string {
		f, _ := finishOf(c)
		if f.Success {
			return "finish: done (" + oneLine(f.Reason, 120) + ")"
		}
		return "finish: failed (" + oneLine(f.Reason, 120) + ")"
	},
	finish:  finishOf,
	passive: true,
})

func finishOf(c Call) (Finish, error) {
	a, err := ArgsOf[FinishTaskArgs](c)
	if err != nil {
		return Finish{}, err
	}
	if a.Success == nil {
		return Finish{}, errors.New(`missing "success"`)
	}
	return Finish{Success: *a.Success, Reason: a.Reason}, nil
}
