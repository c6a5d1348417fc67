package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The phone's `sh -c`: word splitting with quotes and backslashes, command
// lists (`;`, `&&`, `||`), pipes and redirections (`>`, `>>`, `2>`, `2>&1`,
// `<`). adb shell joins its arguments with spaces without quoting, so this
// is what decides what a command's arguments are, exactly as on a phone.

type token struct {
	op   string // "" for a word
	word string
}

var errUnterminated = errors.New("syntax error: unterminated quoted string")

func tokenize(line string) ([]token, error) {
	var out []token
	var cur strings.Builder
	inWord := false
	quoted := false // the current word had quotes (so "2" in '2'>x is a word)
	flush := func() {
		if inWord {
			out = append(out, token{word: cur.String()})
			cur.Reset()
			inWord, quoted = false, false
		}
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if c == '\n' {
				flush()
				out = append(out, token{op: ";"})
				continue
			}
			flush()
		case c == '#' && !inWord:
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
			i--
		case c == '\'':
			inWord, quoted = true, true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				cur.WriteRune(rs[j])
				j++
			}
			if j >= len(rs) {
				return nil, errUnterminated
			}
			i = j
		case c == '"':
			inWord, quoted = true, true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\"\\$`\n", rs[j+1]) {
					j++
					if rs[j] != '\n' {
						cur.WriteRune(rs[j])
					}
					continue
				}
				cur.WriteRune(rs[j])
			}
			if j >= len(rs) {
				return nil, errUnterminated
			}
			i = j
		case c == '\\':
			if i+1 < len(rs) {
				i++
				if rs[i] != '\n' {
					inWord = true
					cur.WriteRune(rs[i])
				}
			}
		case c == ';' || c == '|' || c == '&' || c == '>' || c == '<':
			// fd-prefixed redirections: 2>, 2>>, 2>&1, 1>
			if (c == '>' || c == '<') && inWord && !quoted && (cur.String() == "1" || cur.String() == "2") {
				fd := cur.String()
				cur.Reset()
				inWord = false
				op := fd + string(c)
				if c == '>' && i+1 < len(rs) && rs[i+1] == '>' {
					op += ">"
					i++
				}
				if c == '>' && i+2 < len(rs) && rs[i+1] == '&' && (rs[i+2] == '1' || rs[i+2] == '2') {
					op += "&" + string(rs[i+2])
					i += 2
				}
				out = append(out, token{op: op})
				continue
			}
			flush()
			op := string(c)
			if i+1 < len(rs) && (c == '&' || c == '|' || c == '>') && rs[i+1] == c {
				op += string(c)
				i++
			} else if c == '>' && i+2 < len(rs) && rs[i+1] == '&' && (rs[i+2] == '1' || rs[i+2] == '2') {
				op = ">&" + string(rs[i+2])
				i += 2
			}
			out = append(out, token{op: op})
		default:
			inWord = true
			cur.WriteRune(c)
		}
	}
	flush()
	return out, nil
}

// SplitWords splits a command line into words as sh does, ignoring
// operators. It is exported for the ADB transport's tests and tools.
func SplitWords(line string) ([]string, error) {
	toks, err := tokenize(line)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range toks {
		if t.op == "" {
			out = append(out, t.word)
		}
	}
	return out, nil
}

type redirect struct {
	fd     int    // 1 or 2 (0 for input)
	op     string // ">", ">>", "<", "&1", "&2"
	target string
}

type simpleCmd struct {
	args  []string
	redir []redirect
}

type pipeline []simpleCmd

type listItem struct {
	op   string // how it joins the previous item: "", ";", "&&", "||"
	pipe pipeline
}

