package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"phonepilot/device"
	"phonepilot/device/adb"
)

func init() { register(newDoctorCmd) }

// doctorReport is `phonepilot doctor --json`: what a user attaches to an issue.
type doctorReport struct {
	Device string         `json:"device"`
	OK     bool           `json:"ok"`
	Checks []device.Check `json:"checks"`
	// Trial is the helper trial (--trial): a phone over adb only.
	Trial *adb.TrialReport `json:"trial,omitempty"`
}

// helperTrialer is a phone that can run the helper trial (device/adb).
type helperTrialer interface {
	HelperTrial(ctx context.Context, cfg adb.TrialConfig) *adb.TrialReport
}

// doctorOptions are doctor's own flags.
type doctorOptions struct {
	asJSON bool
	trial  bool   // run the helper trial after the checks
	out    string // write the trial's dump, tree and screenshot here
}

// newDoctorCmd is `phonepilot doctor`: one table of checks of a phone's
// setup, each with its fix; exit 0 when every check passes.
func newDoctorCmd() *cobra.Command {
	var spec string
	var do doctorOptions
	var o deviceOptions
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check a phone's setup for phonepilot, with the fix for each problem",
		Long: `Check a phone's setup: adb authorised, screen on and unlocked, Android
version, display size and density, phonepilot's helper starts and answers
(with its tree time), how text will be typed, input injection allowed, and
the UiAutomation free. Each failed check says how to fix it. --json prints a
report to attach to an issue. Exit status 0 when every check passes, 1
otherwise (docs/device-helper.md).

--trial then checks the helper against the phone's own uiautomator: one
` + "`uiautomator dump`" + `, the helper pushed and started, 20 timed trees each
compared with that dump, 5 timed screenshots, the app in front started 3
times through the helper (timed) and once with monkey, the helper stopped
(its socket gone, uiautomator dumping again). Keep the phone on one still
screen (a settings page) while it runs; --out DIR keeps the dump, the helper's tree and a screenshot to
attach with the --json report.`,
		Example: `  phonepilot doctor --device adb
  phonepilot doctor --device adb:R58M123456 --json
  phonepilot doctor --device adb --trial --json --out trial > trial/report.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
			defer cancel()
			if do.out != "" && !do.trial {
				return exitWith(2, errors.New("--out keeps the trial's files: give --trial"))
			}
			return runDoctor(ctx, spec, o, do, cmd.OutOrStdout())
		},
	}
	addDeviceFlags(cmd, &spec, &o)
	cmd.Flags().Lookup("device").DefValue = "adb"
	cmd.Flags().Set("device", "adb")
	cmd.Flags().BoolVar(&do.asJSON, "json", false, "print the report as JSON")
	cmd.Flags().BoolVar(&do.trial, "trial", false, "then run the helper trial: 20 timed trees compared with one uiautomator dump, 5 screenshots, 3 timed launches of the app in front, the stop checked")
	cmd.Flags().StringVar(&do.out, "out", "", "with --trial: write the uiautomator dump, the helper's tree and a screenshot into this directory")
	return cmd
}

func runDoctor(ctx context.Context, spec string, o deviceOptions, do doctorOptions, out io.Writer) error {
	rep := doctorReport{Device: spec}
	od, err := openDevice(ctx, spec, o)
	if err != nil {
		rep.Checks = []device.Check{{Name: "device reachable", OK: false, Detail: err.Error(),
			Fix: "`phonepilot devices` lists the phones adb sees; \"unauthorized\": accept the USB debugging prompt on the phone; \"offline\": reconnect the cable"}}
	} else {
		defer od.Close()
		rep.Device = od.Name
		if c, ok := od.Device.(device.Checkuper); ok {
			rep.Checks = c.Checkup(ctx)
		} else {
			rep.Checks = []device.Check{{Name: "device reachable", OK: true, Detail: od.Name + " has no setup to check"}}
		}
		if do.trial {
			if tr, ok := od.Device.(helperTrialer); ok {
				rep.Trial = tr.HelperTrial(ctx, adb.DefaultTrial)
			} else {
				rep.Checks = append(rep.Checks, device.Check{Name: "helper trial", OK: false, Detail: od.Name + " runs no helper",
					Fix: "the trial is for a phone over adb: --device adb or adb:SERIAL"})
			}
		}
	}
	rep.OK = rep.Trial == nil || rep.Trial.OK
	for _, c := range rep.Checks {
		rep.OK = rep.OK && c.OK
	}
	if do.out != "" && rep.Trial != nil {
		if err := writeTrialFiles(do.out, rep.Trial); err != nil {
			return err
		}
	}
	if do.asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(out, "phonepilot doctor: %s\n\n", rep.Device)
		for _, c := range rep.Checks {
			mark := "ok  "
			if !c.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(out, "%s  %-26s %s\n", mark, c.Name, c.Detail)
			if !c.OK && c.Fix != "" {
				fmt.Fprintf(out, "      %-26s fix: %s\n", "", c.Fix)
			}
		}
		if rep.Trial != nil {
			printTrial(out, rep.Trial)
		}
		if rep.OK {
			fmt.Fprintln(out, "\nevery check passed")
		}
	}
	if !rep.OK {
		return exitWith(1, errors.New("some checks failed: see the fixes above"))
	}
	return nil
}

// printTrial writes the helper trial's lines under doctor's table.
func printTrial(out io.Writer, r *adb.TrialReport) {
	fmt.Fprintf(out, "\nhelper trial (keep the phone on one still screen)\n")
	line := func(name, detail string) { fmt.Fprintf(out, "      %-26s %s\n", name, detail) }
	line("uiautomator dump", orError(r.Dump.Error, fmt.Sprintf("%v, %d nodes", r.Dump.Took, r.Dump.Nodes)))
	push := fmt.Sprintf("%d bytes pushed in %v", r.Push.Bytes, r.Push.Took)
	if !r.Push.Pushed {
		push = "already on the phone"
	}
	line("push", orError(r.Push.Error, push))
	line("start", orError(r.Start.Error, fmt.Sprintf("pid %d, protocol %d, API %d, answering after %v", r.Start.PID, r.Start.Proto, r.Start.SDK, r.Start.Took)))
	if r.Trees.Read > 0 || r.Trees.Error != "" {
		line(fmt.Sprintf("%d trees", r.Trees.Read), orError(r.Trees.Error, fmt.Sprintf("%v; %d identical to the dump", r.Trees.Time, r.Trees.Identical)))
	}
	if r.Trees.Diff != nil {
		line("", "differs: "+r.Trees.Diff.String())
	}
	if r.Shots.Taken > 0 || r.Shots.Error != "" {
		line(fmt.Sprintf("%d screenshots", r.Shots.Taken), orError(r.Shots.Error, fmt.Sprintf("%dx%d, %v", r.Shots.Width, r.Shots.Height, r.Shots.Time)))
	}
	switch {
	case r.Launch.Started > 0 || r.Launch.Error != "":
		monkey := fmt.Sprintf("monkey %v", r.Launch.Monkey)
		if r.Launch.MonkeyError != "" {
			monkey = "monkey failed: " + r.Launch.MonkeyError
		}
		line(fmt.Sprintf("%d launches", r.Launch.Started), orError(r.Launch.Error, fmt.Sprintf("%s: %v; %s", r.Launch.Component, r.Launch.Time, monkey)))
	case r.Launch.Skipped != "":
		line("launch", "skipped: "+r.Launch.Skipped)
	}
	stop := "its socket is gone and uiautomator dumps again"
	if !r.Stop.SocketGone {
		stop = "its socket is still listening"
	}
	line("stop", orError(r.Stop.Error, stop))
	if r.OK {
		fmt.Fprintln(out, "      the trial passed")
		return
	}
	for _, p := range r.Problems {
		fmt.Fprintf(out, "FAIL  %s\n", p)
	}
	fmt.Fprintln(out, "      attach `phonepilot doctor --trial --json --out DIR` and DIR's files to an issue")
}

func orError(err, ok string) string {
	if err != "" {
		return "FAIL " + err
	}
	return ok
}

// writeTrialFiles keeps the trial's material: the uiautomator dump, the
// helper's first tree and its first screenshot.
func writeTrialFiles(dir string, r *adb.TrialReport) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	files := map[string][]byte{"uiautomator-dump.xml": r.DumpXML, "helper-tree.xml": r.TreeXML}
	for name, b := range files {
		if b == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if r.Shot == nil {
		return nil
	}
	f, err := os.Create(filepath.Join(dir, "helper-screenshot.png"))
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := png.Encode(f, r.Shot); err != nil {
		f.Close()
		return fmt.Errorf("--out: %w", err)
	}
	return f.Close()
}
