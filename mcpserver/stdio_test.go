package mcpserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A line that is not a JSON-RPC message is answered with the JSON-RPC
// error its kind calls for (parse error -32700 for what is not JSON or is
// too long, invalid request -32600 for JSON that is no message, with its id
// when it has one), and the session goes on: the next request is answered.
// The SDK's own stdio transport ended the session at the first such line.
func TestStdioAnswersMalformedLines(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	done := make(chan error, 1)
	go func() { done <- srv.Run(t.Context(), &StdioTransport{In: inR, Out: outW, MaxLine: 4096}) }()
	lines := []struct {
		send string
		code int64  // 0: a result
		id   string // the answer's id, as JSON
	}{
		{`this is not json`, -32700, "null"},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize",`, -32700, "null"},
		{"{\"a\":\"\xff\"}", -32700, "null"},
		{strings.Repeat("x", 5000), -32700, "null"},
		{`{"hello":"world"}`, -32600, "null"},
		{`42`, -32600, "null"},
		{`[]`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":9,"params":{}}`, -32600, "9"},
		{`{"jsonrpc":"2.0","id":"x","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}`, 0, `"x"`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, -1, ""}, // no answer
		{`not json again`, -32700, "null"},
		{`{"jsonrpc":"2.0","id":2,"method":"ping"}`, 0, "2"},
	}
	go func() {
		for _, l := range lines {
			io.WriteString(inW, l.send+"\n")
		}
	}()
	// The screen answers at once and the SDK in its own time: compare the
	// answers as a set.
	var want, got []string
	for _, l := range lines {
		switch l.code {
		case -1:
		case 0:
			want = append(want, "result "+l.id)
		default:
			want = append(want, fmt.Sprintf("error %d %s", l.code, l.id))
		}
	}
	answers := make(chan string)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			answers <- sc.Text()
		}
		close(answers)
	}()
	for range want {
		var line string
		select {
		case line = <-answers:
		case <-time.After(10 * time.Second):
			t.Fatalf("answers so far %v, want %v", got, want)
		}
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   *struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.JSONRPC != "2.0" {
			t.Fatalf("%q is not JSON-RPC", line)
		}
		if m.Error != nil {
			got = append(got, fmt.Sprintf("error %d %s", m.Error.Code, m.ID))
		} else {
			got = append(got, "result "+string(m.ID))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("answers %v, want %v", got, want)
	}
	inW.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end when its input did")
	}
}
