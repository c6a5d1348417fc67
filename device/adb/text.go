package adb

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"phonepilot/device"
	"phonepilot/device/adb/helper"
	"phonepilot/scene"
)

// ADB Keyboard (github.com/senzhk/ADBKeyBoard): an IME that types whatever
// a broadcast tells it to, which `input text` cannot do for non-ASCII.
const (
	adbKeyboardPackage = "com.android.adbkeyboard"
	adbKeyboardIME     = "com.android.adbkeyboard/.AdbIME"
)

// InstallADBKeyboardHint tells the user how to make non-ASCII typing work.
const InstallADBKeyboardHint = "typing non-ASCII text needs ADB Keyboard: download ADBKeyboard.apk from " +
	"https://github.com/senzhk/ADBKeyBoard/releases, run `adb install ADBKeyboard.apk`, then " +
	"`adb shell ime enable " + adbKeyboardIME + "`"

// inputTextChunk bounds one `input text` argument: long arguments are slow
// and devices without shell_v2 refuse commands over 4096 bytes.
const inputTextChunk = 200

// TypeText replaces the focused field's content with text. Printable ASCII
// goes through `input text` (quoted for the device's sh); anything else
// through ADB Keyboard, which must be installed: without it the call fails
// with device.ErrUnsupported and InstallADBKeyboardHint, before touching the
// field. The user's input method is restored afterwards.
func (d *Device) TypeText(ctx context.Context, text string) error {
	if !utf8.ValidString(text) {
		return fmt.Errorf("adb: text is not valid UTF-8")
	}
	d.textMu.Lock()
	defer d.textMu.Unlock()
	// The helper sets the field's text directly: any Unicode, no keyboard app.
	if used, err := d.viaHelper(ctx, "set text", d.cfg.Timeouts.Input, func(ctx context.Context, c *helper.Client) error {
		return c.SetText(ctx, "", text)
	}); used {
		return err
	}

	field, err := d.focusedField(ctx)
	if err != nil {
		return err
	}
	if !asciiTypeable(text) {
		installed, err := d.hasPackage(ctx, adbKeyboardPackage)
		if err != nil {
			return err
		}
		if !installed {
			return fmt.Errorf("adb: %q: %w: %s", clipText(text), device.ErrUnsupported, InstallADBKeyboardHint)
		}
		return d.typeWithADBKeyboard(ctx, text)
	}
	if err := d.clearField(ctx, field); err != nil {
		return err
	}
	for _, chunk := range inputTextChunks(text) {
		if err := d.input(ctx, "input text "+Quote(chunk)); err != nil {
			return err
		}
	}
	return nil
}

func clipText(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		r := []rune(s)
		return string(r[:40]) + "…"
	}
	return s
}

// focusedField finds the focused editable element. No focused field is
// device.ErrNoFocus. When the screen cannot be dumped (animation), typing
// goes ahead blind rather than failing.
func (d *Device) focusedField(ctx context.Context) (*scene.Element, error) {
	sc, err := d.dumpScene(ctx)
	if err != nil {
		if errors.Is(err, device.ErrDisconnected) || ctx.Err() != nil {
			return nil, err
		}
		d.log.Debug("cannot check focus before typing; typing anyway", "err", err)
		return nil, nil
	}
	for i := range sc.Elements {
		e := &sc.Elements[i]
		if e.Focused && e.Editable {
			return e, nil
		}
	}
	return nil, fmt.Errorf("adb: type text: %w", device.ErrNoFocus)
}

// clearField empties the field with `input` alone: jump to the end, then
// delete as many characters as the field shows (a few more for safety;
// extra deletes in an empty field do nothing).
func (d *Device) clearField(ctx context.Context, field *scene.Element) error {
	n := 0
	if field != nil {
		n = utf8.RuneCountInString(field.Text)
	} else {
		n = 64 // focus unknown: clear a reasonable amount blind
	}
	if n == 0 {
		return nil
	}
	n += 2
	const perCommand = 50
	keys := []string{strconv.Itoa(keycodeMoveEnd)}
	for n > 0 {
		k := min(n, perCommand)
		for range k {
			keys = append(keys, strconv.Itoa(keycodeDel))
		}
		if err := d.input(ctx, "input keyevent "+strings.Join(keys, " ")); err != nil {
			return err
		}
		n -= k
		keys = keys[:0]
	}
	return nil
}

