package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"phonepilot/device/backend"
)

func init() { register(newDevicesCmd) }

// deviceRow is one line of `phonepilot devices`: a device as --device
// names it, its backend, state and model as the backend reports them, and
// its labels (screen size, Android version, locale) when it is ready.
type deviceRow struct {
	Name   string            `json:"name"`
	Kind   string            `json:"kind"`
	State  string            `json:"state"`
	Model  string            `json:"model,omitempty"`
	Width  int               `json:"width,omitempty"`
	Height int               `json:"height,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

// newDevicesCmd is `phonepilot devices`: the phones the adb server sees.
func newDevicesCmd() *cobra.Command {
	var asJSON bool
	var server string
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List the phones the device backends can list (adb: name, state, model, screen size)",
		Long: `List the phones the adb server sees: serial, state (device, unauthorized,
offline), model and screen size (from "wm size"; an override wins).

Drive one with --device adb:SERIAL, or --device adb when it is the only one.
The simulated phone (--device sim) needs no adb and is not listed.

iPhones on USB are listed as ios:UDID from usbmuxd ($USBMUXD_SOCKET_ADDRESS,
else /var/run/usbmuxd; none when no usbmuxd runs there); --device ios:UDID
drives one through WebDriverAgent on its port 8100 (docs/ios.md).

The adb server is --adb-server, else $ADB_SERVER_SOCKET (tcp:HOST:PORT), else
127.0.0.1:5037. When none answers there and none was named, devices starts
one with "adb start-server", as adb itself does, says so, and leaves it
running for the next command (stop it with "adb kill-server").`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := adbServerAddress(server); err != nil {
				return exitWith(2, fmt.Errorf("devices: %w", err))
			}
			var rows []deviceRow
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			err := backend.WithDefaultADBServer(cmd.Context(), server, log, func() (err error) {
				rows, err = listDevices(cmd.Context(), backend.Options{ADBServer: server})
				return err
			})
			if err != nil && len(rows) == 0 {
				return exitWith(1, fmt.Errorf("devices: %w", err))
			}
			if err != nil {
				// iPhones on usbmuxd are listed though no adb server
				// answers: the table says what one backend could not.
				fmt.Fprintf(cmd.ErrOrStderr(), "devices: %v\n", err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if rows == nil {
					rows = []deviceRow{}
				}
				return writeJSONOut(out, rows)
			}
			return writeDeviceTable(out, cmd.ErrOrStderr(), rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	cmd.Flags().StringVar(&server, "adb-server", "", "adb server address host:port (default: $ADB_SERVER_SOCKET, else 127.0.0.1:5037)")
	return cmd
}

// listDevices lists the devices of every backend of the table that can
// list its own (backend.Backend.List) and reads each ready one's labels,
// all at once so one slow phone does not hold up the rest. A backend that
// cannot list (no adb server) does not hide the others' phones: its error
// comes back beside their rows.
func listDevices(ctx context.Context, o backend.Options) ([]deviceRow, error) {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var rows []deviceRow
	var from []*backend.Backend
	var listed []backend.Listed
	var errs []error
	for _, b := range backend.Table {
		if b.List == nil {
			continue
		}
		list, err := b.List(lctx, o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, l := range list {
			rows = append(rows, deviceRow{Name: l.Name, Kind: l.Kind, State: l.State, Model: l.Model})
			from, listed = append(from, b), append(listed, l)
		}
	}
	var wg sync.WaitGroup
	for i := range rows {
		if rows[i].State != "device" || from[i].Labels == nil {
			continue
		}
		wg.Go(func() {
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			rows[i].Labels = from[i].Labels(sctx, o, listed[i], nil)
			fmt.Sscanf(rows[i].Labels["screen"], "%dx%d", &rows[i].Width, &rows[i].Height)
		})
	}
	wg.Wait()
	return rows, errors.Join(errs...)
}

func writeDeviceTable(out, errOut io.Writer, rows []deviceRow) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(errOut, "no phones attached: plug one in with USB debugging on, or `adb connect HOST:PORT` (the simulator needs none: --device sim)")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tMODEL\tSIZE")
	for _, r := range rows {
		model := r.Model
		if model == "" {
			model = "-"
		}
		size := "-"
		if r.Width > 0 {
			size = fmt.Sprintf("%dx%d", r.Width, r.Height)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.State, model, size)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		switch r.State {
		case "unauthorized":
			fmt.Fprintf(errOut, "%s: accept the \"Allow USB debugging?\" prompt on the phone\n", r.Name)
		case "offline":
			fmt.Fprintf(errOut, "%s: offline; reconnect the cable or run `adb reconnect`\n", r.Name)
		}
	}
	return nil
}
