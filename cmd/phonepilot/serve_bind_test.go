package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// serveMustRefuse runs `phonepilot serve args…` in-process and wants it
// refused with exit 2 and a message containing want. It never waits on a
// server that did start: the moment serve listens, the test fails (and
// stops it); and serve gets a deadline of its own, so a regression is a
// failure in seconds, not a hang until the suite's timeout.
func serveMustRefuse(t *testing.T, want string, args ...string) {
	t.Helper()
	const deadline = 10 * time.Second
	t.Setenv("PHONEPILOT_CONFIG", "")
	t.Setenv("PHONEPILOT_TOKEN", "")
	root := newRootCmd()
	serve, _, err := root.Find([]string{"serve"})
	if err != nil || serve.Name() != "serve" {
		t.Fatalf("no serve command: %v", err)
	}
	started := make(chan string, 1)
	serve.RunE = func(cmd *cobra.Command, _ []string) error {
		return runServe(cmd, serveOptions{}, func(addr string) { started <- addr })
	}
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	db := filepath.Join(t.TempDir(), "x.db")
	root.SetArgs(append([]string{"serve", "--db", db}, args...))
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()

	select {
	case addr := <-started:
		cancel()
		select {
		case <-done:
		case <-time.After(deadline):
		}
		t.Fatalf("serve %s started serving on %s; want it refused (%q)", strings.Join(args, " "), addr, want)
	case err := <-done:
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), want) {
			t.Errorf("serve %s = %v; want exit 2 saying %q", strings.Join(args, " "), err, want)
		}
		// Refused before anything started: not even its database exists.
		if _, err := os.Stat(db); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("serve %s opened its database %s before refusing (stat: %v)", strings.Join(args, " "), db, err)
		}
	case <-time.After(deadline + time.Second):
		t.Fatalf("serve %s neither refused nor served within %s", strings.Join(args, " "), deadline)
	}
}

func TestServeRefusesPublicAddressWithoutToken(t *testing.T) {
	serveMustRefuse(t, "set a token", "--addr", "0.0.0.0:0")
}

func TestServeRefusesShortToken(t *testing.T) {
	serveMustRefuse(t, "at least 16", "--addr", "127.0.0.1:0", "--token", "x")
	serveMustRefuse(t, "at least 16", "--addr", "0.0.0.0:0", "--token", "0123456789abcde")
}
