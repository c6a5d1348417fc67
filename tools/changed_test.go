package tools

import (
	"testing"

	"phonepilot/scene"
)

// ChangedBeyondFields judges a submit on the dump: the activity the driver
// reads apart names the new page at once, while the dump can still show the
// old one (issue 12).
func TestChangedBeyondFieldsIgnoresTheActivity(t *testing.T) {
	field := scene.Element{Index: 0, Parent: -1, Class: "android.widget.EditText", Editable: true, Bounds: scene.Bounds{Left: 40, Top: 150, Right: 800, Bottom: 270}}
	hist := scene.Element{Index: 1, Parent: -1, Class: "android.widget.TextView", Text: "Search history", Bounds: scene.Bounds{Left: 40, Top: 300, Right: 500, Bottom: 380}}
	before := &scene.Scene{Package: "com.taobao.taobao", Activity: ".SearchActivity", Elements: []scene.Element{field, hist}}
	typed := field
	typed.Text = "Mac mini"
	oldFrame := &scene.Scene{Package: "com.taobao.taobao", Activity: ".MainSearchResultActivity", Elements: []scene.Element{typed, hist}}
	if ChangedBeyondFields(before, oldFrame) {
		t.Error("the search page with the query typed, under the results' activity, counted as the submit's effect")
	}
	results := &scene.Scene{Package: "com.taobao.taobao", Activity: ".MainSearchResultActivity", Elements: []scene.Element{typed,
		{Index: 1, Parent: -1, Class: "androidx.recyclerview.widget.RecyclerView", Scrollable: true, Bounds: scene.Bounds{Top: 400, Right: 1080, Bottom: 2200}}}}
	if !ChangedBeyondFields(before, results) {
		t.Error("the results page did not count as changed")
	}
}
