package adbd_test

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

// fakePhone is a tiny hand-written Phone: a flat file map and a handful of
// commands, enough to exercise every service of the transport.
type fakePhone struct {
	mu    sync.Mutex
	files map[string][]byte
	modes map[string]fs.FileMode
	cmds  []string // every Exec command line, in order
	ttys  []bool
	// block, when set, makes "block" wait on it (or ctx).
	block chan struct{}
}

func newFakePhone() *fakePhone {
	return &fakePhone{files: map[string][]byte{}, modes: map[string]fs.FileMode{}}
}

func (p *fakePhone) Exec(ctx context.Context, cmdline string, tty bool, stdout, stderr io.Writer) int {
	p.mu.Lock()
	p.cmds = append(p.cmds, cmdline)
	p.ttys = append(p.ttys, tty)
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
		stdout.Write(data)
		return 0
	case "bytes": // bytes N: N deterministic bytes
		n, _ := strconv.Atoi(arg1)
		stdout.Write(pattern(min(max(n, 0), 8<<20)))
		return 0
	case "block":
		select {
		case <-p.block:
		case <-ctx.Done():
		}
		return 0
	}
	fmt.Fprintf(stderr, "sh: %s: not found\n", args[0])
	return 127
}

// pattern is n bytes that are not periodic at any small power of two, so a
// lost or repeated chunk shows.
func pattern(n int) []byte {
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

func (p *fakePhone) commands() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.cmds...)
}

func (p *fakePhone) ReadFile(name string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.files[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return bytes.Clone(d), nil
}

func (p *fakePhone) WriteFile(name string, data []byte, mode fs.FileMode) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.files[name] = bytes.Clone(data)
	p.modes[name] = mode
	return nil
}

type fakeInfo struct {
	name string
	size int64
	dir  bool
	mode fs.FileMode
}

func (f fakeInfo) Name() string { return f.name }
func (f fakeInfo) Size() int64  { return f.size }
func (f fakeInfo) Mode() fs.FileMode {
	if f.dir {
		return fs.ModeDir | 0o771
	}
	return f.mode
}
func (f fakeInfo) ModTime() time.Time { return time.Unix(1700000000, 0) }
func (f fakeInfo) IsDir() bool        { return f.dir }
func (f fakeInfo) Sys() any           { return nil }

func (p *fakePhone) Stat(name string) (fs.FileInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d, ok := p.files[name]; ok {
		mode := p.modes[name]
		if mode == 0 {
			mode = 0o644
		}
		return fakeInfo{name: name[strings.LastIndexByte(name, '/')+1:], size: int64(len(d)), mode: mode}, nil
	}
	dir := strings.TrimSuffix(name, "/") + "/"
	for f := range p.files {
		if strings.HasPrefix(f, dir) {
			return fakeInfo{name: name, dir: true}, nil
		}
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

func (p *fakePhone) ReadDir(name string) ([]fs.FileInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	dir := strings.TrimSuffix(name, "/") + "/"
	var out []fs.FileInfo
	for f, d := range p.files {
		if rest, ok := strings.CutPrefix(f, dir); ok && !strings.Contains(rest, "/") {
			out = append(out, fakeInfo{name: rest, size: int64(len(d)), mode: 0o644})
		}
	}
	if out == nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}
