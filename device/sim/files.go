package sim

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"
)

// memFile is a file or directory of the phone's in-memory storage.
type memFile struct {
	data []byte
	mode fs.FileMode
	mod  time.Time
	dir  bool
}

func newFiles() map[string]*memFile {
	m := map[string]*memFile{}
	for _, d := range []string{"/", "/sdcard", "/sdcard/Download", "/sdcard/Pictures", "/sdcard/DCIM", "/sdcard/Documents",
		"/data", "/data/local", "/data/local/tmp", "/system", "/system/bin", "/dev", "/storage"} {
		m[d] = &memFile{dir: true, mode: fs.ModeDir | 0o771}
	}
	return m
}

// cleanPath makes name absolute (relative to /, the shell's working
// directory) and maps the external-storage aliases to /sdcard.
func cleanPath(name string) string {
	if !strings.HasPrefix(name, "/") {
		name = "/" + name
	}
	name = path.Clean(name)
	for _, alias := range []string{"/storage/emulated/0", "/storage/self/primary", "/mnt/sdcard", "/mnt/user/0/primary"} {
		if name == alias || strings.HasPrefix(name, alias+"/") {
			return "/sdcard" + strings.TrimPrefix(name, alias)
		}
	}
	return name
}

// fileInfo implements fs.FileInfo for memFile.
type fileInfo struct {
	name string
	f    *memFile
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return int64(len(i.f.data)) }
func (i fileInfo) Mode() fs.FileMode  { return i.f.mode }
func (i fileInfo) ModTime() time.Time { return i.f.mod }
func (i fileInfo) IsDir() bool        { return i.f.dir }
func (i fileInfo) Sys() any           { return nil }

// ReadFile returns a file's content; a missing file's error matches
// fs.ErrNotExist.
func (p *Phone) ReadFile(name string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.readFileLocked(name)
}

func (p *Phone) readFileLocked(name string) ([]byte, error) {
	if cleanPath(name) == "/proc/net/unix" {
		return p.procNetUnixLocked(), nil
	}
	f, ok := p.files[cleanPath(name)]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if f.dir {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("is a directory")}
	}
	return append([]byte(nil), f.data...), nil
}

// WriteFile creates or replaces a file. Its directory must exist.
func (p *Phone) WriteFile(name string, data []byte, mode fs.FileMode) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.writeFileLocked(name, data, mode, false)
}

func (p *Phone) writeFileLocked(name string, data []byte, mode fs.FileMode, appendTo bool) error {
	c := cleanPath(name)
	if c == "/dev/null" {
		return nil
	}
	if d, ok := p.files[path.Dir(c)]; !ok || !d.dir {
		return &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	old, exists := p.files[c]
	if exists && old.dir {
		return &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("is a directory")}
	}
	if mode == 0 {
		mode = 0o660
	}
	buf := append([]byte(nil), data...)
	if appendTo && exists {
		buf = append(append([]byte(nil), old.data...), data...)
	}
	p.files[c] = &memFile{data: buf, mode: mode.Perm(), mod: p.now()}
	return nil
}

func (p *Phone) removeLocked(name string, recursive bool) error {
	c := cleanPath(name)
	f, ok := p.files[c]
	if !ok {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	if f.dir {
		if !recursive {
			return &fs.PathError{Op: "remove", Path: name, Err: fmt.Errorf("Is a directory")}
		}
		for k := range p.files {
			if strings.HasPrefix(k, c+"/") {
				delete(p.files, k)
			}
		}
	}
	delete(p.files, c)
	return nil
}

func (p *Phone) mkdirLocked(name string, parents bool) error {
	c := cleanPath(name)
	if f, ok := p.files[c]; ok {
		if f.dir && parents {
			return nil
		}
		return &fs.PathError{Op: "mkdir", Path: name, Err: fs.ErrExist}
	}
	if _, ok := p.files[path.Dir(c)]; !ok {
		if !parents {
			return &fs.PathError{Op: "mkdir", Path: name, Err: fs.ErrNotExist}
		}
		if err := p.mkdirLocked(path.Dir(c), true); err != nil {
			return err
		}
	}
	p.files[c] = &memFile{dir: true, mode: fs.ModeDir | 0o771, mod: p.now()}
	return nil
}

// Stat describes a file or directory.
func (p *Phone) Stat(name string) (fs.FileInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := cleanPath(name)
	f, ok := p.files[c]
	if !ok {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return fileInfo{name: path.Base(c), f: f}, nil
}

// ReadDir lists a directory, sorted by name.
func (p *Phone) ReadDir(name string) ([]fs.FileInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.readDirLocked(name)
}

func (p *Phone) readDirLocked(name string) ([]fs.FileInfo, error) {
	c := cleanPath(name)
	d, ok := p.files[c]
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	if !d.dir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fmt.Errorf("not a directory")}
	}
	var out []fs.FileInfo
	for k, f := range p.files {
		if k != c && path.Dir(k) == c {
			out = append(out, fileInfo{name: path.Base(k), f: f})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}
