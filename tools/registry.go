package tools

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
)

// registry is every tool: a new tool is a file in this package whose *Tool
// is made by register, and nothing else lists it. init puts the tools the
// design (TOOLS.md) defines in its order, every other one after them by
// name, so planners, MCP clients and docs see one stable order.
var registry []*Tool

// designOrder is the order of the tools TOOLS.md defines: the order a
// planner is offered them in, which the design fixes.
var designOrder = []string{Tap, LongPress, TypeText, Scroll, PressKey, LaunchApp, Wait, FinishTask, AskUser}

// register adds t to the registry (each tool's file makes its *Tool with
// it) and returns it.
func register(t *Tool) *Tool {
	registry = append(registry, t)
	return t
}

// rank is where a tool sits: its place in designOrder, or after all of
// them.
func rank(t *Tool) int {
	if i := slices.Index(designOrder, t.name); i >= 0 {
		return i
	}
	return len(designOrder)
}

var (
	byName = map[string]*Tool{}
	names  []string
)

// init compiles each tool's schema once; a malformed literal is a
// programming error caught by any test of this package.
func init() {
	slices.SortStableFunc(registry, func(a, b *Tool) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a.name, b.name))
	})
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
		names = append(names, t.name)
	}
}
