package testcase

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"cpesuite/internal/platform/apperr"
)

// index remembers the summary of every case file by size and modification
// time, so List and the id check parse only files that changed since the
// last look instead of the whole folder each time. The store's own writes
// drop their entry explicitly, which covers file systems whose clocks are
// too coarse to tell two quick writes apart.
type index struct {
	mu      sync.Mutex
	entries map[string]indexEntry
}

type indexEntry struct {
	size int64
	mod  time.Time
	sum  Summary
	err  string
}

func (x *index) get(file string, size int64, mod time.Time) (indexEntry, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	e, ok := x.entries[file]
	return e, ok && e.size == size && e.mod.Equal(mod)
}

func (x *index) put(file string, e indexEntry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.entries[file] = e
}

func (x *index) forget(file string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.entries, file)
}

// keepOnly drops the entries of files that are gone.
func (x *index) keepOnly(files map[string]bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for f := range x.entries {
		if !files[f] {
			delete(x.entries, f)
		}
	}
}

// scanned is one case file as scan saw it: a summary, or the reason it
// could not be read.
type scanned struct {
	file string
	sum  Summary
	err  string
}

// caseFiles lists the names of the folder's case files, sorted: regular
// files ending in .yaml or .yml that are not hidden (the atomic writer's
// temporary files start with a dot). The caller holds mu.
func (s *Store) caseFiles() ([]string, error) {
	des, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, apperr.Internal(fmt.Errorf("listing cases: %w", err))
	}
	var names []string
	for _, de := range des {
		name := de.Name()
		if de.Type().IsRegular() && hasCaseExt(name) && !strings.HasPrefix(name, ".") {
			names = append(names, name)
		}
	}
	return names, nil
}

// scan summarises every case file, parsing only those the index does not
// know in their current version. The caller holds mu.
func (s *Store) scan() ([]scanned, error) {
	names, err := s.caseFiles()
	if err != nil {
		return nil, err
	}
	out := make([]scanned, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		seen[name] = true
		out = append(out, s.scanOne(name))
	}
	s.index.keepOnly(seen)
	return out, nil
}

func (s *Store) scanOne(name string) scanned {
	if err := ValidFileName(name); err != nil {
		return scanned{file: name, err: apperr.PublicMessage(err)}
	}
	fi, err := os.Lstat(s.path(name))
	if err != nil {
		return scanned{file: name, err: "cannot read the file"}
	}
	if e, ok := s.index.get(name, fi.Size(), fi.ModTime()); ok {
		return scanned{file: name, sum: e.sum, err: e.err}
	}
	e := indexEntry{size: fi.Size(), mod: fi.ModTime()}
	c, err := s.parseFile(name)
	if err != nil {
		if apperr.Status(err) == http.StatusInternalServerError {
			return scanned{file: name, err: "cannot read the file"} // not remembered: may be passing
		}
		e.err = apperr.PublicMessage(err)
	} else {
		e.sum = Summarize(name, c)
	}
	s.index.put(name, e)
	return scanned{file: name, sum: e.sum, err: e.err}
}

func (s *Store) parseFile(name string) (*Case, error) {
	data, err := s.read(name)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}
