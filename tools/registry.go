package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// registry is every tool, in the order of TOOLS.md. A new tool is a file in
// this package defining its *Tool, and one line here.
var registry = []*Tool{tapTool, longPressTool, typeTextTool, scrollTool, pressKeyTool, launchAppTool, waitTool, finishTaskTool, askUserTool}

var (
	byName  = map[string]*Tool{}
	schemas = map[string]*schema{}
	names   []string
)

// init compiles each tool's schema once; a malformed literal is a
// programming error caught by any test of this package.
func init() {
	for _, t := range registry {
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(t.schemaText)); err != nil {
			panic(fmt.Sprintf("tools: schema of %s is not JSON: %v", t.name, err))
		}
		sch, err := parseSchema(compact.Bytes())
		if err != nil {
			panic(fmt.Sprintf("tools: schema of %s: %v", t.name, err))
		}
		if _, dup := byName[t.name]; dup {
			panic("tools: two tools named " + t.name)
		}
		t.spec = Spec{Name: t.name, Description: t.description, Schema: json.RawMessage(compact.Bytes())}
		t.schema = sch
		byName[t.name] = t
		schemas[t.name] = sch
		names = append(names, t.name)
	}
}
