package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"phonepilot/device/adb"
	"phonepilot/device/backend"
)

func init() { register(newDevicesCmd) }

// deviceRow is one line of `phonepilot devices`.
type deviceRow struct {
	adb.DeviceInfo
	Width     int    `json:"width,omitempty"`
	Height    int    `json:"height,omitempty"`
	SizeError string `json:"size_error,omitempty"`
}

// newDevicesCmd is `phonepilot devices`: the phones the adb server sees.
func newDevicesCmd() *cobra.Command {
	var asJSON bool
	var server string
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List the phones attached through adb (serial, state, model, screen size)",
		Long: `List the phones the adb server sees: serial, state (device, unauthorized,
offline), model and screen size (from "wm size"; an override wins).

Drive one with --device adb:SERIAL, or --device adb when it is the only one.
The simulated phone (--device sim) needs no adb and is not listed.

The adb server is --adb-server, else $ADB_SERVER_SOCKET (tcp:HOST:PORT), else
127.0.0.1:5037. When none answers there and none was named, devices starts
one with "adb start-server", as adb itself does, says so, and leaves it
running for the next command (stop it with "adb kill-server").`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			addr, err := adbServerAddress(server)
			if err != nil {
				return exitWith(2, fmt.Errorf("devices: %w", err))
			}
			var rows []deviceRow
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			err = backend.WithDefaultADBServer(cmd.Context(), server, log, func() (err error) {
				rows, err = listDevices(cmd.Context(), addr)
				return err
			})
			if err != nil {
				return exitWith(1, fmt.Errorf("devices: %w", err))
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

// listDevices asks the server for its devices and each ready one for its
// screen size, all at once so one slow phone does not hold up the rest.
func listDevices(ctx context.Context, addr string) ([]deviceRow, error) {
	c, err := adb.NewClient(addr)
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list, err := c.Devices(lctx)
	if err != nil {
		return nil, err
	}
	rows := make([]deviceRow, len(list))
	var wg sync.WaitGroup
	for i, d := range list {
		rows[i].DeviceInfo = d
		if d.State != "device" {
			continue
		}
		wg.Go(func() {
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			s, err := c.ScreenSize(sctx, d.Serial)
			if err != nil {
				rows[i].SizeError = err.Error()
				return
			}
			rows[i].Width, rows[i].Height = s.Width, s.Height
		})
	}
	wg.Wait()
	return rows, nil
}

func writeDeviceTable(out, errOut io.Writer, rows []deviceRow) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(errOut, "no phones attached: plug one in with USB debugging on, or `adb connect HOST:PORT` (the simulator needs none: --device sim)")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERIAL\tSTATE\tMODEL\tSIZE")
	for _, r := range rows {
		model := r.Model
		if model == "" {
			model = "-"
		}
		size := "-"
		switch {
		case r.Width > 0:
			size = fmt.Sprintf("%dx%d", r.Width, r.Height)
		case r.SizeError != "":
			size = "?"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Serial, r.State, model, size)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		switch r.State {
		case "unauthorized":
			fmt.Fprintf(errOut, "%s: accept the \"Allow USB debugging?\" prompt on the phone\n", r.Serial)
		case "offline":
			fmt.Fprintf(errOut, "%s: offline; reconnect the cable or run `adb reconnect`\n", r.Serial)
		}
	}
	return nil
}
