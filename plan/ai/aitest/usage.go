package aitest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg" // screenshots may be sent as JPEG
	_ "image/png"
	"slices"
	"strings"

	"phonepilot/plan/ai/tokens"
)

// Usage is what a stand-in server reports for one request, the way the
// real APIs do: every input token, the parts read from and written to the
// prompt cache, and the output.
type Usage struct {
	Input, CacheRead, CacheWrite, Output int
}

// Uncached is the input neither read from nor written to the cache.
func (u Usage) Uncached() int { return u.Input - u.CacheRead - u.CacheWrite }

// The caches' rules, as the providers document them.
const (
	// Anthropic (platform.claude.com, "Prompt caching"): a prefix shorter
	// than 1024 tokens (Sonnet, Opus) is not cached; a breakpoint looks
	// back at most 20 blocks for an earlier cache entry; at most 4
	// breakpoints per request.
	anthropicMinCache  = 1024
	anthropicLookback  = 20
	anthropicMaxBreaks = 4
	// The tool-use system prompt Anthropic adds to a request with tools
	// and tool_choice any or tool (the "Tool use" pricing table, Claude
	// Sonnet: 313 tokens; auto or none: 346).
	anthropicToolPrompt = 313
	// OpenAI (platform.openai.com, "Prompt caching"): prompts of 1024
	// tokens or more are cached, the hit growing in 128-token steps.
	openaiMinCache  = 1024
	openaiCacheStep = 128
	// Tokens around each chat message (OpenAI's cookbook counts 3 per
	// message and 3 priming the reply).
	perMessage = 3
)

// block is one cacheable unit of a request: its content (cache_control
// removed) and its token count.
type block struct {
	key    []byte
	tokens int
	brk    bool // carries a cache_control breakpoint
	screen bool // the current screen: an image, or text holding a <screen> listing
}

// isScreen tells a block of the current screen: an image, or text with a
// screen listing.
func isScreen(v any) bool {
	m, _ := v.(map[string]any)
	switch m["type"] {
	case "image", "image_url":
		return true
	case "text":
		return strings.Contains(str(m["text"]), "<screen>")
	}
	return false
}

// cache is a stand-in server's prompt cache: the prefixes written so far,
// by hash.
type cache map[[32]byte]bool

// prefixes hashes every prefix of blocks and sums their tokens.
func prefixes(blocks []block) (hashes [][32]byte, cum []int) {
	h := sha256.New()
	total := 0
	for _, b := range blocks {
		h.Write(b.key)
		h.Write([]byte{0})
		var sum [32]byte
		copy(sum[:], h.Sum(nil))
		total += b.tokens
		hashes, cum = append(hashes, sum), append(cum, total)
	}
	return hashes, cum
}

