package adbd

import (
	"bytes"
	"context"
	"io"
	"strings"
	"unicode/utf8"
)

// interactiveShell is what `adb shell` without a command gets: a prompt and
// a line editor good enough for a person trying the simulator. Each line
// runs through Phone.Exec. With a tty (the host's terminal is in raw mode)
// it echoes, edits and maps "\n" to "\r\n" as a PTY would; without one
// (stdin piped into `adb shell`) it just reads lines, like sh does.
type interactiveShell struct {
	phone  Phone
	prompt string
	tty    bool
	out    io.Writer
	flush  func() error
}

// run reads stdin until EOF, Ctrl-D on an empty line, or `exit`; it
// returns the exit status of the last command.
func (sh *interactiveShell) run(ctx context.Context, in io.Reader) int {
	status := 0
	var line []byte
	skipEscape := 0 // 1: after ESC, 2: inside a CSI sequence
	lastCR := false
	sh.showPrompt()
	buf := make([]byte, 4096)
	for {
		n, err := in.Read(buf)
		for _, c := range buf[:n] {
			if skipEscape > 0 { // arrow keys and the like are not supported
				if skipEscape == 1 && c == '[' {
					skipEscape = 2
				} else if skipEscape == 1 || (c >= 0x40 && c <= 0x7e) {
					skipEscape = 0
				}
				continue
			}
			cr := c == '\r'
			switch {
			case c == '\r' || c == '\n':
				if c == '\n' && lastCR {
					break // "\r\n": one line end
				}
				if sh.tty {
					io.WriteString(sh.out, "\r\n")
				}
				cmd := strings.TrimSpace(string(line))
				line = line[:0]
				if cmd == "exit" || strings.HasPrefix(cmd, "exit ") {
					sh.flush()
					return status
				}
				if cmd != "" {
					var w io.Writer = sh.out
					if sh.tty {
						w = crlfWriter{sh.out}
					}
					status = sh.phone.Exec(ctx, cmd, sh.tty, w, w)
				}
				if ctx.Err() != nil {
					return status
				}
				sh.showPrompt()
			case !sh.tty:
				line = append(line, c)
			case c == 0x7f || c == 0x08: // backspace: drop one rune
				if len(line) > 0 {
					_, size := utf8.DecodeLastRune(line)
					line = line[:len(line)-size]
					io.WriteString(sh.out, "\b \b")
				}
			case c == 0x03: // Ctrl-C: abandon the line
				line = line[:0]
				io.WriteString(sh.out, "^C\r\n")
				sh.showPrompt()
			case c == 0x04: // Ctrl-D: end of input on an empty line
				if len(line) == 0 {
					io.WriteString(sh.out, "\r\n")
					sh.flush()
					return status
				}
			case c == 0x1b:
				skipEscape = 1
			case c >= 0x20 || c == '\t':
				line = append(line, c)
				sh.out.Write([]byte{c})
			}
			lastCR = cr
		}
		if sh.flush() != nil || err != nil {
			return status
		}
	}
}

func (sh *interactiveShell) showPrompt() {
	if sh.tty {
		io.WriteString(sh.out, sh.prompt)
	}
	sh.flush()
}

// crlfWriter turns "\n" into "\r\n", as a PTY's onlcr does.
type crlfWriter struct{ w io.Writer }

func (c crlfWriter) Write(p []byte) (int, error) {
	if _, err := c.w.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}
