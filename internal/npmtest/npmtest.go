// Package npmtest installs a test's Node.js client from its lock file: the
// client's files are copied to a cache directory named after the lock
// file's hash and `npm ci` runs there once, so the repository holds no
// node_modules and a changed lock file gets a fresh install.
package npmtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Dir copies files from src (package.json and package-lock.json among them)
// to the cache directory for src's lock file and runs npm ci there when
// probe (a path inside node_modules) is missing. Without node and npm, or
// when the install has not been made and install is false, the test is
// skipped; under PHONEPILOT_INTEGRATION=1 it fails instead, and installs.
func Dir(t *testing.T, name, src string, files []string, probe string) string {
	t.Helper()
	integration := os.Getenv("PHONEPILOT_INTEGRATION") == "1"
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if integration {
				t.Fatalf("PHONEPILOT_INTEGRATION=1 but %s is not installed (apt-get install nodejs npm)", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "phonepilot", name+"-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", probe)); err != nil {
		if !integration {
			t.Skipf("%s's npm packages are not installed (PHONEPILOT_INTEGRATION=1 installs them with npm ci)", name)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}
	return dir
}
