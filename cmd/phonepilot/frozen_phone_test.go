package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"phonepilot/device/sim/simadb"
	"phonepilot/lifecycle"
)

// A phone that stops answering with its connection open: the simulator,
// served by `phonepilot sim --adb` in its own process behind Debian's real
// adb server, is stopped with SIGSTOP in the middle of a task. The adb
// server keeps listing it as "device" and forwards every request, and no
// reply ever comes. The task must fail within frozenLimit saying the phone
// stopped answering (it used to fail after 228 s with "context deadline
// exceeded"), and the device must be free for the next task once the phone
// runs again.

const (
	// frozenLimit is how long after the stop the task may take to end.
	frozenLimit = 15 * time.Second
	// frozenGiveUp bounds the wait, so a regression fails in under a
	// minute instead of hanging for the 228 s it once took.
	frozenGiveUp = 40 * time.Second
	// frozenGoal takes several seconds on the slow profile, so the stop
	// lands mid-task.
	frozenGoal = "open Taobao and search Mac mini"
)

// simProcess is `phonepilot sim` running as a child process.
type simProcess struct {
	cmd     *exec.Cmd
	adb     string // its adb address (the serial)
	control string // its control server
}

func startSimProcess(t *testing.T, bin string, extra ...string) *simProcess {
	t.Helper()
	args := append([]string{"sim", "--adb", "127.0.0.1:0", "--control", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+cmd.Dir)
	out := &lineWatcher{re: regexp.MustCompile(`curl http://(\S+)/state\n`), found: make(chan string, 1)}
	cmd.Stdout = out
	stderr := &safeBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT) // a stopped process cannot die of SIGKILL until continued on some systems
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("phonepilot sim stderr:\n%s", stderr.String())
		}
	})
	sp := &simProcess{cmd: cmd}
	select {
	case sp.control = <-out.found:
	case <-exited:
		t.Fatalf("phonepilot sim exited at start:\n%s%s", out, stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("phonepilot sim printed no control address:\n%s", out)
	}
	m := regexp.MustCompile(`adb connect (\S+)\n`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("phonepilot sim printed no adb address:\n%s", out)
	}
	sp.adb = m[1]
	return sp
}

