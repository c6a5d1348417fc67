package editdist

import "testing"

func TestRunes(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"kitten", "sitting", 3},
		{"taobao", "taobao", 0}, {"淘宝", "淘宝网", 1}, {"flaw", "lawn", 2}, {"设置", "设备", 1},
	} {
		if got := Runes([]rune(tc.a), []rune(tc.b)); got != tc.want {
			t.Errorf("Runes(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