// asciiTypeable reports text that `input text` can type: printable ASCII.
func asciiTypeable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// inputTextChunks prepares text for `input text`, which turns "%s" into a
// space and nothing else: spaces become "%s", and a literal "%s" in the
// text is split across two commands so it is never read as one.
func inputTextChunks(text string) []string {
	var chunks []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			chunks = append(chunks, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == 's' && i > 0 && text[i-1] == '%' {
			// "%" ended the previous write; start a new one with "s".
			flush()
		}
		if c == ' ' {
			cur.WriteString("%s")
		} else {
			cur.WriteByte(c)
		}
		if cur.Len() >= inputTextChunk && !(c == '%') {
			flush()
		}
	}
	flush()
	return chunks
}

// Quote makes s one word for the device's sh: it wraps s in single quotes
// (inside which nothing is special) and writes each embedded single quote
// as quote-close, backslash-quote, quote-open.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("@%+=:,./-_", c) >= 0) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// imeSwitchPause lets a newly selected IME bind to the focused field before
// it is sent a broadcast (ADB Keyboard registers its receiver when its
// input view is created).
const imeSwitchPause = 300 * time.Millisecond

// typeWithADBKeyboard switches to ADB Keyboard, clears the field, types
// the text as base64 (UTF-8 through the broadcast extra is unreliable on
// Android 8+), and puts the user's IME back even when ctx is cancelled:
// the previous default IME is selected again, and ADB Keyboard is disabled
// again if it was not enabled before.
func (d *Device) typeWithADBKeyboard(ctx context.Context, text string) (err error) {
	prev, err := d.run(ctx, d.cfg.Timeouts.Command, "settings get secure default_input_method")
	if err != nil {
		return err
	}
	previous := strings.TrimSpace(string(prev))
	if previous != adbKeyboardIME {
		enabled, err := d.run(ctx, d.cfg.Timeouts.Command, "ime list -s")
		if err != nil {
			return err
		}
		wasEnabled := slices.Contains(strings.Fields(string(enabled)), adbKeyboardIME)
		defer func() {
			// Leaving the user without their keyboard is worse than a late
			// return, so this runs on a context of its own; a phone that
			// is gone or stopped answering cannot be given it back.
			if errors.Is(err, device.ErrDisconnected) {
				return
			}
			rctx, cancel := opCtx(context.WithoutCancel(ctx), d.cfg.Timeouts.Command)
			defer cancel()
			if rerr := d.restoreIME(rctx, previous, wasEnabled); rerr != nil {
				d.log.Warn("could not restore the input method", "ime", previous, "err", rerr)
				if err == nil {
					err = fmt.Errorf("adb: restore input method %s: %w", previous, rerr)
				}
			}
		}()
		if !wasEnabled {
			if _, err := d.run(ctx, d.cfg.Timeouts.Command, "ime enable "+adbKeyboardIME); err != nil {
				return err
			}
		}
		if _, err := d.run(ctx, d.cfg.Timeouts.Command, "ime set "+adbKeyboardIME); err != nil {
			return err
		}
		if err := d.clk.Sleep(ctx, imeSwitchPause); err != nil {
			return fmt.Errorf("adb: type text: %w", err)
		}
	}
	if err := d.broadcast(ctx, "am broadcast -a ADB_CLEAR_TEXT"); err != nil {
		return err
	}
	if text == "" {
		return nil
	}
	b64 := base64.StdEncoding.EncodeToString([]byte(text))
	return d.broadcast(ctx, "am broadcast -a ADB_INPUT_B64 --es msg "+Quote(b64))
}

// restoreIME selects the user's previous IME and, when ADB Keyboard was
// not enabled before, disables it again.
func (d *Device) restoreIME(ctx context.Context, previous string, wasEnabled bool) error {
	if previous != "" && previous != "null" {
		if _, err := d.run(ctx, d.cfg.Timeouts.Command, "ime set "+Quote(previous)); err != nil {
			return err
		}
	}
	if !wasEnabled {
		if _, err := d.run(ctx, d.cfg.Timeouts.Command, "ime disable "+adbKeyboardIME); err != nil {
			return err
		}
	}
	return nil
}

func (d *Device) broadcast(ctx context.Context, cmd string) error {
	out, err := d.run(ctx, d.cfg.Timeouts.Command, cmd)
	if err != nil {
		return err
	}
	if bytes.Contains(out, []byte("Exception")) || bytes.Contains(out, []byte("Error:")) {
		return &CommandError{Cmd: clipCmd(cmd), ExitCode: -1, Output: clip(out)}
	}
	return nil
}