// foregroundNow asks the control server which app is in front ("" when it
// does not answer in time: a stopped simulator never does).
func (s *simProcess) foregroundNow() string {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + s.control + "/state")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var st struct {
		Foreground string `json:"foreground"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&st)
	return st.Foreground
}

// waitForeground waits until pkg is in front or quit is closed.
func (s *simProcess) waitForeground(t *testing.T, pkg string, quit <-chan struct{}) bool {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for s.foregroundNow() != pkg {
		select {
		case <-quit:
			return false
		case <-deadline:
			t.Fatalf("%s never came to the front", pkg)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return true
}

func (s *simProcess) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v to the simulator: %v", sig, err)
	}
}

// reset continues the simulator and puts it back on the home screen.
func (s *simProcess) reset(t *testing.T) {
	t.Helper()
	s.signal(t, syscall.SIGCONT)
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post("http://"+s.control+"/reset", "", nil)
	if err != nil {
		t.Fatalf("reset the simulator after SIGCONT: %v", err)
	}
	resp.Body.Close()
}

// requireADB skips without Debian's adb (failing under
// PHONEPILOT_INTEGRATION=1) before anything is built or started.
func requireADB(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("adb"); err != nil {
		if os.Getenv("PHONEPILOT_INTEGRATION") == "1" {
			t.Fatal("adb not found; PHONEPILOT_INTEGRATION=1 requires it (apt-get install adb)")
		}
		t.Skip("adb not found (install Debian's adb package); skipping the real-adb test")
	}
}

func TestFrozenPhoneFailsTheTaskFast(t *testing.T) {
	requireADB(t)
	bin := buildPhonepilot(t)
	phone := startSimProcess(t, bin, "--profile", "slow")
	env := simadb.Attach(t, phone.adb)
	device := "adb:" + phone.adb

	t.Run("run", func(t *testing.T) {
		defer phone.reset(t)
		ctx, cancel := context.WithTimeout(t.Context(), 2*frozenGiveUp)
		defer cancel()
		home := t.TempDir()
		cmd := exec.CommandContext(ctx, bin, "run", "--no-record", "--device", device, "--adb-server", env.ServerAddr, frozenGoal)
		cmd.Dir = home
		cmd.Env = append(os.Environ(), "HOME="+home, "PHONEPILOT_CONFIG=", "ADB_SERVER_SOCKET=")
		out := &safeBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		var runErr error
		go func() { runErr = cmd.Wait(); close(exited) }()

		if !phone.waitForeground(t, "com.taobao.taobao", exited) {
			t.Fatalf("the task ended before Taobao was in front:\n%s", out)
		}
		phone.signal(t, syscall.SIGSTOP)
		stopped := time.Now()
		select {
		case <-exited:
		case <-time.After(frozenGiveUp):
			cancel()
			<-exited
			t.Fatalf("phonepilot run still running %v after the phone stopped answering; output:\n%s", frozenGiveUp, out)
		}
		took := time.Since(stopped)
		t.Logf("phonepilot run ended %v after SIGSTOP:\n%s", took.Round(time.Millisecond), out)
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) || ee.ExitCode() != exitDeviceGone {
			t.Errorf("phonepilot run on a stopped phone exited with %v; want exit status %d (device gone)", runErr, exitDeviceGone)
		}
		if took > frozenLimit {
			t.Errorf("the task ended %v after the phone stopped answering; want within %v", took, frozenLimit)
		}
		if !strings.Contains(out.String(), "the phone stopped answering") {
			t.Errorf("the output does not say the phone stopped answering:\n%s", out)
		}
		if strings.Contains(out.String(), "completed") {
			t.Errorf("the task completed although the phone was stopped mid-task (make the task longer):\n%s", out)
		}
	})

	t.Run("serve", func(t *testing.T) {
		defer phone.reset(t)
		sp := startServeProcess(t, bin, filepath.Join(t.TempDir(), "phonepilot.db"), "--adb-server", env.ServerAddr)
		api := newSurfaceClient(t, sp.url)
		id := api.submit(frozenGoal, device, nil)
		quit := make(chan struct{})
		if !phone.waitForeground(t, "com.taobao.taobao", quit) {
			t.Fatal("unreachable")
		}
		phone.signal(t, syscall.SIGSTOP)
		stopped := time.Now()
		task := api.waitFinal(id, frozenGiveUp)
		took := time.Since(stopped)
		t.Logf("served task %s ended %v after SIGSTOP: %s", id, took.Round(time.Millisecond), describeTask(task))
		if str(task, "status") != "failed" {
			t.Fatalf("task on a stopped phone: %s; want failed (serve stderr:\n%s)", describeTask(task), sp.stderr)
		}
		if took > frozenLimit {
			t.Errorf("the task failed %v after the phone stopped answering; want within %v", took, frozenLimit)
		}
		if !strings.Contains(str(task, "reason"), "the phone stopped answering") {
			t.Errorf("reason %q does not say the phone stopped answering", str(task, "reason"))
		}
		// The task service stores why a task failed as a typed cause; a
		// phone that stopped answering is a device that is gone.
		if cause := task["cause"]; cause != string(lifecycle.CauseDeviceGone) {
			t.Errorf("cause = %v; want device_gone", cause)
		}

		// The device is free again: once the phone runs, the next task on
		// it runs to the end.
		phone.reset(t)
		next := api.submit("open Settings", device, nil)
		if done := api.waitFinal(next, 60*time.Second); str(done, "status") != "completed" {
			t.Errorf("the next task on the same phone after it runs again: %s; want completed (serve stderr:\n%s)", describeTask(done), sp.stderr)
		}
	})
}
