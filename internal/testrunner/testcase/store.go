package testcase

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/fsx"
)

// Store keeps cases as YAML files in one folder. Every file name goes
// through ValidFileName, writes are atomic and serialised, reads run
// concurrently. Hand-made files in the folder are welcome: List reports
// the ones that do not parse instead of hiding them.
type Store struct {
	dir string
	// mu is held for writing by every change and for reading by every
	// read, so a read-modify-write (Update, the id check of Create) sees
	// no change of another writer half-way.
	mu    sync.RWMutex
	index index
}

// FileError is a case file List could not read or parse.
type FileError struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

// OpenStore opens the case folder dir, creating it (mode 0750) if needed.
func OpenStore(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("creating case folder: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("opening case folder: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("case folder %s is not a directory", dir)
	}
	return &Store{dir: dir, index: index{entries: map[string]indexEntry{}}}, nil
}

// List summarises every .yaml and .yml file of the folder, sorted by file
// name. Files that cannot be read or parsed are returned as FileErrors.
// Neither list is nil.
func (s *Store) List() ([]Summary, []FileError, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	entries, err := s.scan()
	if err != nil {
		return nil, nil, err
	}
	sums := make([]Summary, 0, len(entries))
	bad := []FileError{}
	for _, e := range entries {
		if e.err != "" {
			bad = append(bad, FileError{File: e.file, Error: e.err})
			continue
		}
		sums = append(sums, e.sum.clone())
	}
	return sums, bad, nil
}

// Get reads and parses one case.
func (s *Store) Get(file string) (*Case, error) {
	data, err := s.Raw(file)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Raw returns the bytes of one case file as stored.
func (s *Store) Raw(file string) ([]byte, error) {
	if err := ValidFileName(file); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.read(file)
}

// Create stores a new case in file. It refuses a file that exists
// (CASE_EXISTS) and an id another file already uses (CASE_ID_EXISTS).
func (s *Store) Create(file string, c *Case) error {
	data, err := s.prepare(file, c)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, err := s.state(file); err != nil {
		return err
	} else if st != absent {
		return apperr.Conflict("CASE_EXISTS", "test case file %s already exists", file)
	}
	if err := s.checkID(file, c.ID); err != nil {
		return err
	}
	return s.write(file, data)
}

// Put replaces the case in file, which must exist. Changing the id to one
// another file uses is refused (CASE_ID_EXISTS).
func (s *Store) Put(file string, c *Case) error {
	data, err := s.prepare(file, c)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, err := s.state(file); err != nil {
		return err
	} else if st != regular {
		return notFound(file)
	}
	if err := s.checkNewID(file, c.ID); err != nil {
		return err
	}
	return s.write(file, data)
}

// PutRaw parses and validates data, then stores it byte for byte, so the
// author's comments and layout survive. created tells whether file is new.
func (s *Store) PutRaw(file string, data []byte) (created bool, err error) {
	if err := ValidFileName(file); err != nil {
		return false, err
	}
	c, err := Parse(data)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.state(file)
	if err != nil {
		return false, err
	}
	if st == other {
		return false, apperr.Conflict("CASE_EXISTS", "%s exists and is not a case file", file)
	}
	if err := s.checkNewID(file, c.ID); err != nil {
		return false, err
	}
	return st == absent, s.write(file, data)
}

// Delete removes one case file.
func (s *Store) Delete(file string) error {
	if err := ValidFileName(file); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, err := s.state(file); err != nil {
		return err
	} else if st != regular {
		return notFound(file)
	}
	if err := os.Remove(s.path(file)); err != nil {
		return apperr.Internal(fmt.Errorf("deleting case %s: %w", file, err))
	}
	s.index.forget(file)
	return nil
}

// DeleteAll removes every case file, unparsable ones included, and says
// how many it removed.
func (s *Store) DeleteAll() (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names, err := s.caseFiles()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		if err := os.Remove(s.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, apperr.Internal(fmt.Errorf("deleting case %s: %w", name, err))
		}
		s.index.forget(name)
		n++
	}
	return n, nil
}

