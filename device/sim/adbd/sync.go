package adbd

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
)

// Sync protocol limits (file_sync_protocol.h).
const (
	syncMaxPath = 1024
	syncMaxData = 64 << 10
	// syncMaxFile bounds what one SEND may accumulate in memory.
	syncMaxFile = 512 << 20
)

// Linux errno values reported in STA2/LST2 replies.
const (
	errnoENOENT = 2
	errnoEIO    = 5
	errnoEACCES = 13
)

// serveSync speaks the file sync protocol: 8-byte requests [id][len]
// followed by a path, split arbitrarily across the host's WRTEs (the
// bufio.Reader over the stream reassembles them). It returns, closing the
// stream, on QUIT, on a failure (as adbd does) or when the host goes away.
func (srv *Server) serveSync(s *stream) {
	r := bufio.NewReaderSize(s, 64<<10)
	w := bufio.NewWriterSize(s, s.t.chunkSize())
	defer w.Flush()
	for {
		id, n, err := readSyncHeader(r)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				srv.log.Debug("sync: reading request", "err", err)
			}
			return
		}
		if id == "QUIT" {
			return
		}
		switch id {
		case "STAT", "STA2", "LST2", "LIST", "RECV", "SEND":
		default:
			syncFail(w, fmt.Sprintf("unknown sync command %q", id))
			return
		}
		if n > syncMaxPath {
			syncFail(w, fmt.Sprintf("path too long (%d bytes)", n))
			return
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return
		}
		path := string(buf)
		ok := true
		switch id {
		case "STAT":
			srv.syncStat(w, path)
		case "STA2", "LST2":
			srv.syncStat2(w, id, path)
		case "LIST":
			srv.syncList(w, path)
		case "RECV":
			ok = srv.syncRecv(w, path)
		case "SEND":
			ok = srv.syncSend(r, w, path)
		}
		if w.Flush() != nil || !ok {
			return
		}
	}
}

func readSyncHeader(r io.Reader) (string, uint32, error) {
	var h [8]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return "", 0, err
	}
	return string(h[:4]), binary.LittleEndian.Uint32(h[4:]), nil
}

func putSyncHeader(w io.Writer, id string, n uint32) error {
	var h [8]byte
	copy(h[:4], id)
	binary.LittleEndian.PutUint32(h[4:], n)
	_, err := w.Write(h[:])
	return err
}

func syncFail(w io.Writer, msg string) {
	if putSyncHeader(w, "FAIL", uint32(len(msg))) == nil {
		io.WriteString(w, msg)
	}
}

// unixMode turns a Go file mode into st_mode bits.
func unixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	switch {
	case m.IsDir():
		u |= 0o040000
	case m&fs.ModeSymlink != 0:
		u |= 0o120000
	case m&fs.ModeNamedPipe != 0:
		u |= 0o010000
	case m&fs.ModeSocket != 0:
		u |= 0o140000
	case m&fs.ModeCharDevice != 0:
		u |= 0o020000
	case m&fs.ModeDevice != 0:
		u |= 0o060000
	default:
		u |= 0o100000
	}
	return u
}

func errnoOf(err error) uint32 {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errnoENOENT
	case errors.Is(err, fs.ErrPermission):
		return errnoEACCES
	default:
		return errnoEIO
	}
}

// syncStat answers STAT with (mode, size, mtime); all zero means missing.
func (srv *Server) syncStat(w io.Writer, path string) {
	var b [16]byte
	copy(b[:4], "STAT")
	if fi, err := srv.phone.Stat(path); err == nil {
		binary.LittleEndian.PutUint32(b[4:], unixMode(fi.Mode()))
		binary.LittleEndian.PutUint32(b[8:], uint32(fi.Size()))
		binary.LittleEndian.PutUint32(b[12:], uint32(fi.ModTime().Unix()))
	}
	w.Write(b[:])
}

