package main

import (
	"runtime/debug"
	"strings"
)

// version is set at link time for releases
// (-ldflags "-X main.version=v1.2.3"); otherwise it comes from the build's
// module and VCS information, so `go build` and `go install` binaries say
// which commit they are.
var version = ""

// buildVersion is what --version prints.
func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	if rev != "" && !strings.Contains(v, rev[:min(12, len(rev))]) {
		v += " " + rev[:min(12, len(rev))] + modified
	}
	return v + " " + info.GoVersion
}