// Sections lists the distinct non-empty sections of the parsable cases,
// sorted.
func (s *Store) Sections() ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	entries, err := s.scan()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	out := []string{}
	for _, e := range entries {
		if e.sum.Section != "" && !seen[e.sum.Section] {
			seen[e.sum.Section] = true
			out = append(out, e.sum.Section)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Update reads the case in file, lets fn change it and writes it back, all
// under the store lock so concurrent updates never lose one another's
// changes. The file is rewritten in canonical form (comments are lost). An
// error from fn is returned unchanged and nothing is written.
func (s *Store) Update(file string, fn func(*Case) error) error {
	if err := ValidFileName(file); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	data, err := s.read(file)
	if err != nil {
		return err
	}
	c, err := Parse(data)
	if err != nil {
		return err
	}
	oldID := c.ID
	if err := fn(c); err != nil {
		return err
	}
	if data, err = s.prepare(file, c); err != nil {
		return err
	}
	if c.ID != oldID {
		if err := s.checkID(file, c.ID); err != nil {
			return err
		}
	}
	return s.write(file, data)
}

// prepare validates a case given as a value and renders its file.
func (s *Store) prepare(file string, c *Case) ([]byte, error) {
	if err := ValidFileName(file); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	data, err := Marshal(c)
	if err != nil {
		return nil, apperr.Internal(err)
	}
	return data, nil
}

// checkID refuses id when a file other than file holds it, unless file
// itself already has that id: existing duplicates (hand-copied files) stay
// editable, new ones cannot be made here. The caller holds mu for writing.
func (s *Store) checkID(file, id string) error {
	entries, err := s.scan()
	if err != nil {
		return err
	}
	owner := ""
	for _, e := range entries {
		if e.err != "" || e.sum.ID != id {
			continue
		}
		if e.file == file {
			return nil
		}
		if owner == "" {
			owner = e.file
		}
	}
	if owner != "" {
		return apperr.Conflict("CASE_ID_EXISTS", "test case id %s is already used by %s", id, owner)
	}
	return nil
}

// checkNewID is checkID for a replacement: keeping the id file already has
// needs no look at the other files, which keeps bulk edits (project
// renames touch every case of a project) from scanning the folder once per
// file. The caller holds mu for writing.
func (s *Store) checkNewID(file, id string) error {
	if e := s.scanOne(file); e.err == "" && e.sum.ID == id {
		return nil
	}
	return s.checkID(file, id)
}

// read returns the bytes of file; a missing file, or one that is not a
// regular file (a directory or symbolic link with a case name), is
// CASE_NOT_FOUND. The caller holds mu.
func (s *Store) read(file string) ([]byte, error) {
	f, err := s.open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxDocumentSize+1))
	if err != nil {
		return nil, apperr.Internal(fmt.Errorf("reading case %s: %w", file, err))
	}
	if len(data) > MaxDocumentSize {
		return nil, apperr.New(apperr.ErrTooLarge, "CASE_TOO_LARGE", "test case file %s is larger than %d bytes", file, MaxDocumentSize)
	}
	return data, nil
}

func (s *Store) open(file string) (*os.File, error) {
	path := s.path(file)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !fi.Mode().IsRegular() {
		return nil, notFound(file)
	}
	if err != nil {
		return nil, apperr.Internal(fmt.Errorf("reading case %s: %w", file, err))
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notFound(file)
	}
	if err != nil {
		return nil, apperr.Internal(fmt.Errorf("reading case %s: %w", file, err))
	}
	return f, nil
}

// fileState says what occupies a case file name.
type fileState int

const (
	absent  fileState = iota
	regular           // a case file
	other             // a directory, symbolic link or device: never a case
)

// state reports what occupies file. The caller holds mu.
func (s *Store) state(file string) (fileState, error) {
	fi, err := os.Lstat(s.path(file))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return absent, nil
	case err != nil:
		return absent, apperr.Internal(fmt.Errorf("checking case %s: %w", file, err))
	case fi.Mode().IsRegular():
		return regular, nil
	}
	return other, nil
}

// write replaces file atomically. The caller holds mu for writing.
func (s *Store) write(file string, data []byte) error {
	if err := fsx.WriteFileAtomic(s.path(file), data); err != nil {
		return apperr.Internal(fmt.Errorf("writing case %s: %w", file, err))
	}
	s.index.forget(file)
	return nil
}

// path joins a checked file name to the folder.
func (s *Store) path(file string) string {
	return filepath.Join(s.dir, file)
}

func notFound(file string) error {
	return apperr.NotFound("CASE_NOT_FOUND", "test case %s not found", file)
}
