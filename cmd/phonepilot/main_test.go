package main

import (
	"os"
	"testing"
)

// TestMain points the default task database at a temporary data directory,
// so tests that run tasks never write into the developer's own
// ~/.local/share/phonepilot.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "phonepilot-cmd-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_DATA_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
