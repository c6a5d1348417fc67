package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"phonepilot/flow"
	"phonepilot/plan"
	"phonepilot/runtime"
)

func init() { register(newFlowCmd) }

func newFlowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "flow",
		Short: "Turn a task that worked into a flow, and replay flows without a model",
		Long: `A flow is a recorded run kept as a YAML script (docs/flows.md): each step's
tool, its target named by what survives a layout change (resource-id, text,
content-desc, class, the container's labels, position among equals), the
expectation checked after it, and parameters (${query}) so one flow serves
many inputs. Replaying a flow calls no model.`,
	}
	cmd.AddCommand(newFlowExportCmd(), newFlowRunCmd())
	return cmd
}

func newFlowExportCmd() *cobra.Command {
	var config, out string
	cmd := &cobra.Command{
		Use:   "export TASK_ID [-o FILE]",
		Short: "Write a completed task as a flow",
		Long: `Write the completed task TASK_ID (or a unique prefix of it) as a flow, whichever
planner ran it. Failed attempts, refused steps, waits, questions and closed
popups are left out. Each text typed becomes a parameter with the recorded
value as its default (query for a search box, else the field's name, else
text1, text2, …). Without -o the flow goes to stdout.`,
		Example: `  phonepilot flow export t01jd5k -o taobao-search.yaml
  phonepilot flow run taobao-search.yaml --set query="iPhone 16"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, steps, _, err := recordedTask(cmd, config, args[0])
			if err != nil {
				return err
			}
			f, err := flow.Export(t, steps)
			if err != nil {
				return exitWith(1, err)
			}
			data, err := flow.Marshal(f)
			if err != nil {
				return exitWith(1, err)
			}
			if out == "" || out == "-" {
				_, err = cmd.OutOrStdout().Write(data)
				return err
			}
			if err := os.WriteFile(out, data, 0o644); err != nil {
				return exitWith(1, err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "flow of task %s (%d steps) written to %s\n", t.ID, len(f.Steps), out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (default: stdout)")
	cmd.Flags().String("db", "", dbFlagHelp)
	cmd.Flags().StringVar(&config, "config", "", configFlagHelp)
	return cmd
}

func newFlowRunCmd() *cobra.Command {
	var (
		o    runOptions
		sets []string
		heal bool
	)
	cmd := &cobra.Command{
		Use:   "run FILE [--device D] [--set key=value…]",
		Short: "Replay a flow as a task, without a model",
		Long: `Replay the flow in FILE as a task: recorded, shown on the web page and gated by
the safety policy like any run. Each step's target is found on the screen of
the moment, then the step gets run's waiting, settling, checking and retries.
No model is called.

--set name=value sets a parameter (the rest keep their defaults).

A step whose target is not on the screen, or whose expectation fails, ends
the task with a cause naming the step and what was missing. With --heal
--planner ai, the AI planner is asked for that step only (the goal, the flow
so far, the current screen); when the task completes, the flow with the
healed steps (marked healed:) is written beside FILE as FILE.healed.yaml.

Output, exit status and the other flags are run's.`,
		Example: `  phonepilot flow run taobao-search.yaml
  phonepilot flow run taobao-search.yaml --set query="iPhone 16" --json
  phonepilot flow run taobao-search.yaml --sim-layout changed --heal --planner ai --provider anthropic`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFlow(cmd, o, args[0], sets, heal)
		},
	}
	addRunFlags(cmd, &o)
	cmd.Flags().StringArrayVar(&sets, "set", nil, "set a parameter: name=value (repeatable)")
	cmd.Flags().BoolVar(&heal, "heal", false, "ask the AI planner (--planner ai) for a step that no longer fits, and write FILE.healed.yaml")
	return cmd
}

func runFlow(cmd *cobra.Command, o runOptions, file string, sets []string, heal bool) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return exitWith(2, err)
	}
	f, err := flow.Parse(data)
	if err != nil {
		return exitWith(2, fmt.Errorf("%s: %w", file, err))
	}
	params, err := flow.ParseSets(sets)
	if err != nil {
		return exitWith(2, err)
	}
	req, err := flow.Request(f, params, "")
	if err != nil {
		return exitWith(2, err)
	}
	if !heal {
		if p := cmd.Flags().Lookup("planner"); p != nil && p.Changed && p.Value.String() != plannerRule {
			return exitWith(2, errors.New("--planner is for --heal: a flow replays without a planner"))
		}
	}
	var fp *flow.Planner
	g := goalRun{goal: req.Goal, flow: req.Flow}
	g.planner = func(spec plannerSpec, od *openedDevice, log *slog.Logger) (plan.Planner, string, error) {
		opt := flow.Options{Params: params, Logger: log}
		if heal {
			if spec.Name != plannerAI {
				return nil, "", errors.New("--heal asks the AI planner: add --planner ai (and its --provider, --model, --base-url)")
			}
			healer, err := newPlanner(spec, od.Camera, od.Device, log)
			if err != nil {
				return nil, "", err
			}
			opt.Healer = healer
		}
		fp, err = flow.NewPlanner(f, opt)
		return fp, flow.PlannerName, err
	}
	g.notice = func(ctx context.Context, od *openedDevice) string {
		return flow.DriftNotice(flow.Drift(ctx, f.Recorded, od.Device))
	}
	g.done = func(res runtime.Result) (string, error) {
		healed, changed, err := fp.HealedAfter(res.Status)
		if err != nil || !changed {
			return "", err
		}
		out, err := flow.Marshal(healed)
		if err != nil {
			return "", err
		}
		path := healedPath(file)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			return "", err
		}
		if !o.json {
			fmt.Fprintf(cmd.OutOrStdout(), "healed flow written to %s\n", path)
		}
		return path, nil
	}
	return runGoal(cmd, o, g)
}

// healedPath is where the healed flow of file goes: beside it,
// taobao.yaml → taobao.healed.yaml.
func healedPath(file string) string {
	ext := filepath.Ext(file)
	base := strings.TrimSuffix(file, ext)
	if ext == "" {
		ext = ".yaml"
	}
	return base + ".healed" + ext
}