// anthropicBlocks is a Messages API request as the cache sees it: tools,
// system, then each message's content blocks, in order.
func anthropicBlocks(body []byte) ([]block, error) {
	var req struct {
		Tools      []map[string]any  `json:"tools"`
		System     json.RawMessage   `json:"system"`
		ToolChoice map[string]any    `json:"tool_choice"`
		Messages   []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	var blocks []block
	inMessages := false // the system prompt speaks of <screen> too
	add := func(v any, tokens int) {
		m, _ := v.(map[string]any)
		_, brk := m["cache_control"]
		if brk {
			m = clone(m)
			delete(m, "cache_control")
			v = m
		}
		key, _ := json.Marshal(v)
		blocks = append(blocks, block{key: key, tokens: tokens, brk: brk, screen: inMessages && isScreen(v)})
	}
	for _, t := range req.Tools {
		schema, _ := json.Marshal(t["input_schema"])
		add(t, tokens.Text(str(t["name"]))+tokens.Text(str(t["description"]))+tokens.Text(string(schema)))
	}
	if len(req.Tools) > 0 {
		// The tool-use prompt sits with the tools in the cached prefix.
		blocks[len(blocks)-1].tokens += anthropicToolPrompt
	}
	var system []map[string]any
	if len(req.System) > 0 && json.Unmarshal(req.System, &system) != nil {
		var s string
		_ = json.Unmarshal(req.System, &s)
		system = []map[string]any{{"type": "text", "text": s}}
	}
	for _, b := range system {
		add(b, tokens.Text(str(b["text"])))
	}
	inMessages = true
	for _, raw := range req.Messages {
		var m struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		var parts []map[string]any
		if json.Unmarshal(m.Content, &parts) != nil {
			var s string
			_ = json.Unmarshal(m.Content, &s)
			parts = []map[string]any{{"type": "text", "text": s}}
		}
		for i, p := range parts {
			n, err := anthropicBlockTokens(p)
			if err != nil {
				return nil, err
			}
			if i == 0 {
				n += perMessage
				p = clone(p)
				p["_role"] = m.Role // a block's place in the conversation is part of the prefix
			}
			add(p, n)
		}
	}
	return blocks, nil
}

// anthropicUsage accounts one Messages API request against c: the longest
// earlier cache entry a breakpoint finds (looking back up to 20 blocks) is
// read, everything from there to the last breakpoint is written, the rest
// is input.
func anthropicUsage(body []byte, c cache) (Usage, error) {
	blocks, err := anthropicBlocks(body)
	if err != nil {
		return Usage{}, err
	}
	hashes, cum := prefixes(blocks)
	var u Usage
	u.Input = cum[len(cum)-1]
	read, last, breaks := 0, -1, 0
	for i, b := range blocks {
		if !b.brk {
			continue
		}
		breaks++
		last = i
		for j := i; j >= 0 && j >= i-anthropicLookback; j-- {
			if c[hashes[j]] {
				read = max(read, cum[j])
				break
			}
		}
	}
	if breaks > anthropicMaxBreaks {
		return Usage{}, fmt.Errorf("A maximum of %d blocks with cache_control may be provided. Found %d.", anthropicMaxBreaks, breaks)
	}
	if last >= 0 && cum[last] >= anthropicMinCache {
		u.CacheRead = read
		u.CacheWrite = cum[last] - read
		for i, b := range blocks {
			if b.brk && cum[i] >= anthropicMinCache {
				c[hashes[i]] = true
			}
		}
	}
	return u, nil
}

func anthropicBlockTokens(p map[string]any) (int, error) {
	switch p["type"] {
	case "text":
		return tokens.Text(str(p["text"])), nil
	case "image":
		src, _ := p["source"].(map[string]any)
		w, h, err := imageSize(str(src["data"]))
		if err != nil {
			return 0, err
		}
		return tokens.AnthropicImage(w, h), nil
	case "tool_use":
		in, _ := json.Marshal(p["input"])
		return tokens.Text(str(p["name"])) + tokens.Text(string(in)), nil
	case "tool_result":
		switch c := p["content"].(type) {
		case string:
			return tokens.Text(c), nil
		case []any:
			n := 0
			for _, x := range c {
				m, _ := x.(map[string]any)
				k, err := anthropicBlockTokens(m)
				if err != nil {
					return 0, err
				}
				n += k
			}
			return n, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("unknown content block type %v", p["type"])
}

// openaiBlocks is a Chat Completions request as its cache sees it: tools,
// then each message's role and parts, in order; and its prompt_cache_key.
func openaiBlocks(body []byte) ([]block, string, error) {
	var req struct {
		Tools    []json.RawMessage `json:"tools"`
		Key      string            `json:"prompt_cache_key"`
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls json.RawMessage `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, "", err
	}
	var blocks []block
	add := func(key string, n int) { blocks = append(blocks, block{key: []byte(key), tokens: n}) }
	screen := func() { blocks[len(blocks)-1].screen = true }
	for _, t := range req.Tools {
		add(string(t), tokens.Text(string(t)))
	}
	for _, m := range req.Messages {
		add("role:"+m.Role, perMessage)
		var s string
		var parts []map[string]any
		switch {
		case json.Unmarshal(m.Content, &s) == nil:
			add(s, tokens.Text(s))
		case json.Unmarshal(m.Content, &parts) == nil:
			for _, p := range parts {
				switch p["type"] {
				case "text":
					add(str(p["text"]), tokens.Text(str(p["text"])))
					if isScreen(p) {
						screen()
					}
				case "image_url":
					iu, _ := p["image_url"].(map[string]any)
					url := str(iu["url"])
					_, data, _ := strings.Cut(url, ";base64,")
					w, h, err := imageSize(data)
					if err != nil {
						return nil, "", err
					}
					add(url, tokens.OpenAIImage(w, h, str(iu["detail"])))
					screen()
				}
			}
		}
		if len(m.ToolCalls) > 0 && string(m.ToolCalls) != "null" {
			add(string(m.ToolCalls), tokens.Text(string(m.ToolCalls)))
		}
	}
	add("reply", perMessage)
	// A user message that holds only the current screen is all screen.
	for i := len(blocks) - 2; i >= 0; i-- {
		if string(blocks[i].key) == "role:user" && blocks[i+1].screen {
			blocks[i].screen = true
		}
	}
	return blocks, req.Key, nil
}

// openaiUsage accounts one Chat Completions request: the longest prefix it
// shares with an earlier request of the same prompt_cache_key, in 128-token
// steps from 1024 on, is read from the cache (OpenAI writes its cache for
// free and reports no writes).
func openaiUsage(body []byte, seen map[string][][]block) (Usage, error) {
	blocks, key, err := openaiBlocks(body)
	if err != nil {
		return Usage{}, err
	}
	_, cum := prefixes(blocks)
	u := Usage{Input: cum[len(cum)-1]}
	best := 0
	for _, prev := range seen[key] {
		n := 0
		for i := 0; i < len(prev) && i < len(blocks) && bytes.Equal(prev[i].key, blocks[i].key); i++ {
			n = cum[i]
		}
		best = max(best, n)
	}
	if best >= openaiMinCache {
		u.CacheRead = openaiMinCache + (best-openaiMinCache)/openaiCacheStep*openaiCacheStep
	}
	seen[key] = append(seen[key], blocks)
	return u, nil
}

func imageSize(b64 string) (int, int, error) {
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return 0, 0, fmt.Errorf("image data is not base64: %v", err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return 0, 0, fmt.Errorf("image: %v", err)
	}
	return cfg.Width, cfg.Height, nil
}

func str(v any) string { s, _ := v.(string); return s }

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ExtendsCachedPrefix checks that request cur starts with everything prev
// sent before its current screen (the listing and the screenshot, which are
// sent once): the conversation only grows at its end, so the prompt cache
// holds all of it. On Anthropic, prev's last cache breakpoint must also sit
// right before its screen, and cur may carry at most 4.
func ExtendsCachedPrefix(prev, cur Turn) error {
	blocksOf := func(t Turn) ([]block, error) {
		if t.Provider == "anthropic" {
			return anthropicBlocks(t.Body)
		}
		b, _, err := openaiBlocks(t.Body)
		return b, err
	}
	pb, err := blocksOf(prev)
	if err != nil {
		return err
	}
	cb, err := blocksOf(cur)
	if err != nil {
		return err
	}
	end := slices.IndexFunc(pb, func(b block) bool { return b.screen })
	if end < 0 {
		return fmt.Errorf("turn %d has no current screen", prev.N)
	}
	if prev.Provider == "anthropic" {
		last := -1
		for i, b := range pb {
			if b.brk {
				last = i
			}
		}
		if last != end-1 {
			return fmt.Errorf("turn %d: the last cache breakpoint is on block %d, want %d (right before the screen)", prev.N, last, end-1)
		}
	}
	for i := range end {
		if i >= len(cb) || !bytes.Equal(pb[i].key, cb[i].key) {
			got := "nothing"
			if i < len(cb) {
				got = clip(string(cb[i].key))
			}
			return fmt.Errorf("block %d of %d differs: was %s, now %s", i, end, clip(string(pb[i].key)), got)
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}
