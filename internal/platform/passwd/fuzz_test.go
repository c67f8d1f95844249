package passwd

import (
	"testing"
)

// FuzzVerify checks that no stored string, however damaged, makes Verify
// panic, and that whatever decode accepts is within the bounds.
func FuzzVerify(f *testing.F) {
	f.Add("$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "password")
	f.Add("$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAA", "")
	f.Add("$argon2id$v=19$m=4294967295,t=4294967295,p=255$$", "x")
	f.Add("$argon2id$v=19$m=0,t=0,p=0$c2FsdA$AA", "x")
	f.Add("$$$$$", "x")
	f.Fuzz(func(t *testing.T, encoded, password string) {
		p, err := decode(encoded)
		if err != nil {
			return
		}
		if p.memory < 8*uint32(p.lanes) || p.memory > maxMemoryKiB || p.passes < 1 || p.passes > maxPasses ||
			p.lanes < 1 || p.lanes > maxLanes || len(p.salt) < minSaltLen || len(p.salt) > maxSaltLen ||
			len(p.key) < minKeyLen || len(p.key) > maxKeyLen {
			t.Fatalf("decode(%q) accepted out-of-bounds parameters %+v", encoded, p)
		}
		// Large in-bounds costs are legitimate but would make the fuzzer
		// crawl; the parsing above is what is under test.
		if uint64(p.memory)*uint64(p.passes) > 4096 {
			return
		}
		if _, err := Verify(encoded, password); err != nil {
			t.Fatalf("Verify(%q) failed after decode accepted it: %v", encoded, err)
		}
	})
}
