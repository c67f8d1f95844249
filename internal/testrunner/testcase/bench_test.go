package testcase

import (
	"strings"
	"testing"
)

func BenchmarkParse(b *testing.B) {
	docs := map[string][]byte{
		"typical":   func() []byte { d, _ := Marshal(sampleCase()); return d }(),
		"200 steps": []byte("id: a\ntitle: t\nsteps:\n" + strings.Repeat("  - action: open the page and check the title\n    expected: it shows\n", 200)),
		"deep arguments": []byte("id: a\ntitle: t\nsteps:\n  - action: x\n    tool:\n      server: s\n      name: n\n      arguments:\n        a: " +
			strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n"),
	}
	for name, doc := range docs {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if _, err := Parse(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
