package simadb_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"phonepilot/device/sim/adbd"
	"phonepilot/device/sim/simadb"
)

// These tests run the real adb client against adbd with a minimal phone,
// so a transport bug shows here even when the simulator itself is broken.

func TestRealADBSeesDeviceAndRunsCommands(t *testing.T) {
	env := simadb.StartDevice(t, newMemPhone(), adbd.Config{Product: "simphone", Model: "Sim Phone 1", Device: "simdev"})

	out, err := env.ADB("devices", "-l")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), env.Serial) || !strings.Contains(string(out), "device product:simphone model:Sim_Phone_1 device:simdev") {
		t.Errorf("devices -l:\n%s", out)
	}
	if out, err := env.ADB("shell", "echo", "hi", "there"); err != nil || string(out) != "hi there\n" {
		t.Errorf("shell echo: %q, %v", out, err)
	}
	if _, err := env.ADB("shell", "false"); simadb.ExitCode(err) != 1 {
		t.Errorf("shell false: exit %d (%v), want 1", simadb.ExitCode(err), err)
	}
	if _, err := env.ADB("shell", "nosuchcmd"); simadb.ExitCode(err) != 127 || !strings.Contains(err.Error(), "nosuchcmd: not found") {
		t.Errorf("unknown command: exit %d (%v), want 127 with sh's message", simadb.ExitCode(err), err)
	}
	// adb shell (v2, pipes) has no tty; exec-out has one, as on a phone.
	if out, _ := env.ADB("shell", "tty"); string(out) != "not a tty\n" {
		t.Errorf("shell tty: %q", out)
	}
	if out, _ := env.ADB("exec-out", "tty"); string(out) != "/dev/pts/0\n" {
		t.Errorf("exec-out tty: %q", out)
	}
	if out, err := env.ADB("features"); err != nil || !strings.Contains(string(out), "shell_v2") || !strings.Contains(string(out), "stat_v2") {
		t.Errorf("features: %q, %v", out, err)
	}
}

func TestRealADBMovesFourMegabytesExactly(t *testing.T) {
	phone := newMemPhone()
	env := simadb.StartDevice(t, phone, adbd.Config{})
	want := noise(4 << 20)

	out, err := env.ADB("exec-out", "bytes", "4194304")
	if err != nil || !bytes.Equal(out, want) {
		t.Fatalf("exec-out of 4 MB: %d bytes, equal=%v, %v", len(out), bytes.Equal(out, want), err)
	}

	local := filepath.Join(t.TempDir(), "big.bin")
	if err := os.WriteFile(local, want, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := env.ADB("push", local, "/sdcard/big.bin"); err != nil {
		t.Fatal(err)
	}
	if got, _ := phone.ReadFile("/sdcard/big.bin"); !bytes.Equal(got, want) {
		t.Fatalf("pushed file differs: %d bytes", len(got))
	}
	back := filepath.Join(t.TempDir(), "back.bin")
	if _, err := env.ADB("pull", "/sdcard/big.bin", back); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(back); !bytes.Equal(got, want) {
		t.Fatalf("pulled file differs: %d bytes", len(got))
	}
	if out, err := env.ADB("pull", "/sdcard/missing.xml", back); err == nil || !strings.Contains(string(out)+err.Error(), "No such file") {
		t.Errorf("pull of a missing file: %q %v", out, err)
	}
}

func TestStopPhoneDisconnects(t *testing.T) {
	env := simadb.StartDevice(t, newMemPhone(), adbd.Config{})
	env.StopPhone()
	if env.Daemon.Connections() != 0 {
		t.Errorf("%d transports still open after StopPhone", env.Daemon.Connections())
	}
	out, err := env.ADB("shell", "echo", "hi")
	if err == nil {
		t.Errorf("shell after StopPhone succeeded: %q", out)
	}
	if out, _ := env.ADB("get-state"); strings.TrimSpace(string(out)) == "device" {
		t.Errorf("get-state after StopPhone still says device")
	}
}

func TestRealADBShellWithoutCommandReadsStdin(t *testing.T) {
	env := simadb.StartDevice(t, newMemPhone(), adbd.Config{})
	cmd := env.Command(t.Context(), "shell")
	cmd.Stdin = strings.NewReader("echo piped one\necho two\nfalse\n")
	out, err := cmd.Output()
	if string(out) != "piped one\ntwo\n" || simadb.ExitCode(err) != 1 {
		t.Errorf("adb shell < script: %q, exit %d (%v); want both lines and the last status 1", out, simadb.ExitCode(err), err)
	}
}
