package scene

// Field is which attribute a Selector looks at.
type Field string

// The fields a Selector can match.
const (
	FieldLabel Field = ""      // text or content-desc
	FieldText  Field = "text"  // text only
	FieldDesc  Field = "desc"  // content-desc only
	FieldID    Field = "id"    // resource-id, full or the part after ":id/"
	FieldClass Field = "class" // class name, full or the simple name
	FieldIndex Field = "index" // element index in the Scene (Value is the decimal index)
)

// Mode is how strictly a Selector's value must match.
type Mode string

// Matching modes. The empty Mode tries exact, then contains, then fuzzy, and
// ranks the results in that order.
const (
	ModeAny      Mode = ""
	ModeExact    Mode = "exact"
	ModeContains Mode = "contains"
	ModeFuzzy    Mode = "fuzzy"
)

// Selector names an element by what a person sees, resolved against the
// Scene of the moment. Matching is case-insensitive and works for any script.
type Selector struct {
	Field Field  `json:"field,omitempty"`
	Value string `json:"value,omitempty"`
	Mode  Mode   `json:"mode,omitempty"`
	// Editable and Clickable narrow the match to such elements (a clickable
	// ancestor of a label counts: the match resolves to that ancestor).
	Editable  bool `json:"editable,omitempty"`
	Clickable bool `json:"clickable,omitempty"`
}

// Match is one element a Selector found, with its rank: higher is better.
type Match struct {
	Element Element
	Score   float64
}
