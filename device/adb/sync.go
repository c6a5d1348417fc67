package adb

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"time"
)

// Stream is a long-lived device service stream (a localabstract: socket, a
// process's output): unlike the one-shot calls it has no deadline of its
// own once open; SetDeadline bounds each use.
type Stream struct{ cn *conn }

// OpenStream opens service on serial's transport; ctx bounds only the opening.
func (c *Client) OpenStream(ctx context.Context, serial, service string) (*Stream, error) {
	cn, err := c.openService(ctx, serial, service)
	if err != nil {
		return nil, err
	}
	cn.stop() // detach from ctx: the stream outlives the call that opened it
	cn.Conn.SetDeadline(time.Time{})
	return &Stream{cn: cn}, nil
}

// Read reads through the buffer the status was read with (it may hold the
// service's first bytes).
func (s *Stream) Read(p []byte) (int, error)    { return s.cn.r.Read(p) }
func (s *Stream) Write(p []byte) (int, error)   { return s.cn.Conn.Write(p) }
func (s *Stream) SetDeadline(t time.Time) error { return s.cn.Conn.SetDeadline(t) }
func (s *Stream) Close() error                  { return s.cn.Close() }

// syncChunk is the most a sync DATA packet carries (SYNC_DATA_MAX).
const syncChunk = 64 << 10

func syncHeader(id string, n int) []byte {
	h := make([]byte, 8)
	copy(h, id)
	binary.LittleEndian.PutUint32(h[4:], uint32(n))
	return h
}

// FileStat is what sync STAT says about a path (zero Mode: it does not exist).
type FileStat struct {
	Mode uint32
	Size uint32
}

// Stat asks the phone's sync service about path.
func (c *Client) Stat(ctx context.Context, serial, path string) (FileStat, error) {
	cn, err := c.openService(ctx, serial, "sync:")
	if err != nil {
		return FileStat{}, err
	}
	defer cn.Close()
	if _, err := cn.Write(append(syncHeader("STAT", len(path)), path...)); err != nil {
		return FileStat{}, cn.wrap("sync STAT", err)
	}
	var r [16]byte
	if _, err := io.ReadFull(cn.r, r[:]); err != nil {
		return FileStat{}, cn.wrap("sync STAT reply", err)
	}
	if string(r[:4]) != "STAT" {
		return FileStat{}, fmt.Errorf("%w: sync STAT answered %q", ErrProtocol, r[:4])
	}
	cn.Write(syncHeader("QUIT", 0))
	return FileStat{Mode: binary.LittleEndian.Uint32(r[4:]), Size: binary.LittleEndian.Uint32(r[8:])}, nil
}

// Push writes data to path on the phone through the sync service (SEND,
// DATA chunks, DONE), as `adb push` does, and waits for the phone's OKAY.
func (c *Client) Push(ctx context.Context, serial, path string, data []byte, mode fs.FileMode, mtime time.Time) error {
	cn, err := c.openService(ctx, serial, "sync:")
	if err != nil {
		return err
	}
	defer cn.Close()
	spec := fmt.Sprintf("%s,%d", path, uint32(mode.Perm())|0o100000)
	var buf bytes.Buffer
	buf.Write(syncHeader("SEND", len(spec)))
	buf.WriteString(spec)
	for off := 0; off < len(data); off += syncChunk {
		end := min(off+syncChunk, len(data))
		buf.Write(syncHeader("DATA", end-off))
		buf.Write(data[off:end])
	}
	buf.Write(syncHeader("DONE", int(mtime.Unix())))
	if _, err := cn.Write(buf.Bytes()); err != nil {
		return cn.wrap("sync SEND "+path, err)
	}
	var r [8]byte
	if _, err := io.ReadFull(cn.r, r[:]); err != nil {
		return cn.wrap("sync SEND reply", err)
	}
	switch string(r[:4]) {
	case "OKAY":
		cn.Write(syncHeader("QUIT", 0))
		return nil
	case "FAIL":
		msg := make([]byte, min(binary.LittleEndian.Uint32(r[4:]), 4096))
		io.ReadFull(cn.r, msg)
		return fmt.Errorf("adb push %s: the phone said: %s", path, msg)
	}
	return fmt.Errorf("%w: sync SEND answered %q", ErrProtocol, r[:4])
}
