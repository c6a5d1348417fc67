package simadb_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"phonepilot/device/sim"
	"phonepilot/device/sim/simadb"
)

// quietSim keeps per-stream debug logs out of the measurement.
func quietSim(b *testing.B) *simadb.Env {
	return simadb.Start(b, sim.Config{Seed: 1, Clock: fixedClock(), Logger: slog.New(slog.DiscardHandler)})
}

// These benchmarks exec the real adb client once per operation, as a user
// or a script would; the figure includes the client's start and its round
// trips to the adb server, not just the simulator.

func BenchmarkRealADBDumpExecOut(b *testing.B) {
	env := quietSim(b)
	for b.Loop() {
		out, err := env.Command(context.Background(), "exec-out", "uiautomator", "dump", "/dev/tty").Output()
		if err != nil || !bytes.Contains(out, []byte("</hierarchy>")) {
			b.Fatalf("dump: %d bytes, %v", len(out), err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "dumps/s")
}

func BenchmarkRealADBScreencapExecOut(b *testing.B) {
	env := quietSim(b)
	var size int
	for b.Loop() {
		out, err := env.Command(context.Background(), "exec-out", "screencap", "-p").Output()
		if err != nil || !bytes.HasPrefix(out, []byte("\x89PNG")) {
			b.Fatalf("screencap: %d bytes, %v", len(out), err)
		}
		size = len(out)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "screenshots/s")
	b.ReportMetric(float64(size), "png-bytes")
}

// BenchmarkRealADBShellEcho is the floor: one adb invocation doing nothing.
func BenchmarkRealADBShellEcho(b *testing.B) {
	env := quietSim(b)
	for b.Loop() {
		if out, err := env.Command(context.Background(), "shell", "echo", "hi").Output(); err != nil || string(out) != "hi\n" {
			b.Fatalf("echo: %q, %v", out, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commands/s")
}
