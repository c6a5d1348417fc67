package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"phonepilot/api"
	"phonepilot/device/sim"
	"phonepilot/device/sim/adbd"
	"phonepilot/device/sim/simusbmux"
	"phonepilot/device/sim/simwda"
)

func init() { register(newSimCmd) }

// simOptions are the flags of `phonepilot sim`.
type simOptions struct {
	adbAddr       string
	controlAddr   string
	wdaAddr       string // --wda: serve the phone as an iPhone behind WebDriverAgent's API
	usbmuxdPath   string // --usbmuxd: play usbmuxd on this unix socket, the iPhone's WDA on its port 8100
	udid          string // --udid: the iPhone's UDID on the simulated usbmuxd
	locale        string
	profile       string
	seed          int64
	size          string
	noADBKeyboard bool
	helper        string // --helper: how phonepilot's helper behaves (sim.HelperModes)
	auth          bool
	verbose       bool
}

func newSimCmd() *cobra.Command {
	var o simOptions
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run the simulated phone as a device the real adb can connect to",
		Long: `Run the simulated phone behind a real ADB endpoint until Ctrl-C.

Debian's adb accepts it with "adb connect ADDR"; every adb command an agent
uses (shell, exec-out, push, pull) works against it. With --control, an HTTP
server answers GET /state (the phone's state as JSON), POST /reset and
POST /helper/kill. The phone plays phonepilot's own helper when adb starts
it (--helper makes it refuse, pretend another tool holds the UiAutomation,
or crash).

Both listen on loopback unless you give another address. Keep --adb outside
ports 5555-5585 unless you want every adb server on the machine to find the
phone by itself (as emulator-5554 for port 5555).`,
		Example: `  phonepilot sim --adb 127.0.0.1:15555 --control 127.0.0.1:18080
  adb connect 127.0.0.1:15555
  adb -s 127.0.0.1:15555 shell uiautomator dump /sdcard/window_dump.xml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (o.wdaAddr != "" || o.usbmuxdPath != "") && !cmd.Flags().Changed("adb") {
				o.adbAddr = "" // an iPhone has no adb
			}
			return runSim(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr(), nil)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.adbAddr, "adb", "127.0.0.1:15555", "address the ADB endpoint listens on (host:port; port 0 picks one)")
	f.StringVar(&o.wdaAddr, "wda", "", "serve the phone as an iPhone behind WebDriverAgent's HTTP API on this address (host:port); adb is then off unless --adb is given (docs/ios.md)")
	f.StringVar(&o.usbmuxdPath, "usbmuxd", "", "play usbmuxd on this unix socket: the phone is an iPhone on USB (--udid) whose port 8100 is WebDriverAgent's API; run with USBMUXD_SOCKET_ADDRESS=unix:PATH --device ios:UDID (docs/ios.md); adb is then off unless --adb is given")
	f.StringVar(&o.udid, "udid", simUDID, "the simulated iPhone's UDID on --usbmuxd")
	f.StringVar(&o.controlAddr, "control", "", "address of the control HTTP server (GET /state, POST /reset); off when empty")
	f.StringVar(&o.locale, "locale", "en", "phone language: en or zh")
	f.StringVar(&o.profile, "profile", "", "seeded realism profile (none by default): "+strings.Join(sim.ProfileNames(), ", "))
	f.Int64Var(&o.seed, "seed", 0, "seed of the realism profile; the same seed and inputs repeat the same run")
	f.StringVar(&o.size, "size", "1080x2400", "screen size WIDTHxHEIGHT in pixels")
	f.BoolVar(&o.noADBKeyboard, "no-adb-keyboard", false, "do not install the ADB Keyboard IME")
	f.StringVar(&o.helper, "helper", "", "how phonepilot's helper behaves when adb starts it: "+sim.HelperModes+"; POST /helper/kill on the control server kills it")
	f.BoolVar(&o.auth, "auth", false, "ask adb for a key (any key is accepted), like a phone with USB debugging authorization")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log every stream the adb server opens")
	return cmd
}

// parseSize reads "1080x2400".
func parseSize(s string) (w, h int, err error) {
	ws, hs, ok := strings.Cut(strings.ToLower(s), "x")
	if ok {
		w, err = strconv.Atoi(ws)
		if err == nil {
			h, err = strconv.Atoi(hs)
		}
	}
	if !ok || err != nil || w <= 0 || h <= 0 {
		return 0, 0, fmt.Errorf("--size %q: want WIDTHxHEIGHT, e.g. 1080x2400", s)
	}
	return w, h, nil
}

// checkListenAddr validates host:port and says whether it is loopback.
func checkListenAddr(flag, addr string) (loopback bool, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("--%s %q: want host:port, e.g. 127.0.0.1:15555", flag, addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return false, fmt.Errorf("--%s %q: bad port", flag, addr)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// simUDID is the simulated iPhone's UDID on --usbmuxd by default, in the
// form of an iPhone XS and later (8 hex digits, a dash, 16 hex digits).
const simUDID = "00008110-0001A2B3C4D5E6F7"

// simReady receives the bound addresses (for tests); each is "" when off.
type simReady func(adbAddr, controlAddr, wdaAddr string)

// runSim serves one simulated phone until ctx ends.
func runSim(ctx context.Context, o simOptions, stdout, stderr io.Writer, ready simReady) error {
	w, h, err := parseSize(o.size)
	if err != nil {
		return exitWith(2, err)
	}
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if o.adbAddr == "" && o.wdaAddr == "" && o.usbmuxdPath == "" {
		return exitWith(2, errors.New("give --adb, --wda or --usbmuxd: the phone needs an endpoint"))
	}
	if o.usbmuxdPath != "" && !udidPattern.MatchString(o.udid) {
		return exitWith(2, fmt.Errorf("--udid %q: want letters, digits and dashes, e.g. %s", o.udid, simUDID))
	}
	for flag, addr := range map[string]string{"adb": o.adbAddr, "control": o.controlAddr, "wda": o.wdaAddr} {
		if addr == "" {
			continue
		}
		loopback, err := checkListenAddr(flag, addr)
		if err != nil {
			return exitWith(2, err)
		}
		if !loopback {
			fmt.Fprintf(stderr, "warning: --%s %s is not loopback: anyone who can reach it can drive the simulated phone\n", flag, addr)
		}
	}
	phone, err := sim.New(sim.Config{
		Width: w, Height: h,
		Locale:        o.locale,
		Profile:       o.profile,
		Seed:          o.seed,
		NoADBKeyboard: o.noADBKeyboard,
		Helper:        o.helper,
		Logger:        logger.With("component", "sim"),
	})
	if err != nil {
		return exitWith(2, err)
	}
	product, model, dev := phone.Model()
	daemon, err := adbd.New(phone, adbd.Config{
		Product: product, Model: model, Device: dev,
		Auth:   o.auth,
		Logger: logger.With("component", "adbd"),
	})
	if err != nil {
		return exitWith(2, err)
	}

	var lc net.ListenConfig
	var lns []net.Listener
	closeAll := func() {
		for _, l := range lns {
			l.Close()
		}
	}
	listen := func(flag, addr string) (net.Listener, error) {
		if addr == "" {
			return nil, nil
		}
		ln, err := lc.Listen(ctx, "tcp", addr)
		if err != nil {
			closeAll()
			return nil, exitWith(1, fmt.Errorf("listen for %s on %s: %w", flag, addr, err))
		}
		lns = append(lns, ln)
		return ln, nil
	}
	adbLn, err := listen("adb", o.adbAddr)
	if err != nil {
		return err
	}
	controlLn, err := listen("control", o.controlAddr)
	if err != nil {
		return err
	}
	wdaLn, err := listen("wda", o.wdaAddr)
	if err != nil {
		return err
	}

	var control http.Handler
	if controlLn != nil {
		// The control listener changes the phone (POST /reset): a web page
		// must not reach it either.
		if control, err = api.Door(controlLn.Addr().String(), api.DoorConfig{}, phone.ControlHandler()); err != nil {
			closeAll()
			return exitWith(2, err)
		}
	}

	usbmuxLn, err := listenUnix(ctx, o.usbmuxdPath)
	if err != nil {
		closeAll()
		return exitWith(1, err)
	}
	if usbmuxLn != nil {
		lns = append(lns, usbmuxLn)
	}

	var wdaAPI http.Handler // one WDA for every way in: one session at a time
	if wdaLn != nil || usbmuxLn != nil {
		wdaAPI = simwda.New(phone)
	}
	var wdaH http.Handler
	if wdaLn != nil {
		// WDA's API drives the phone: a web page must not reach it.
		if wdaH, err = api.Door(wdaLn.Addr().String(), api.DoorConfig{}, wdaAPI); err != nil {
			closeAll()
			return exitWith(2, err)
		}
	}
	var mux *simusbmux.Server
	stopTunnels := func() {}
	if usbmuxLn != nil {
		// Through the tunnel WDA is reached as on the phone's own loopback:
		// no web page reaches a unix socket (it is the user's only, 0600).
		var serve8100 func(net.Conn)
		serve8100, stopTunnels = simusbmux.HTTPPort(wdaAPI)
		mux = simusbmux.New([]simusbmux.Device{{UDID: o.udid, Ports: map[int]func(net.Conn){8100: serve8100}}}, logger.With("component", "usbmuxd"))
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 4)
	if adbLn != nil {
		go func() { errs <- daemon.Serve(ctx, adbLn) }()
	}
	if mux != nil {
		go func() {
			if err := mux.Serve(ctx, usbmuxLn); err != nil {
				errs <- fmt.Errorf("usbmuxd: %w", err)
			}
		}()
	}
	var servers []*http.Server
	serveHTTP := func(name string, ln net.Listener, h http.Handler) {
		if ln == nil {
			return
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, srv)
		go func() {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("%s server: %w", name, err)
			}
		}()
	}
	serveHTTP("control", controlLn, control)
	serveHTTP("wda", wdaLn, wdaH)

	adbAddr := ""
	fmt.Fprintf(stdout, "simulated phone %s (%dx%d, locale %s, profile %s, seed %d)\n",
		model, w, h, o.locale, profileName(o.profile), o.seed)
	if adbLn != nil {
		adbAddr = adbLn.Addr().String()
		fmt.Fprintf(stdout, "adb:           adb connect %s\n", adbAddr)
	}
	wdaAddr := ""
	if wdaLn != nil {
		wdaAddr = wdaLn.Addr().String()
		fmt.Fprintf(stdout, "iPhone (WDA):  http://%s  (phonepilot run --device wda:http://%s …)\n", wdaAddr, wdaAddr)
	}
	if usbmuxLn != nil {
		fmt.Fprintf(stdout, "iPhone (USB):  %s on usbmuxd %s  (USBMUXD_SOCKET_ADDRESS=unix:%s phonepilot run --device ios:%s …)\n", o.udid, o.usbmuxdPath, o.usbmuxdPath, o.udid)
	}
	controlAddr := ""
	if controlLn != nil {
		controlAddr = controlLn.Addr().String()
		fmt.Fprintf(stdout, "state:         curl http://%s/state\n", controlAddr)
		fmt.Fprintf(stdout, "reset:         curl -X POST http://%s/reset\n", controlAddr)
	}
	fmt.Fprintln(stdout, "press Ctrl-C to stop")
	if ready != nil {
		ready(adbAddr, controlAddr, wdaAddr)
	}

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errs:
	}
	cancel()
	for _, srv := range servers {
		shutdownCtx, stop := context.WithTimeout(context.Background(), 5*time.Second)
		srv.Shutdown(shutdownCtx)
		stop()
	}
	if mux != nil {
		mux.Close()
	}
	stopTunnels()
	daemon.Close()
	if runErr != nil {
		return exitWith(1, runErr)
	}
	fmt.Fprintln(stdout, "simulated phone stopped")
	return nil
}

// udidPattern is a UDID --udid takes: what the ios backend takes after "ios:".
var udidPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,63}$`)

// listenUnix listens on the unix socket path ("" is off), owner-only. A
// socket file no one answers on (a simulator that was killed) is replaced;
// any other file there is an error.
func listenUnix(ctx context.Context, path string) (net.Listener, error) {
	if path == "" {
		return nil, nil
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("--usbmuxd %s: a file that is not a socket is there", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("--usbmuxd %s: something already answers there (a usbmuxd?)", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("--usbmuxd %s: removing the stale socket: %w", path, err)
		}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen for usbmuxd on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("--usbmuxd %s: %w", path, err)
	}
	return ln, nil
}

func profileName(p string) string {
	if p == "" {
		return "none"
	}
	return p
}
