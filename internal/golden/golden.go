// Package golden compares test output with a golden file and rewrites the
// file instead when the environment says UPDATE_GOLDEN=1, the one switch
// every package's golden tests use.
package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Updating tells whether this run rewrites golden files (UPDATE_GOLDEN=1).
func Updating() bool { return os.Getenv("UPDATE_GOLDEN") == "1" }

// Check fails t when got differs from the file at path, showing the first
// line that differs; with UPDATE_GOLDEN=1 it writes got to path instead
// (creating its directory).
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run with UPDATE_GOLDEN=1 to create it)", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the current output (UPDATE_GOLDEN=1 rewrites it after review)\n%s", path, FirstDiff(got, want))
	}
}

// FirstDiff shows the first line where got and want differ ("" when they
// are equal line by line).
func FirstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + a + "\nwant: " + b
		}
	}
	return ""
}
