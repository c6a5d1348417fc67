package adb

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"testing"
	"time"

	"phonepilot/device"
	"phonepilot/device/sim/adbd"
	"phonepilot/device/sim/simadb"
	"phonepilot/internal/testlog"
)

// adbdPhone puts the unit tests' fakePhone behind the simulator's adbd, so
// the host-protocol client is checked against Debian's real adb server
// independently of the simulated phone.
type adbdPhone struct{ p *fakePhone }

func (a adbdPhone) Exec(ctx context.Context, cmdline string, tty bool, stdout, stderr io.Writer) int {
	svc := "shell,v2,raw:"
	if tty {
		svc = "exec:"
	}
	r := a.p.handle("", svc, cmdline)
	if r.hang {
		<-ctx.Done()
		return 1
	}
	stdout.Write(r.out)
	stderr.Write(r.stderr)
	return r.exit
}

func (a adbdPhone) ReadFile(name string) ([]byte, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}
func (a adbdPhone) WriteFile(string, []byte, fs.FileMode) error { return fs.ErrPermission }
func (a adbdPhone) Stat(name string) (fs.FileInfo, error) {
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}
func (a adbdPhone) ReadDir(string) ([]fs.FileInfo, error) { return nil, fs.ErrNotExist }

func openReal(t *testing.T, env *simadb.Env) *Device {
	t.Helper()
	d, err := Open(t.Context(), Config{Server: env.ServerAddr, Serial: env.Serial, Logger: testlog.New(t)})
	if err != nil {
		t.Fatalf("Open through the real adb server: %v\nserver log:\n%s", err, env.ServerLog())
	}
	return d
}

func TestRealServerFakePhone(t *testing.T) {
	p := newFakePhone(t)
	p.field = "old"
	env := simadb.StartDevice(t, adbdPhone{p}, adbd.Config{Model: "Fake Phone"})
	d := openReal(t, env)
	ctx := t.Context()

	c := d.Client()
	if v, err := c.Version(ctx); err != nil || v != 41 {
		t.Errorf("real server version = %d, %v", v, err)
	}
	list, err := c.Devices(ctx)
	if err != nil || len(list) != 1 || list[0].Serial != env.Serial || list[0].State != "device" || list[0].Model != "Fake_Phone" {
		t.Errorf("devices = %+v, %v", list, err)
	}
	if !d.shellV2 {
		t.Error("shell_v2 not detected through the real server")
	}
	res, err := c.Shell(ctx, env.Serial, "nosuchcmd", true)
	if err != nil || res.ExitCode != 127 {
		t.Errorf("exit code through real server = %+v, %v", res, err)
	}

	sc, err := d.Scene(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Package != "com.android.settings" || sc.Width != 1080 || len(sc.Elements) != 2 {
		t.Errorf("scene = %s %dx%d %d elements", sc.Package, sc.Width, sc.Height, len(sc.Elements))
	}
	text := `Mac mini & "quotes" $HOME; rm -rf /`
	if err := d.TypeText(ctx, text); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	got := p.field
	p.mu.Unlock()
	if got != text {
		t.Errorf("field = %q; want %q", got, text)
	}
	p.screencap = noisyPNG(t, 300, 500)
	if f, err := d.Capture(ctx); err != nil {
		t.Errorf("Capture: %v", err)
	} else if w, h := f.Size(); w != 300 || h != 500 {
		t.Errorf("frame %dx%d", w, h)
	}
}

func TestRealServerPhoneStopsMidCall(t *testing.T) {
	p := newFakePhone(t)
	env := simadb.StartDevice(t, adbdPhone{p}, adbd.Config{})
	d := openReal(t, env)
	errc := make(chan error, 1)
	go func() {
		// "sleep" hangs on the fake phone until its stream is torn down.
		_, err := d.run(t.Context(), 30*time.Second, "sleep 100")
		errc <- err
	}()
	time.Sleep(300 * time.Millisecond)
	stopped := time.Now()
	env.StopPhone()
	select {
	case err := <-errc:
		if !errors.Is(err, device.ErrDisconnected) {
			t.Errorf("call in flight when the phone stopped = %v; want ErrDisconnected", err)
		}
		if el := time.Since(stopped); el > 5*time.Second {
			t.Errorf("ErrDisconnected after %v; want within 5s", el)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("call still hanging 10s after the phone stopped")
	}
	if err := d.Tap(t.Context(), 1, 1); !errors.Is(err, device.ErrDisconnected) {
		t.Errorf("Tap after stop = %v; want ErrDisconnected", err)
	}
}

func TestRealServerConnectsNetworkSerial(t *testing.T) {
	one := simadb.StartDevice(t, adbdPhone{newFakePhone(t)}, adbd.Config{Model: "One"})
	two := simadb.StartDevice(t, adbdPhone{newFakePhone(t)}, adbd.Config{Model: "Two"})
	// two's phone is unknown to one's server: Open connects it, as
	// `adb connect` would for a Wi-Fi phone.
	d, err := Open(t.Context(), Config{Server: one.ServerAddr, Serial: two.Serial, Logger: testlog.New(t)})
	if err != nil {
		t.Fatalf("Open(%s) through a server that did not know it: %v", two.Serial, err)
	}
	if d.Info().Model != "Two" {
		t.Errorf("opened %+v; want model Two", d.Info())
	}
	if err := d.Tap(t.Context(), 1, 1); err != nil {
		t.Errorf("Tap on the connected phone: %v", err)
	}
	list, err := d.Client().Devices(t.Context())
	if err != nil || len(list) != 2 {
		t.Errorf("server lists %+v, %v; want both phones", list, err)
	}
}
