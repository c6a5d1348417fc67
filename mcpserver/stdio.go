package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport is MCP over a process's input and output (newline-
// delimited JSON-RPC) with what the SDK's own transport lacks: a line that
// is not JSON is answered with a JSON-RPC parse error (-32700), and JSON
// that is not a JSON-RPC message with an invalid-request error (-32600, with
// the line's id when it has one); the session goes on. The SDK's transport
// ends the session on such a line without answering.
type StdioTransport struct {
	In  io.Reader
	Out io.Writer
	// MaxLine bounds one line; a longer one is answered with a parse error
	// and skipped. 0 means mcp.DefaultMaxLineLength.
	MaxLine int
}

// Connect starts reading In (until it ends) and returns the SDK's
// connection over the lines that are messages.
func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	max := t.MaxLine
	if max <= 0 {
		max = mcp.DefaultMaxLineLength
	}
	pr, pw := io.Pipe()
	out := &lockedWriter{w: t.Out}
	go screenLines(bufio.NewReaderSize(t.In, 64<<10), max, pw, out)
	return (&mcp.IOTransport{Reader: pr, Writer: out}).Connect(ctx)
}

// lockedWriter writes whole messages, one at a time: the SDK's and the
// screen's answers never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close leaves the process's output open.
func (l *lockedWriter) Close() error { return nil }

// screenLines passes each line of in that is a JSON-RPC message (or a
// batch of them) to pw, and answers each one that is not on out. It ends
// when in ends or the session stops reading.
func screenLines(in *bufio.Reader, max int, pw *io.PipeWriter, out io.Writer) {
	for {
		line, tooLong, err := readLine(in, max)
		if tooLong || len(bytes.TrimSpace(line)) > 0 {
			if reply := screen(line, tooLong, max); reply != nil {
				if _, werr := out.Write(reply); werr != nil {
					pw.CloseWithError(werr)
					return
				}
			} else if _, werr := pw.Write(append(line, '\n')); werr != nil {
				return // the session ended
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			pw.CloseWithError(err)
			return
		}
	}
}

// readLine reads one line (without its newline) of at most max bytes; a
// longer line is read to its end and dropped (tooLong).
func readLine(in *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := in.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}

// screen returns the error answer for a line that is not a JSON-RPC
// message (or batch), or nil for one that is.
func screen(line []byte, tooLong bool, max int) []byte {
	switch {
	case tooLong:
		return errorReply(nil, jsonrpc.CodeParseError, fmt.Sprintf("Parse error: a line longer than %d bytes", max))
	case !utf8.Valid(line):
		return errorReply(nil, jsonrpc.CodeParseError, "Parse error: the line is not UTF-8")
	case !json.Valid(line):
		return errorReply(nil, jsonrpc.CodeParseError, "Parse error: the line is not JSON")
	}
	var batch []json.RawMessage
	if json.Unmarshal(line, &batch) == nil {
		if len(batch) == 0 {
			return errorReply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: an empty batch")
		}
		for _, m := range batch {
			if err := checkMessage(m); err != nil {
				return errorReply(idOf(m), jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error())
			}
		}
		return nil
	}
	if err := checkMessage(line); err != nil {
		return errorReply(idOf(line), jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error())
	}
	return nil
}

// checkMessage says why m is not a JSON-RPC message: what the SDK's
// decoder refuses, and what it takes for a response though it has neither
// a result nor an error (the SDK would drop it without a word).
func checkMessage(m []byte) error {
	msg, err := jsonrpc.DecodeMessage(m)
	if err != nil {
		return err
	}
	if _, ok := msg.(*jsonrpc.Response); ok {
		var f map[string]json.RawMessage
		if json.Unmarshal(m, &f) == nil && f["result"] == nil && f["error"] == nil {
			return errors.New("no method, no result and no error")
		}
	}
	return nil
}

// idOf is a message's id when it is a string or a number, else nil.
func idOf(m []byte) json.RawMessage {
	var v struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(m, &v) != nil || len(v.ID) == 0 {
		return nil
	}
	switch v.ID[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return v.ID
	}
	return nil
}

// rpcError is a JSON-RPC error response.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcErrorBody    `json:"error"`
}

type rpcErrorBody struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// errorReply is a JSON-RPC error response line (id null when nil).
func errorReply(id json.RawMessage, code int64, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(rpcError{JSONRPC: "2.0", ID: id, Error: rpcErrorBody{code, msg}})
	return append(b, '\n')
}
