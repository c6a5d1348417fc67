package adb

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"phonepilot/device"
	"phonepilot/device/adb/helper"
)

// Android key codes for the keys the tools offer (KeyEvent.java).
var keyCodes = map[device.Key]int{
	device.KeyBack:      4,
	device.KeyHome:      3,
	device.KeyEnter:     66,
	device.KeyAppSwitch: 187,
	device.KeyDelete:    67,
}

const (
	keycodeMoveEnd = 123
	keycodeDel     = 67
)

func checkPoint(x, y int) error {
	if x < 0 || y < 0 {
		return fmt.Errorf("adb: point (%d,%d) is off the screen (negative)", x, y)
	}
	return nil
}

// Tap taps the point with `input tap`.
func (d *Device) Tap(ctx context.Context, x, y int) error {
	if err := checkPoint(x, y); err != nil {
		return err
	}
	if used, err := d.viaHelper(ctx, "tap", d.cfg.Timeouts.Stall, func(ctx context.Context, c *helper.Client) error {
		return c.Tap(ctx, x, y)
	}); used {
		return err
	}
	return d.input(ctx, fmt.Sprintf("input tap %d %d", x, y))
}

// LongPress holds the point for dur: a swipe that does not move.
func (d *Device) LongPress(ctx context.Context, x, y int, dur time.Duration) error {
	if err := checkPoint(x, y); err != nil {
		return err
	}
	if dur <= 0 {
		dur = 800 * time.Millisecond
	}
	if used, err := d.viaHelper(ctx, "long press", d.cfg.Timeouts.Stall+dur, func(ctx context.Context, c *helper.Client) error {
		return c.LongPress(ctx, x, y, dur)
	}); used {
		return err
	}
	return d.input(ctx, fmt.Sprintf("input swipe %d %d %d %d %d", x, y, x, y, dur.Milliseconds()))
}

// Swipe drags from (x1,y1) to (x2,y2) over dur.
func (d *Device) Swipe(ctx context.Context, x1, y1, x2, y2 int, dur time.Duration) error {
	if err := checkPoint(x1, y1); err != nil {
		return err
	}
	if err := checkPoint(x2, y2); err != nil {
		return err
	}
	if dur <= 0 {
		dur = 300 * time.Millisecond
	}
	if used, err := d.viaHelper(ctx, "swipe", d.cfg.Timeouts.Stall+dur, func(ctx context.Context, c *helper.Client) error {
		return c.Swipe(ctx, x1, y1, x2, y2, dur)
	}); used {
		return err
	}
	return d.input(ctx, fmt.Sprintf("input swipe %d %d %d %d %d", x1, y1, x2, y2, dur.Milliseconds()))
}

// Key sends one key event.
func (d *Device) Key(ctx context.Context, k device.Key) error {
	code, ok := keyCodes[k]
	if !ok {
		return fmt.Errorf("adb: unknown key %q (want one of %s): %w", k, keyNames(), device.ErrUnsupported)
	}
	if used, err := d.viaHelper(ctx, "key", d.cfg.Timeouts.Stall, func(ctx context.Context, c *helper.Client) error {
		return c.Key(ctx, code)
	}); used {
		return err
	}
	return d.input(ctx, "input keyevent "+strconv.Itoa(code))
}

func keyNames() string {
	names := make([]string, len(device.Keys))
	for i, k := range device.Keys {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// input runs an `input` command. A gesture may take as long as its
// duration, so the deadline allows for that.
func (d *Device) input(ctx context.Context, cmd string) error {
	timeout := d.cfg.Timeouts.Input
	if f := strings.Fields(cmd); len(f) == 7 && f[1] == "swipe" {
		if ms, err := strconv.Atoi(f[6]); err == nil {
			timeout += time.Duration(ms) * time.Millisecond
		}
	}
	out, err := d.run(ctx, timeout, cmd)
	if err != nil {
		return err
	}
	return inputFailure(cmd, out)
}

// inputFailure spots failures that devices without exit codes only report
// as text (`input` prints a usage text or a Java exception).
func inputFailure(cmd string, out []byte) error {
	for _, bad := range [][]byte{[]byte("Exception"), []byte("Error:"), []byte("Usage: input"), []byte("inaccessible or not found")} {
		if bytes.Contains(out, bad) {
			return &CommandError{Cmd: clipCmd(cmd), ExitCode: -1, Output: clip(out)}
		}
	}
	return nil
}
