package backend

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"phonepilot/device/adb"
)

// Starting the default adb server (nothing answered and none was named)
// says that the server stays running after phonepilot exits, and how to
// stop it: `phonepilot devices` left one running without a word.
func TestStartingTheADBServerSaysItStaysRunning(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	script := "#!/bin/sh\necho \"$@\" >> " + ran + "\n"
	if err := os.WriteFile(filepath.Join(dir, "adb"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	t.Setenv("ADB_SERVER_SOCKET", "")
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	tries := 0
	err := WithDefaultADBServer(context.Background(), "", log, func() error {
		tries++
		if tries == 1 {
			return adb.ErrServerUnavailable
		}
		return nil
	})
	if err != nil || tries != 2 {
		t.Fatalf("err %v after %d tries; want the server started and the second try to work", err, tries)
	}
	if b, _ := os.ReadFile(ran); strings.TrimSpace(string(b)) != "start-server" {
		t.Fatalf("adb ran with %q; want start-server", b)
	}
	if !strings.Contains(logs.String(), "keeps running after phonepilot exits") || !strings.Contains(logs.String(), "adb kill-server") {
		t.Errorf("log %q; want it to say the adb server keeps running and how to stop it", logs.String())
	}
}
