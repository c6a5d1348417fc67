package simadb_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"phonepilot/device/sim/adbd"
	"phonepilot/device/sim/adbd/adbdtest"
	"phonepilot/device/sim/simadb"
)

// These tests run the real adb client against adbd with a minimal phone,
// so a transport bug shows here even when the simulator itself is broken.

func TestRealADBSeesDeviceAndRunsCommands(t *testing.T) {
	env := simadb.StartDevice(t, adbdtest.New(), adbd.Config{Product: "simphone", Model: "Sim Phone 1", Device: "simdev"})

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
	phone := adbdtest.New()
	env := simadb.StartDevice(t, phone, adbd.Config{})
	want := adbdtest.Pattern(4 << 20)

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
	env := simadb.StartDevice(t, adbdtest.New(), adbd.Config{})
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
	env := simadb.StartDevice(t, adbdtest.New(), adbd.Config{})
	cmd := env.Command(t.Context(), "shell")
	cmd.Stdin = strings.NewReader("echo piped one\necho two\nfalse\n")
	out, err := cmd.Output()
	if string(out) != "piped one\ntwo\n" || simadb.ExitCode(err) != 1 {
		t.Errorf("adb shell < script: %q, exit %d (%v); want both lines and the last status 1", out, simadb.ExitCode(err), err)
	}
}

func TestRealADBWithAuthAndWithoutShellV2(t *testing.T) {
	// A phone that asks for the key: adb signs with the private HOME's
	// adbkey and the daemon accepts it.
	authed := simadb.StartDevice(t, adbdtest.New(), adbd.Config{Auth: true})
	if out, err := authed.ADB("shell", "echo", "signed"); err != nil || string(out) != "signed\n" {
		t.Errorf("with AUTH: %q, %v", out, err)
	}
	// A phone without shell_v2: adb falls back to shell:, which has no
	// exit status (always 0), as on Android before 7.
	legacy := simadb.StartDevice(t, adbdtest.New(), adbd.Config{Features: []string{adbd.FeatureCmd, adbd.FeatureStatV2}})
	if out, err := legacy.ADB("shell", "echo", "legacy"); err != nil || string(out) != "legacy\n" {
		t.Errorf("without shell_v2: %q, %v", out, err)
	}
	if _, err := legacy.ADB("shell", "false"); err != nil {
		t.Errorf("without shell_v2, adb shell false should exit 0 (no status): %v", err)
	}
}

func TestRealADBListsAndPullsDirectories(t *testing.T) {
	phone := adbdtest.New()
	phone.WriteFile("/sdcard/a.txt", []byte("alpha"), 0o644)
	phone.WriteFile("/sdcard/b.txt", []byte("bravo"), 0o644)
	env := simadb.StartDevice(t, phone, adbd.Config{})
	out, err := env.ADB("ls", "/sdcard")
	if err != nil || !strings.Contains(string(out), "a.txt") || !strings.Contains(string(out), "b.txt") {
		t.Errorf("adb ls /sdcard: %q, %v", out, err)
	}
	dir := t.TempDir()
	if _, err := env.ADB("pull", "/sdcard", dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a.txt": "alpha", "b.txt": "bravo"} {
		if got, err := os.ReadFile(filepath.Join(dir, "sdcard", name)); err != nil || string(got) != want {
			t.Errorf("pulled %s: %q, %v", name, got, err)
		}
	}
}

func TestRestartPhoneReconnects(t *testing.T) {
	phone := adbdtest.New()
	env := simadb.StartDevice(t, phone, adbd.Config{})
	phone.WriteFile("/sdcard/kept.txt", []byte("kept"), 0o644)
	env.StopPhone()
	if _, err := env.ADB("shell", "echo", "x"); err == nil {
		t.Fatal("shell worked while the phone was stopped")
	}
	if err := env.RestartPhone(); err != nil {
		t.Fatal(err)
	}
	if out, err := env.ADB("exec-out", "cat", "/sdcard/kept.txt"); err != nil || string(out) != "kept" {
		t.Errorf("after restart: %q, %v", out, err)
	}
}
