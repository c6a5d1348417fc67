package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"phonepilot/lifecycle"
	"phonepilot/storage"
	"phonepilot/task"
)

func init() { register(newShowCmd) }

func newShowCmd() *cobra.Command {
	var (
		config string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a recorded task and its steps",
		Long: `Show a recorded task, its cause when it did not complete, and its steps.
ID may be any unique prefix of the task's id ("phonepilot tasks" lists them).`,
		Example: `  phonepilot show t01jd5k2m8x9q7r3s4t5v
  phonepilot show t01jd5k
  phonepilot show t01jd5k2m8x9q7r3s4t5v --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			found, steps, waited, err := recordedTask(cmd, config, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSONOut(cmd.OutOrStdout(), map[string]any{"task": found, "steps": steps, "waited_ns": waited})
			}
			printTask(cmd.OutOrStdout(), found, steps, waited)
			return nil
		},
	}
	cmd.Flags().String("db", "", dbFlagHelp)
	cmd.Flags().StringVar(&config, "config", "", configFlagHelp)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (steps include their Scene)")
	return cmd
}

func printTask(w io.Writer, t storage.Task, steps []storage.Step, waited time.Duration) {
	fmt.Fprintf(w, "task     %s\n", t.ID)
	fmt.Fprintf(w, "goal     %s\n", t.Goal)
	fmt.Fprintf(w, "device   %s   planner %s   max steps %d\n", t.Device, t.Planner, t.MaxSteps)
	status := string(t.Status)
	if t.Cause != lifecycle.CauseNone {
		status += " (" + string(t.Cause) + ")"
	}
	if t.Reason != "" {
		status += ": " + t.Reason
	}
	fmt.Fprintf(w, "status   %s\n", status)
	spent := took(t)
	if waited > 0 {
		spent += fmt.Sprintf(" (%s of it waiting for a person)", waited.Round(10*time.Millisecond))
	}
	fmt.Fprintf(w, "created  %s   took %s\n", t.Created.Local().Format(time.DateTime), spent)
	if tk := t.Usage.Tokens(); tk != "" {
		fmt.Fprintf(w, "tokens   %s\n", tk)
	}
	if len(steps) == 0 {
		fmt.Fprintln(w, "no steps recorded")
		return
	}
	fmt.Fprintln(w)
	for _, s := range steps {
		fmt.Fprintf(w, "%3d  %-9s %-8s %s\n", s.Number, s.Status, s.Duration.Round(time.Millisecond), s.Intent)
		fmt.Fprintf(w, "     %s\n", s.Call.String())
		for _, a := range s.Attempts {
			fmt.Fprintf(w, "     try %d: %s\n", a.Number, oneLine(a.Result, 100))
		}
		if s.Reason != "" && s.Status != lifecycle.StepSucceeded {
			fmt.Fprintf(w, "     reason: %s\n", oneLine(s.Reason, 100))
		}
	}
}

// recordedTask reads the recorded task that id (or a unique prefix of it)
// names, with its steps, from the store --db and --config point at
// (show, flow export), and how long it waited for a person. Its errors
// carry their exit codes.
func recordedTask(cmd *cobra.Command, configPath, id string) (storage.Task, []storage.Step, time.Duration, error) {
	db, err := resolveDB(cmd, configPath)
	if err != nil {
		return storage.Task{}, nil, 0, exitWith(2, err)
	}
	store, err := openStore(cmd.Context(), db)
	if err != nil {
		return storage.Task{}, nil, 0, exitWith(1, err)
	}
	defer store.Close()
	t, err := task.Find(cmd.Context(), store, id)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return storage.Task{}, nil, 0, exitWith(1, fmt.Errorf("no task %q (phonepilot tasks lists them)", id))
	case errors.Is(err, task.ErrAmbiguous):
		return storage.Task{}, nil, 0, exitWith(2, err)
	case err != nil:
		return storage.Task{}, nil, 0, exitWith(1, err)
	}
	steps, err := store.Steps(cmd.Context(), t.ID)
	if err != nil {
		return storage.Task{}, nil, 0, exitWith(1, err)
	}
	return t, steps, t.WaitedAt(time.Now()), nil
}
