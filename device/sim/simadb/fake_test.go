package simadb_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memPhone is a minimal hand-written phone for testing the helper and the
// transport against the real adb client independently of the simulator.
type memPhone struct {
	mu    sync.Mutex
	files map[string][]byte
}

func newMemPhone() *memPhone { return &memPhone{files: map[string][]byte{}} }

func (p *memPhone) Exec(ctx context.Context, cmdline string, tty bool, stdout, stderr io.Writer) int {
	args := strings.Fields(cmdline)
	for i, a := range args {
		args[i] = strings.Trim(a, "'")
	}
	if len(args) == 0 {
		return 0
	}
	switch args[0] {
	case "echo":
		fmt.Fprintln(stdout, strings.Join(args[1:], " "))
		return 0
	case "false":
		return 1
	case "tty":
		if tty {
			fmt.Fprintln(stdout, "/dev/pts/0")
			return 0
		}
		fmt.Fprintln(stdout, "not a tty")
		return 1
	case "cat":
		data, err := p.ReadFile(args[1])
		if err != nil {
			fmt.Fprintf(stderr, "cat: %s: No such file or directory\n", args[1])
			return 1
		}
		stdout.Write(data)
		return 0
	case "bytes":
		n, _ := strconv.Atoi(args[1])
		stdout.Write(noise(n))
		return 0
	}
	fmt.Fprintf(stderr, "sh: %s: not found\n", args[0])
	return 127
}

// noise is n bytes without short periods, so lost or repeated chunks show.
func noise(n int) []byte {
	b := make([]byte, n)
	x := uint32(88172645)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x >> 3)
	}
	return b
}

func (p *memPhone) ReadFile(name string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.files[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return bytes.Clone(d), nil
}

func (p *memPhone) WriteFile(name string, data []byte, _ fs.FileMode) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.files[name] = bytes.Clone(data)
	return nil
}

type memInfo struct {
	name string
	size int
	dir  bool
}

func (m memInfo) Name() string { return m.name }
func (m memInfo) Size() int64  { return int64(m.size) }
func (m memInfo) Mode() fs.FileMode {
	if m.dir {
		return fs.ModeDir | 0o771
	}
	return 0o660
}
func (m memInfo) ModTime() time.Time { return time.Unix(1700000000, 0) }
func (m memInfo) IsDir() bool        { return m.dir }
func (m memInfo) Sys() any           { return nil }

func (p *memPhone) Stat(name string) (fs.FileInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d, ok := p.files[name]; ok {
		return memInfo{name: name[strings.LastIndexByte(name, '/')+1:], size: len(d)}, nil
	}
	if name == "/sdcard" || name == "/sdcard/" || name == "/data/local/tmp" {
		return memInfo{name: name, dir: true}, nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

func (p *memPhone) ReadDir(name string) ([]fs.FileInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []fs.FileInfo
	prefix := strings.TrimSuffix(name, "/") + "/"
	for f, d := range p.files {
		if rest, ok := strings.CutPrefix(f, prefix); ok && !strings.Contains(rest, "/") {
			out = append(out, memInfo{name: rest, size: len(d)})
		}
	}
	return out, nil
}
