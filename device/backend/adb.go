package backend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"phonepilot/device"
	"phonepilot/device/adb"
)

// adbBackend is a phone through an adb server (device/adb).
var adbBackend = &Backend{
	Kind: "adb",
	Forms: []Form{
		{"adb", "the only phone attached through adb"},
		{"adb:SERIAL", "see `phonepilot devices`; a Wi-Fi phone's is HOST:PORT, connected on demand"},
	},
	Check: func(name, rest string) error {
		if name != "adb" && (rest == "" || strings.ContainsAny(rest, " \t\n")) {
			return errors.New(`give the serial after "adb:" (see phonepilot devices or GET /v1/devices)`)
		}
		return nil
	},
	Open: func(ctx context.Context, _, serial string, o Options) (*Opened, error) {
		addr, err := ADBServerAddress(o.ADBServer)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrName, err)
		}
		obs, err := adb.ParseObserver(o.Observer)
		if err != nil {
			return nil, fmt.Errorf("%w: --observer: %w", ErrName, err)
		}
		log := o.logger()
		var d *adb.Device
		err = WithDefaultADBServer(ctx, o.ADBServer, log, func() (err error) {
			d, err = adb.Open(ctx, adb.Config{Server: addr, Serial: serial, Logger: log, Observer: obs})
			return err
		})
		if err != nil {
			return nil, err
		}
		return opened("adb:"+d.Serial(), "adb", d, d.Close), nil
	},
	List: func(ctx context.Context, o Options) ([]Listed, error) {
		addr, err := ADBServerAddress(o.ADBServer)
		if err != nil {
			return nil, err
		}
		c, err := adb.NewClient(addr)
		if err != nil {
			return nil, err
		}
		list, err := c.Devices(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]Listed, len(list))
		for i, p := range list {
			out[i] = Listed{Name: "adb:" + p.Serial, Kind: "adb", State: p.State, Model: p.Model}
		}
		return out, nil
	},
	Labels: adbLabels,
	Settings: func(o Options) any {
		return adbSettings{Server: o.ADBServer, Observer: o.Observer}
	},
}

// adbSettings is what a task's snapshot records of the adb backend.
type adbSettings struct {
	Server   string `json:"server,omitempty"`
	Observer string `json:"observer,omitempty"` // as asked; the task's device info says which one ran
}

// adbLabels reads a phone's Android version, locale and screen size.
func adbLabels(ctx context.Context, o Options, l Listed, _ device.Device) map[string]string {
	out := map[string]string{"kind": "adb", "platform": "android", "model": strings.ReplaceAll(l.Model, "_", " ")}
	addr, err := ADBServerAddress(o.ADBServer)
	if err != nil {
		return out
	}
	c, err := adb.NewClient(addr)
	if err != nil {
		return out
	}
	serial := strings.TrimPrefix(l.Name, "adb:")
	prop := func(name string) string {
		sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		r, err := c.Shell(sctx, serial, "getprop "+name, false)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(r.Stdout))
	}
	if v := prop("ro.build.version.release"); v != "" {
		out["android"] = v
	}
	loc := prop("persist.sys.locale")
	if loc == "" {
		loc = prop("ro.product.locale")
	}
	if loc != "" {
		out["locale"], out["locale_full"] = LocaleLang(loc), loc
	}
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if s, err := c.ScreenSize(sctx, serial); err == nil {
		out["screen"] = strconv.Itoa(s.Width) + "x" + strconv.Itoa(s.Height)
	}
	return out
}

// ADBServerAddress resolves --adb-server (flag), then ADB_SERVER_SOCKET.
func ADBServerAddress(flag string) (string, error) {
	s := flag
	if s == "" {
		s = os.Getenv("ADB_SERVER_SOCKET")
	}
	a, err := adb.ParseServerAddress(s)
	if err != nil {
		if flag != "" {
			return "", fmt.Errorf("--adb-server: %w", err)
		}
		return "", fmt.Errorf("ADB_SERVER_SOCKET: %w", err)
	}
	return a, nil
}

// WithDefaultADBServer runs try; when it finds no adb server and the user
// named none (no --adb-server, no ADB_SERVER_SOCKET), it starts the default
// server once, as the adb tool itself does, and tries again.
func WithDefaultADBServer(ctx context.Context, flag string, log *slog.Logger, try func() error) error {
	err := try()
	if !errors.Is(err, adb.ErrServerUnavailable) || flag != "" || os.Getenv("ADB_SERVER_SOCKET") != "" {
		return err
	}
	if serr := startADBServer(ctx, log); serr != nil {
		return fmt.Errorf("%w (and starting it failed: %v)", err, serr)
	}
	return try()
}

// startADBServer runs `adb start-server` when adb is installed.
func startADBServer(ctx context.Context, log *slog.Logger) error {
	path, err := exec.LookPath("adb")
	if err != nil {
		return errors.New("adb is not installed (Debian/Ubuntu: apt install adb)")
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	log.Info("starting the adb server", "adb", path)
	out, err := exec.CommandContext(ctx, path, "start-server").CombinedOutput()
	if err != nil {
		return fmt.Errorf("adb start-server: %w: %s", err, strings.TrimSpace(string(out)))
	}
	// As adb's own commands do, the server is left running for the next
	// command: say so, and how to stop it.
	log.Warn("started the adb server; it keeps running after phonepilot exits (stop it with: adb kill-server)", "adb", path)
	return nil
}