func parseLine(line string) ([]listItem, error) {
	toks, err := tokenize(line)
	if err != nil {
		return nil, err
	}
	var items []listItem
	var pipe pipeline
	var cmd simpleCmd
	joinOp := ""
	endCmd := func() error {
		if len(cmd.args) == 0 && len(cmd.redir) == 0 {
			return fmt.Errorf("syntax error: unexpected operator")
		}
		pipe = append(pipe, cmd)
		cmd = simpleCmd{}
		return nil
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.op {
		case "":
			cmd.args = append(cmd.args, t.word)
		case ">", ">>", "1>", "1>>", "2>", "2>>", "<":
			if i+1 >= len(toks) || toks[i+1].op != "" {
				return nil, fmt.Errorf("syntax error: no file after %s", t.op)
			}
			i++
			fd := 1
			if strings.HasPrefix(t.op, "2") {
				fd = 2
			}
			op := strings.TrimLeft(t.op, "12")
			if op == "<" {
				fd = 0
			}
			cmd.redir = append(cmd.redir, redirect{fd: fd, op: op, target: toks[i].word})
		case "2>&1", ">&2", "1>&2", "2>&2", "1>&1":
			fd := 1
			if strings.HasPrefix(t.op, "2") {
				fd = 2
			}
			cmd.redir = append(cmd.redir, redirect{fd: fd, op: "&" + t.op[len(t.op)-1:]})
		case "|":
			if err := endCmd(); err != nil {
				return nil, err
			}
		case ";", "&", "&&", "||":
			if len(cmd.args) == 0 && len(cmd.redir) == 0 && len(pipe) == 0 {
				if t.op == ";" || t.op == "&" {
					continue // empty command (e.g. a trailing newline)
				}
				return nil, fmt.Errorf("syntax error: unexpected %q", t.op)
			}
			if err := endCmd(); err != nil {
				return nil, err
			}
			items = append(items, listItem{op: joinOp, pipe: pipe})
			pipe = nil
			joinOp = t.op
			if joinOp == "&" {
				joinOp = ";"
			}
		default:
			return nil, fmt.Errorf("syntax error: unsupported %q", t.op)
		}
	}
	if len(cmd.args) > 0 || len(cmd.redir) > 0 {
		pipe = append(pipe, cmd)
	} else if len(pipe) > 0 || joinOp == "&&" || joinOp == "||" {
		return nil, fmt.Errorf("syntax error: unexpected end of file")
	}
	if len(pipe) > 0 {
		items = append(items, listItem{op: joinOp, pipe: pipe})
	}
	return items, nil
}

// Exec runs a command line as the phone's `sh -c` would and returns its
// exit status. tty says whether the caller has a terminal (legacy `shell:`
// and `exec:` run in a PTY; `shell,v2,raw:` does not), which matters to
// `uiautomator dump /dev/tty`.
func (p *Phone) Exec(ctx context.Context, cmdline string, tty bool, stdout, stderr io.Writer) int {
	p.mu.Lock()
	if len(p.cmdLog) >= maxCmdLog {
		p.cmdLog = append(p.cmdLog[:0], p.cmdLog[len(p.cmdLog)-maxCmdLog/2:]...)
	}
	p.cmdLog = append(p.cmdLog, cmdline)
	p.mu.Unlock()
	items, err := parseLine(cmdline)
	if err != nil {
		fmt.Fprintf(stderr, "/system/bin/sh: %v\n", err)
		return 2
	}
	status := 0
	exitCode := 0
	for _, it := range items {
		if (it.op == "&&" && status != 0) || (it.op == "||" && status == 0) {
			continue
		}
		if ctx.Err() != nil {
			return 130
		}
		status = p.runPipeline(ctx, it.pipe, tty, stdout, stderr, &exitCode)
		if status == exitShell {
			return exitCode
		}
	}
	return status
}

// maxCmdLog bounds CommandLog (the older half goes when it is full).
const maxCmdLog = 4096

// CommandLog lists the command lines the phone's shell ran (adb shell,
// exec:), oldest first: what a driver made the phone run, for tests (a
// launch through the helper runs no `monkey`).
func (p *Phone) CommandLog() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.cmdLog...)
}

// exitShell is returned by the exit builtin, which stores its code in the
// line's exit variable.
const exitShell = -1000

