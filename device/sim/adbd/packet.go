package adbd

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Transport commands: the four ASCII bytes of each name read as a
// little-endian uint32 (protocol.txt).
const (
	cmdCNXN uint32 = 0x4e584e43
	cmdAUTH uint32 = 0x48545541
	cmdOPEN uint32 = 0x4e45504f
	cmdOKAY uint32 = 0x59414b4f
	cmdWRTE uint32 = 0x45545257
	cmdCLSE uint32 = 0x45534c43
	cmdSTLS uint32 = 0x534c5453
	cmdSYNC uint32 = 0x434e5953
)

// AUTH packet types (arg0).
const (
	authToken        = 1
	authSignature    = 2
	authRSAPublicKey = 3
)

const (
	// versionMin is the original protocol version: data_check is a byte sum.
	versionMin uint32 = 0x01000000
	// versionSkipChecksum is the version we answer with; once negotiated,
	// data_check is sent as 0 (adb 29 never verifies it anyway).
	versionSkipChecksum uint32 = 0x01000001
	// maxPayloadV1 is the payload limit every peer accepts before CNXN;
	// the banner must fit in it.
	maxPayloadV1 = 4096
	// DefaultMaxData is the payload limit a modern adbd announces (1 MiB),
	// the same the adb 29 host announces.
	DefaultMaxData = 1 << 20
	headerSize     = 24
)

// packet is one transport message: the 24-byte header plus payload.
type packet struct {
	cmd, arg0, arg1 uint32
	data            []byte
}

func cmdName(c uint32) string {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], c)
	for _, ch := range b {
		if ch < 'A' || ch > 'Z' {
			return fmt.Sprintf("0x%08x", c)
		}
	}
	return string(b[:])
}

func (p packet) String() string {
	return fmt.Sprintf("%s(%#x, %#x, %d bytes)", cmdName(p.cmd), p.arg0, p.arg1, len(p.data))
}

// protocolError is a malformed packet from the peer; the transport is
// closed with it as the logged reason.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return "adb protocol: " + e.msg }

// readPacket reads one packet whose payload must not exceed maxData.
// It never trusts the header: a bad magic or an oversized length is a
// protocolError, not a huge allocation.
func readPacket(r io.Reader, maxData uint32) (packet, error) {
	var h [headerSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return packet{}, err
	}
	p := packet{
		cmd:  binary.LittleEndian.Uint32(h[0:]),
		arg0: binary.LittleEndian.Uint32(h[4:]),
		arg1: binary.LittleEndian.Uint32(h[8:]),
	}
	n := binary.LittleEndian.Uint32(h[12:])
	magic := binary.LittleEndian.Uint32(h[20:])
	if magic != p.cmd^0xffffffff {
		return packet{}, &protocolError{fmt.Sprintf("bad magic %#08x for command %s", magic, cmdName(p.cmd))}
	}
	if n > maxData {
		return packet{}, &protocolError{fmt.Sprintf("%s payload of %d bytes exceeds max %d", cmdName(p.cmd), n, maxData)}
	}
	if n > 0 {
		p.data = make([]byte, n)
		if _, err := io.ReadFull(r, p.data); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return packet{}, err
		}
	}
	// data_check is deliberately ignored: adb 29 sends 0 after negotiating
	// 0x01000001 and never verifies ours either.
	return p, nil
}

// encode renders the packet; withChecksum fills data_check with the byte
// sum that protocol version 0x01000000 peers expect.
func (p packet) encode(withChecksum bool) []byte {
	b := make([]byte, headerSize+len(p.data))
	binary.LittleEndian.PutUint32(b[0:], p.cmd)
	binary.LittleEndian.PutUint32(b[4:], p.arg0)
	binary.LittleEndian.PutUint32(b[8:], p.arg1)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(p.data)))
	if withChecksum {
		var sum uint32
		for _, c := range p.data {
			sum += uint32(c)
		}
		binary.LittleEndian.PutUint32(b[16:], sum)
	}
	binary.LittleEndian.PutUint32(b[20:], p.cmd^0xffffffff)
	copy(b[headerSize:], p.data)
	return b
}
