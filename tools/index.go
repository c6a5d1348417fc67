package tools

import (
	"encoding/json"
	"fmt"
	"math"
)

// Index is an "element" argument: the [N] index of an element in the Scene
// the call was planned on. It decodes from 4 and from 4.0 (models write
// both; the schema's integer type accepts both).
type Index int

// UnmarshalJSON accepts a JSON number with an integral value.
func (i *Index) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	if f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return fmt.Errorf("element index %s is not an integer index", b)
	}
	*i = Index(f)
	return nil
}

// elementOnlySchema is the arguments' schema of a tool whose one argument
// is the element it acts on (tap, long_press).
const elementOnlySchema = `{
  "type": "object",
  "properties": {
    "element": {"type": "integer", "minimum": 0, "description": "The [N] index of the element in the CURRENT screen listing."}
  },
  "required": ["element"],
  "additionalProperties": false
}`
