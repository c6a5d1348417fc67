package main

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
)

// emptyADBServer is an adb server with no phone attached: it answers
// host:version and lists no devices.
func emptyADBServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				for {
					head := make([]byte, 4)
					if _, err := io.ReadFull(c, head); err != nil {
						return
					}
					n, err := strconv.ParseUint(string(head), 16, 32)
					if err != nil {
						return
					}
					req := make([]byte, n)
					if _, err := io.ReadFull(c, req); err != nil {
						return
					}
					reply := ""
					if strings.HasPrefix(string(req), "host:version") {
						reply = "0029"
					}
					fmt.Fprintf(c, "OKAY%04x%s", len(reply), reply)
				}
			}(c)
		}
	}()
	return l.Addr().String()
}

// run --device adb with no phone attached is exit 3's case (the device is
// gone), not 1 (issue 23).
func TestRunWithNoPhoneExitsDeviceGone(t *testing.T) {
	hermetic(t)
	code, _, stderr := runAI(t, "run", "--device", "adb", "--adb-server", emptyADBServer(t), "--no-record", "open Settings")
	if code != exitDeviceGone || !strings.Contains(stderr, "no phone attached") {
		t.Errorf("exit %d, stderr %q; want %d saying no phone is attached", code, stderr, exitDeviceGone)
	}
}
