package tokens

import "testing"

func TestText(t *testing.T) {
	// o200k_base counts, as OpenAI's tokenizer gives them.
	for s, want := range map[string]int{"": 0, "hello world": 2, "Mac mini": 2} {
		if got := Text(s); got != want {
			t.Errorf("Text(%q) = %d, want %d", s, got, want)
		}
	}
	if n := Text("打开淘宝搜索Mac mini"); n < 4 || n > 10 {
		t.Errorf("Text(Chinese) = %d", n)
	}
}

func TestAnthropicImage(t *testing.T) {
	for _, c := range []struct{ w, h, want int }{
		{1000, 1000, 1334}, // the docs' table: 1000x1000 ≈ 1334
		{705, 1568, 1474},  // a phone screenshot at the long-edge limit
		{1080, 2400, 1474}, // scaled by the API to 705x1568 first
		{200, 200, 54},     // the docs: 200x200 ≈ 54
	} {
		if got := AnthropicImage(c.w, c.h); got != c.want {
			t.Errorf("AnthropicImage(%d, %d) = %d, want %d", c.w, c.h, got, c.want)
		}
	}
}

func TestOpenAIImage(t *testing.T) {
	for _, c := range []struct {
		w, h   int
		detail string
		want   int
	}{
		{1024, 1024, "high", 765},  // the docs: 768x768, 4 tiles
		{2048, 4096, "high", 1105}, // the docs: 1024x2048 → 768x1536, 6 tiles
		{4096, 8192, "low", 85},
		{705, 1568, "auto", 85 + 170*8},
	} {
		if got := OpenAIImage(c.w, c.h, c.detail); got != c.want {
			t.Errorf("OpenAIImage(%d, %d, %s) = %d, want %d", c.w, c.h, c.detail, got, c.want)
		}
	}
}