// syncStat2 answers STA2/LST2 with the 72-byte stat_v2 record.
func (srv *Server) syncStat2(w io.Writer, id, path string) {
	var b [72]byte
	copy(b[:4], id)
	fi, err := srv.phone.Stat(path)
	if err != nil {
		binary.LittleEndian.PutUint32(b[4:], errnoOf(err))
		w.Write(b[:])
		return
	}
	mtime := uint64(fi.ModTime().Unix())
	// dev(8) ino(8) at 8..24 stay 0.
	binary.LittleEndian.PutUint32(b[24:], unixMode(fi.Mode()))
	binary.LittleEndian.PutUint32(b[28:], 1)    // nlink
	binary.LittleEndian.PutUint32(b[32:], 2000) // uid: shell
	binary.LittleEndian.PutUint32(b[36:], 2000) // gid
	binary.LittleEndian.PutUint64(b[40:], uint64(fi.Size()))
	binary.LittleEndian.PutUint64(b[48:], mtime) // atime
	binary.LittleEndian.PutUint64(b[56:], mtime)
	binary.LittleEndian.PutUint64(b[64:], mtime) // ctime
	w.Write(b[:])
}

// syncList answers LIST with one DENT per entry and a zero DONE dent; an
// unreadable directory is simply empty, as on adbd.
func (srv *Server) syncList(w io.Writer, path string) {
	entries, err := srv.phone.ReadDir(path)
	if err != nil {
		srv.log.Debug("sync LIST", "path", path, "err", err)
	}
	for _, fi := range entries {
		name := fi.Name()
		var b [20]byte
		copy(b[:4], "DENT")
		binary.LittleEndian.PutUint32(b[4:], unixMode(fi.Mode()))
		binary.LittleEndian.PutUint32(b[8:], uint32(fi.Size()))
		binary.LittleEndian.PutUint32(b[12:], uint32(fi.ModTime().Unix()))
		binary.LittleEndian.PutUint32(b[16:], uint32(len(name)))
		w.Write(b[:])
		io.WriteString(w, name)
	}
	var done [20]byte
	copy(done[:4], "DONE")
	w.Write(done[:])
}

// syncRecv streams a file as DATA chunks and DONE, or FAILs.
func (srv *Server) syncRecv(w io.Writer, path string) bool {
	data, err := srv.phone.ReadFile(path)
	if err != nil {
		syncFail(w, "open failed: "+errnoText(err))
		return false
	}
	for len(data) > 0 {
		n := min(len(data), syncMaxData)
		if putSyncHeader(w, "DATA", uint32(n)) != nil {
			return false
		}
		if _, err := w.Write(data[:n]); err != nil {
			return false
		}
		data = data[n:]
	}
	return putSyncHeader(w, "DONE", 0) == nil
}

func errnoText(err error) string {
	switch errnoOf(err) {
	case errnoENOENT:
		return "No such file or directory"
	case errnoEACCES:
		return "Permission denied"
	default:
		return err.Error()
	}
}

// syncSend receives "path,mode" then DATA… DONE(mtime), writes the file
// and answers OKAY, or FAILs.
func (srv *Server) syncSend(r io.Reader, w io.Writer, spec string) bool {
	path, mode := spec, fs.FileMode(0o644)
	if i := strings.LastIndexByte(spec, ','); i >= 0 {
		path = spec[:i]
		if m, err := strconv.ParseUint(spec[i+1:], 10, 32); err == nil {
			mode = fs.FileMode(m & 0o777)
		}
	}
	if path == "" {
		syncFail(w, "empty path")
		return false
	}
	var data []byte
	for {
		id, n, err := readSyncHeader(r)
		if err != nil {
			return false
		}
		switch id {
		case "DATA":
			if n > syncMaxData {
				syncFail(w, fmt.Sprintf("data too big (%d > %d)", n, syncMaxData))
				return false
			}
			if len(data)+int(n) > syncMaxFile {
				syncFail(w, fmt.Sprintf("file too large for the simulator (> %d bytes)", syncMaxFile))
				return false
			}
			start := len(data)
			data = append(data, make([]byte, n)...)
			if _, err := io.ReadFull(r, data[start:]); err != nil {
				return false
			}
		case "DONE":
			// n is the mtime; the phone keeps its own clock's time.
			if err := srv.phone.WriteFile(path, data, mode); err != nil {
				syncFail(w, "write failed: "+errnoText(err))
				return false
			}
			return putSyncHeader(w, "OKAY", 0) == nil
		default:
			syncFail(w, fmt.Sprintf("invalid data message %q", id))
			return false
		}
	}
}
