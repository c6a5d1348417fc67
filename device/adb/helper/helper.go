// Package helper is phonepilot's own program on the phone: the dex built by
// scripts/build-helper.sh from java/src (committed, embedded here), how it is
// named and started on the phone, and the small framed protocol it serves on
// an abstract local socket (a Client for the host, Serve for a simulated
// phone). device/adb manages its life on a real phone; device/sim plays it
// behind its simulated adbd.
package helper

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
)

//go:embed phonepilot-helper.dex
var dex []byte

var dexHash = func() string {
	s := sha256.Sum256(dex)
	return hex.EncodeToString(s[:])
}()

// Dex returns a copy of the shipped dex.
func Dex() []byte { return append([]byte(nil), dex...) }

// IsDex reports whether b is exactly the shipped dex.
func IsDex(b []byte) bool { return string(b) == string(dex) }

// Hash is the dex's SHA-256 in hex.
func Hash() string { return dexHash }

// MainClass is the helper's entry point.
const MainClass = "phonepilot.helper.Main"

// RemoteDir is where the dex is pushed: the shell user's writable directory.
const RemoteDir = "/data/local/tmp"

// RemotePath is the dex's path on the phone. The content hash is in the
// name, so a phone that has it needs no new push, and two versions of
// phonepilot never overwrite each other's helper.
func RemotePath() string { return RemoteDir + "/phonepilot-helper-" + dexHash[:16] + ".dex" }

// SocketName is the abstract socket the helper listens on (as "@NAME" in
// /proc/net/unix; "localabstract:NAME" through adb).
func SocketName() string { return "phonepilot-helper-" + dexHash[:8] }

// DefaultIdleExit is how long the helper waits without a client before it
// exits by itself (phonepilot killed without stopping it).
const DefaultIdleExit = 30 * time.Second

// StartCommand is the shell command that runs the helper as the shell user.
// It prints one line (READY NAME PID, or ERROR KIND MESSAGE) and serves until
// stopped or idle.
func StartCommand(socket string, idleExit time.Duration) string {
	return fmt.Sprintf("CLASSPATH=%s exec app_process / %s --socket %s --idle-exit %s",
		RemotePath(), MainClass, socket, strconv.FormatFloat(idleExit.Seconds(), 'f', -1, 64))
}

// Exit statuses of the helper (Main.java).
const (
	ExitUsage  = 2
	ExitHeld   = 3
	ExitStart  = 4
	ExitSocket = 5
)
