package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"phonepilot/device"
)

func init() { register(newDoctorCmd) }

// doctorReport is `phonepilot doctor --json`: what a user attaches to an issue.
type doctorReport struct {
	Device string         `json:"device"`
	OK     bool           `json:"ok"`
	Checks []device.Check `json:"checks"`
}

// newDoctorCmd is `phonepilot doctor`: one table of checks of a phone's
// setup, each with its fix; exit 0 when every check passes.
func newDoctorCmd() *cobra.Command {
	var spec string
	var asJSON bool
	var o deviceOptions
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check a phone's setup for phonepilot, with the fix for each problem",
		Long: `Check a phone's setup: adb authorised, screen on and unlocked, Android
version, display size and density, phonepilot's helper starts and answers
(with its tree time), how text will be typed, input injection allowed, and
the UiAutomation free. Each failed check says how to fix it. --json prints a
report to attach to an issue. Exit status 0 when every check passes, 1
otherwise (docs/device-helper.md).`,
		Example: `  phonepilot doctor --device adb
  phonepilot doctor --device adb:R58M123456 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
			defer cancel()
			return runDoctor(ctx, spec, o, asJSON, cmd.OutOrStdout())
		},
	}
	addDeviceFlags(cmd, &spec, &o)
	cmd.Flags().Lookup("device").DefValue = "adb"
	cmd.Flags().Set("device", "adb")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func runDoctor(ctx context.Context, spec string, o deviceOptions, asJSON bool, out io.Writer) error {
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
	}
	rep.OK = true
	for _, c := range rep.Checks {
		rep.OK = rep.OK && c.OK
	}
	if asJSON {
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
		if rep.OK {
			fmt.Fprintln(out, "\nevery check passed")
		}
	}
	if !rep.OK {
		return exitWith(1, errors.New("some checks failed: see the fixes above"))
	}
	return nil
}