func (p *Phone) runPipeline(ctx context.Context, pipe pipeline, tty bool, stdout, stderr io.Writer, exitCode *int) int {
	var in []byte
	status := 0
	for i, c := range pipe {
		var out io.Writer = stdout
		var buf *bytes.Buffer
		if i < len(pipe)-1 {
			buf = &bytes.Buffer{}
			out = buf
		}
		status = p.runSimple(ctx, c, in, tty && i == len(pipe)-1, out, stderr, exitCode)
		if buf != nil {
			in = buf.Bytes()
		}
		if status == exitShell {
			return status
		}
	}
	return status
}

// assignments splits sh's leading NAME=value words (the command's
// environment) and an `exec` (the command replaces the shell: here, it
// just runs) off a simple command.
func assignments(words []string) (args []string, vars map[string]string) {
	for len(words) > 0 {
		name, val, ok := strings.Cut(words[0], "=")
		if !ok || name == "" || strings.ContainsAny(name, "/-.") {
			break
		}
		if vars == nil {
			vars = map[string]string{}
		}
		vars[name] = val
		words = words[1:]
	}
	if len(words) > 1 && words[0] == "exec" {
		words = words[1:]
	}
	return words, vars
}

// cmdEnv is what a command sees.
type cmdEnv struct {
	ctx    context.Context
	args   []string          // args[0] is the command name
	vars   map[string]string // NAME=value words before the command
	stdin  []byte
	tty    bool
	stdout io.Writer
	stderr io.Writer
	exit   *int // where `exit N` leaves N
}

func (e *cmdEnv) out(format string, a ...any) { fmt.Fprintf(e.stdout, format, a...) }
func (e *cmdEnv) err(format string, a ...any) { fmt.Fprintf(e.stderr, format, a...) }

func (p *Phone) runSimple(ctx context.Context, c simpleCmd, stdin []byte, tty bool, stdout, stderr io.Writer, exitCode *int) int {
	args, vars := assignments(c.args)
	env := &cmdEnv{ctx: ctx, args: args, vars: vars, stdin: stdin, tty: tty, stdout: stdout, stderr: stderr, exit: exitCode}
	type fileOut struct {
		name   string
		buf    *bytes.Buffer
		append bool
	}
	var files []fileOut
	for _, r := range c.redir {
		switch r.op {
		case "<":
			data, err := p.ReadFile(r.target)
			if err != nil {
				fmt.Fprintf(stderr, "/system/bin/sh: %s: No such file or directory\n", r.target)
				return 1
			}
			env.stdin = data
		case ">", ">>":
			var w io.Writer = io.Discard
			if r.target != "/dev/null" {
				if r.target == "/dev/tty" {
					if !tty {
						fmt.Fprintf(stderr, "/system/bin/sh: can't create /dev/tty: No such device or address\n")
						return 1
					}
					w = stdout
				} else {
					b := &bytes.Buffer{}
					files = append(files, fileOut{r.target, b, r.op == ">>"})
					w = b
				}
			}
			if r.fd == 2 {
				env.stderr = w
			} else {
				env.stdout = w
			}
		case "&1":
			if r.fd == 2 {
				env.stderr = env.stdout
			}
		case "&2":
			if r.fd == 1 {
				env.stdout = env.stderr
			}
		}
	}
	status := 0
	if len(env.args) > 0 {
		env.tty = tty && env.stdout == stdout
		fn, ok := commands[env.args[0]]
		if !ok {
			fmt.Fprintf(env.stderr, "/system/bin/sh: %s: not found\n", env.args[0])
			status = 127
		} else {
			status = fn(p, env)
		}
	}
	for _, f := range files {
		p.mu.Lock()
		err := p.writeFileLocked(f.name, f.buf.Bytes(), 0o660, f.append)
		p.mu.Unlock()
		if err != nil {
			fmt.Fprintf(stderr, "/system/bin/sh: can't create %s: No such file or directory\n", f.name)
			return 1
		}
	}
	return status
}
