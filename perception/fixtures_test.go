package perception

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func fixtures(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "uidump", "*.xml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in testdata/uidump: %v", err)
	}
	return files
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "uidump", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// replaceOnce returns data with old replaced by new, failing if old is not
// there exactly once (so a fixture edit cannot silently do nothing).
func replaceOnce(t testing.TB, data []byte, old, new string) []byte {
	t.Helper()
	if n := bytes.Count(data, []byte(old)); n != 1 {
		t.Fatalf("%q occurs %d times, want once", old, n)
	}
	return bytes.Replace(data, []byte(old), []byte(new), 1)
}
