// Package adbdtest holds a hand-written adbd.Phone for tests of the ADB
// transport and of what is built on it, independent of the simulator: a
// flat in-memory file map and a handful of shell commands.
package adbdtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Phone is an in-memory adbd.Phone. Like a real phone, /sdcard and
// /data/local/tmp always exist; any other directory exists while a file
// lies below it.
//
// Exec knows these commands (arguments may be single-quoted, as exec-out
// sends them): echo ARGS; true; false; exit N; tty (prints /dev/pts/0 with
// a terminal, else "not a tty" and exits 1); both (writes "out" and "err",
// exits 3); cat FILE; bytes N (Pattern(N), at most 8 MiB); block (waits for
// Block to close or ctx to end). Anything else is "not found", status 127.
type Phone struct {
	// Block is what the "block" command waits on; set it before use.
	Block chan struct{}

	mu    sync.Mutex
	files map[string][]byte
	modes map[string]fs.FileMode
	cmds  []string
}

// New returns a Phone with no files.
func New() *Phone {
	return &Phone{files: map[string][]byte{}, modes: map[string]fs.FileMode{}}
}

// alwaysDirs are the directories every phone has.
var alwaysDirs = []string{"/sdcard", "/data/local/tmp"}

// Exec runs one of the commands the type comment lists.
func (p *Phone) Exec(ctx context.Context, cmdline string, tty bool, stdout, stderr io.Writer) int {
	p.mu.Lock()
	p.cmds = append(p.cmds, cmdline)
	p.mu.Unlock()
	args := strings.Fields(cmdline)
	for i, a := range args { // exec-out single-quotes each argument
		args[i] = strings.Trim(a, "'")
	}
	if len(args) == 0 {
		return 0
	}
	arg1 := ""
	if len(args) > 1 {
		arg1 = args[1]
	}
	switch args[0] {
	case "echo":
		fmt.Fprintln(stdout, strings.Join(args[1:], " "))
		return 0
	case "true":
		return 0
	case "false":
		return 1
	case "exit":
		n, _ := strconv.Atoi(arg1)
		return n
	case "tty":
		if !tty {
			fmt.Fprintln(stdout, "not a tty")
			return 1
		}
		fmt.Fprintln(stdout, "/dev/pts/0")
		return 0
	case "both":
		fmt.Fprint(stdout, "out")
		fmt.Fprint(stderr, "err")
		return 3
	case "cat":
		data, err := p.ReadFile(arg1)
		if err != nil {
			fmt.Fprintf(stderr, "cat: %s: No such file or directory\n", arg1)
			return 1
		}
		_, _ = stdout.Write(data)
		return 0
	case "bytes":
		n, _ := strconv.Atoi(arg1)
		_, _ = stdout.Write(Pattern(min(max(n, 0), 8<<20)))
		return 0
	case "block":
		select {
		case <-p.Block:
		case <-ctx.Done():
		}
		return 0
	}
	fmt.Fprintf(stderr, "sh: %s: not found\n", args[0])
	return 127
}

// Pattern is n bytes that are not periodic at any small power of two, so a
// lost or repeated chunk shows.
func Pattern(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// Commands returns every command line Exec got, in order.
func (p *Phone) Commands() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.cmds...)
}

// ReadFile returns a copy of the file's bytes, or fs.ErrNotExist.
func (p *Phone) ReadFile(name string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.files[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return bytes.Clone(d), nil
}

// WriteFile stores a copy of data with its mode.
func (p *Phone) WriteFile(name string, data []byte, mode fs.FileMode) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.files[name] = bytes.Clone(data)
	p.modes[name] = mode
	return nil
}

// Mode is the mode a file was written with (0 for none).
func (p *Phone) Mode(name string) fs.FileMode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.modes[name]
}

type fileInfo struct {
	name string
	size int64
	dir  bool
	mode fs.FileMode
}

func (f fileInfo) Name() string { return f.name }
func (f fileInfo) Size() int64  { return f.size }
func (f fileInfo) Mode() fs.FileMode {
	if f.dir {
		return fs.ModeDir | 0o771
	}
	return f.mode
}
func (f fileInfo) ModTime() time.Time { return time.Unix(1700000000, 0) }
func (f fileInfo) IsDir() bool        { return f.dir }
func (f fileInfo) Sys() any           { return nil }

// file is the FileInfo of a stored file; mu must be held.
func (p *Phone) file(name, base string) fileInfo {
	mode := p.modes[name]
	if mode == 0 {
		mode = 0o644
	}
	return fileInfo{name: base, size: int64(len(p.files[name])), mode: mode}
}

// isDir tells whether name is a directory; mu must be held.
func (p *Phone) isDir(name string) bool {
	name = strings.TrimSuffix(name, "/")
	for _, d := range alwaysDirs {
		if name == d {
			return true
		}
	}
	for f := range p.files {
		if strings.HasPrefix(f, name+"/") {
			return true
		}
	}
	return false
}

// Stat describes a file or a directory, or returns fs.ErrNotExist.
func (p *Phone) Stat(name string) (fs.FileInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.files[name]; ok {
		return p.file(name, name[strings.LastIndexByte(name, '/')+1:]), nil
	}
	if p.isDir(name) {
		return fileInfo{name: name, dir: true}, nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// ReadDir lists the files directly in a directory by name, or returns
// fs.ErrNotExist when there is no such directory.
func (p *Phone) ReadDir(name string) ([]fs.FileInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.isDir(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	prefix := strings.TrimSuffix(name, "/") + "/"
	var out []fs.FileInfo
	for f := range p.files {
		if rest, ok := strings.CutPrefix(f, prefix); ok && !strings.Contains(rest, "/") {
			out = append(out, p.file(f, rest))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}
