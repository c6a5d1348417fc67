package main

import (
	"strings"
	"testing"
)

func TestVersionFlag(t *testing.T) {
	root := newRootCmd()
	var out strings.Builder
	root.SetOut(&out)
	root.SetArgs([]string{"--version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, "phonepilot ") || !strings.Contains(got, "go1.") {
		t.Errorf("--version printed %q; want \"phonepilot <version> <go version>\"", got)
	}
}
