package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"phonepilot/scene"
)

const sceneFixture = "../../perception/testdata/uidump/permission_location_dialog.xml"

// runScene runs the real root command with captured output.
func runScene(t *testing.T, stdin []byte, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetIn(bytes.NewReader(stdin))
	root.SetArgs(append([]string{"scene"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestSceneCommandFormats(t *testing.T) {
	out, err := runScene(t, nil, sceneFixture)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "Screen 1052x1968 · app com.google.android.permissioncontroller\n") ||
		!strings.Contains(out, `Button "Don’t allow" id=permission_deny_button clickable`) {
		t.Errorf("prompt:\n%s", out)
	}

	data, _ := os.ReadFile(sceneFixture)
	fromStdin, err := runScene(t, data, "-", "--format", "prompt")
	if err != nil || fromStdin != out {
		t.Errorf("stdin gives a different listing (%v)", err)
	}

	js, err := runScene(t, nil, "--format", "json", sceneFixture)
	if err != nil {
		t.Fatal(err)
	}
	var sc scene.Scene
	if err := json.Unmarshal([]byte(js), &sc); err != nil || len(sc.Elements) != 18 {
		t.Errorf("json output does not load as a Scene: %v (%d elements)", err, len(sc.Elements))
	}

	stats, err := runScene(t, nil, "--format", "stats", sceneFixture)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"nodes          18", "elements kept  7", "prompt bytes   626", "tokens (est.)  158"} {
		if !strings.Contains(stats, want) {
			t.Errorf("stats lacks %q:\n%s", want, stats)
		}
	}
}

func TestSceneCommandBadInputExits2(t *testing.T) {
	dir := t.TempDir()
	truncated := filepath.Join(dir, "cut.xml")
	data, _ := os.ReadFile(sceneFixture)
	os.WriteFile(truncated, data[:500], 0o644)
	idle := filepath.Join(dir, "idle.txt")
	os.WriteFile(idle, []byte("ERROR: could not get idle state.\n"), 0o644)
	notXML := filepath.Join(dir, "notes.txt")
	os.WriteFile(notXML, []byte("just some notes"), 0o644)

	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{truncated}, "at byte 500: truncated"},
		{[]string{notXML}, "at byte 0: not XML"},
		{[]string{idle}, "could not get idle state"},
		{[]string{filepath.Join(dir, "missing.xml")}, "missing.xml"},
		{[]string{"--format", "yaml", sceneFixture}, `--format "yaml"`},
	}
	for _, c := range cases {
		_, err := runScene(t, nil, c.args...)
		var ee *exitError
		if err == nil || !errors.As(err, &ee) || ee.code != 2 {
			t.Errorf("%v: got %v, want exit status 2", c.args, err)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: message %q does not say %q", c.args, err, c.msg)
		}
	}
	if code := run(context.Background(), []string{"scene", notXML}); code != 2 {
		t.Errorf("run exit status %d, want 2", code)
	}
	if code := run(context.Background(), []string{"scene", "--format", "stats", sceneFixture}); code != 0 {
		t.Errorf("run exit status %d on a good dump, want 0", code)
	}
}
