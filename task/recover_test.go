package task

import (
	"os"
	"testing"
)

func TestProcessGone(t *testing.T) {
	host, _ := os.Hostname()
	self := DefaultOwner()
	for owner, want := range map[string]bool{
		self:                       false, // this process
		host + ":1":                false, // init is always alive
		host + ":999999999":        true,  // no such process
		"another-machine-xyz:1234": false, // cannot tell; leave it
		"":                         true,  // legacy rows
		host + ":x":                true,
	} {
		if got := ProcessGone(owner); got != want {
			t.Errorf("ProcessGone(%q) = %v, want %v", owner, got, want)
		}
	}
}
