package perception

import (
	"bytes"
	"encoding/xml"
	"io"
	"testing"
)

const largeFixture = "jukandian_news_article_large.xml" // 504 nodes, 169 KB

// BenchmarkParseAndListing is what every observe step costs: parse the
// 504-node dump and encode the prompt listing.
func BenchmarkParseAndListing(b *testing.B) {
	data := readFixture(b, largeFixture)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sc, err := Parse(data, Options{})
		if err != nil {
			b.Fatal(err)
		}
		_ = sc.Listing()
	}
}

// BenchmarkParse is the parse alone.
func BenchmarkParse(b *testing.B) {
	data := readFixture(b, largeFixture)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFingerprint is the cost of one Settle comparison.
func BenchmarkFingerprint(b *testing.B) {
	sc, err := Parse(readFixture(b, largeFixture), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = sc.Fingerprint()
	}
}

// BenchmarkEncodingXMLTokens is context, not a competitor: only tokenising
// the same dump with encoding/xml, building nothing.
func BenchmarkEncodingXMLTokens(b *testing.B) {
	data := readFixture(b, largeFixture)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d := xml.NewDecoder(bytes.NewReader(data))
		for {
			_, err := d.RawToken()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
