// Package tokens counts what a model request costs when the provider does
// not say: text with a real tokenizer, images by each provider's published
// rule. Reported usage always wins over these counts; they serve servers
// that report none, the bench's estimates and the stand-in model servers of
// the tests.
//
// Text is counted with OpenAI's o200k_base encoding (the one of its current
// models), loaded from the tokenizer files shipped inside the Go module, on
// first use. Anthropic publishes no tokenizer for its current models; the
// same count stands in for it, and its reported usage replaces it wherever
// there is one.
package tokens

import (
	"fmt"
	"math"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

var (
	encOnce sync.Once
	enc     *tiktoken.Tiktoken
	encErr  error
)

func encoding() (*tiktoken.Tiktoken, error) {
	encOnce.Do(func() {
		tiktoken.SetBpeLoader(loader.NewOfflineLoader())
		enc, encErr = tiktoken.GetEncoding("o200k_base")
		if encErr != nil {
			encErr = fmt.Errorf("tokens: load o200k_base: %w", encErr)
		}
	})
	return enc, encErr
}

// Text is the number of tokens of s. Should the tokenizer fail to load (it
// ships inside the binary, so it should not), it falls back to one token
// per 3 bytes, which overcounts rather than under.
func Text(s string) int {
	if s == "" {
		return 0
	}
	e, err := encoding()
	if err != nil {
		return (len(s) + 2) / 3
	}
	return len(e.EncodeOrdinary(s))
}

// Anthropic's image rule (platform.claude.com, "Vision": "tokens =
// (width px * height px)/750"), after the API's own downscale of any image
// whose long edge exceeds 1568 px or whose area exceeds about 1.15
// megapixels.
const (
	anthropicMaxEdge   = 1568
	anthropicMaxPixels = 1_150_000
)

// AnthropicImage is what an image of w×h pixels costs on Anthropic.
func AnthropicImage(w, h int) int {
	if w <= 0 || h <= 0 {
		return 0
	}
	scale := 1.0
	if long := max(w, h); long > anthropicMaxEdge {
		scale = float64(anthropicMaxEdge) / float64(long)
	}
	if a := float64(w) * float64(h) * scale * scale; a > anthropicMaxPixels {
		scale *= math.Sqrt(anthropicMaxPixels / a)
	}
	if scale < 1 {
		w, h = max(1, int(float64(w)*scale)), max(1, int(float64(h)*scale))
	}
	return int(math.Ceil(float64(w) * float64(h) / 750))
}

// OpenAI's tile rule for its GPT-4o / GPT-4.1 / GPT-5 family
// (platform.openai.com, "Images and vision", "Calculating costs"): at
// detail "low" 85 tokens; otherwise the image is scaled to fit in
// 2048×2048, then so that its shortest side is 768 px, and costs 85 tokens
// plus 170 per 512 px tile.
const (
	openaiBase    = 85
	openaiPerTile = 170
)

// OpenAIImage is what an image of w×h pixels costs on OpenAI at the given
// detail ("low", "high", "auto" or "").
func OpenAIImage(w, h int, detail string) int {
	if w <= 0 || h <= 0 {
		return 0
	}
	if detail == "low" {
		return openaiBase
	}
	fw, fh := float64(w), float64(h)
	if long := max(fw, fh); long > 2048 {
		fw, fh = fw*2048/long, fh*2048/long
	}
	if short := min(fw, fh); short > 768 {
		fw, fh = fw*768/short, fh*768/short
	}
	tiles := int(math.Ceil(fw/512)) * int(math.Ceil(fh/512))
	return openaiBase + openaiPerTile*tiles
}
