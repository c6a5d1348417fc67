package scene

import "unicode/utf8"

// EstimateTokens guesses how many model tokens text costs, without a
// tokenizer: about 4 bytes per token for ASCII (English words, ids,
// punctuation: the usual rule of thumb for BPE tokenizers) and one token per
// non-ASCII rune (a CJK character costs about one in modern tokenizers;
// accented letters, symbols and emoji one or more). It is meant for budgets
// and comparisons, not billing.
func EstimateTokens(text string) int {
	ascii, other := 0, 0
	for i := 0; i < len(text); {
		if text[i] < utf8.RuneSelf {
			ascii++
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(text[i:])
		i += n
		other++
	}
	return (ascii+3)/4 + other
}
