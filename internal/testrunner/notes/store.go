package notes

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/fsx"
	"cpesuite/internal/testrunner/identity"
)

// Config wires a Store.
type Config struct {
	// Dir holds one JSON document per note, Dir/<id>.json; it is created
	// with mode 0700 when missing.
	Dir   string
	Guard identity.Guard
	// Setting reads a worker setting: knowledge_refresh_url (empty means no
	// webhook) and knowledge_refresh_token (sent as a bearer token).
	Setting func(key string) string
	// HTTPClient calls the webhook; nil means a client with a 10 s time-out.
	HTTPClient *http.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	Log *slog.Logger
}

// Store keeps the notes in memory and on disk. Writes are serialised by
// wmu, which makes the expected_version check and the write one step; mu
// guards only the map, so reads never wait for a write's fsync. Notes in
// the map are never modified, only replaced.
type Store struct {
	dir     string
	guard   identity.Guard
	now     func() time.Time
	log     *slog.Logger
	opts    Options
	hook    *refresher
	maxNote int

	wmu   sync.Mutex
	mu    sync.RWMutex
	notes map[string]*Note // written under wmu and mu; read under either
	// blocked are ids of files that could not be loaded: they are kept out
	// of use so a new note never overwrites what an operator may repair.
	blocked map[string]bool
}

// New opens the store in cfg.Dir and loads the notes there. A file that
// cannot be read as a note is logged and skipped.
func New(cfg Config) (*Store, error) {
	if cfg.Dir == "" {
		return nil, errors.New("notes: Dir is required")
	}
	if cfg.Setting == nil {
		return nil, errors.New("notes: Setting is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("notes: creating %s: %w", cfg.Dir, err)
	}
	s := &Store{
		dir:     cfg.Dir,
		guard:   cfg.Guard,
		now:     cfg.Now,
		log:     cfg.Log,
		opts:    DefaultOptions(),
		hook:    newRefresher(cfg.HTTPClient, cfg.Setting, cfg.Log),
		maxNote: defaultMaxNotes,
		notes:   map[string]*Note{},
		blocked: map[string]bool{},
	}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) load() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("notes: reading %s: %w", s.dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		// Hidden files are fsx's temporary files left by a crash.
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		id := strings.TrimSuffix(name, ".json")
		n, err := readNote(filepath.Join(s.dir, name), id)
		if err != nil {
			s.log.Warn("skipping unreadable QA note file; fix or remove it", "file", name, "error", err.Error())
			s.blocked[id] = true
			continue
		}
		s.notes[id] = n
	}
	s.log.Info("QA notes loaded", "dir", s.dir, "notes", len(s.notes), "skipped", len(s.blocked))
	return nil
}

// readNote reads one stored note. It checks the structure only: a value
// dropped from an allowlist later must not make old notes vanish.
func readNote(path, id string) (*Note, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var n Note
	if err := json.Unmarshal(b, &n); err != nil {
		return nil, fmt.Errorf("not a note document: %w", err)
	}
	switch {
	case n.ID != id:
		return nil, fmt.Errorf("id %q does not match the file name", n.ID)
	case !isSlug(id) || len(id) > maxIDLen:
		return nil, fmt.Errorf("file name is not a valid note id")
	case strings.TrimSpace(n.Title) == "" || strings.TrimSpace(n.Body) == "":
		return nil, errors.New("title or body is empty")
	case n.Version < 1:
		return nil, fmt.Errorf("version %d is below 1", n.Version)
	}
	n.nonNil()
	return &n, nil
}

func (s *Store) path(id string) string { return filepath.Join(s.dir, id+".json") }

// persist writes n atomically; on failure the caller must leave memory
// unchanged, so disk and memory agree.
func (s *Store) persist(n *Note) error {
	b, err := json.MarshalIndent(n, "", "  ")
	if err != nil {
		return apperr.Internal(fmt.Errorf("encoding note %s: %w", n.ID, err))
	}
	if err := fsx.WriteFileAtomic(s.path(n.ID), append(b, '\n')); err != nil {
		return apperr.Wrap(apperr.ErrInternal, err, "STORAGE_FAILED", "the note could not be saved")
	}
	return nil
}

// put publishes n to readers; wmu must be held.
func (s *Store) put(n *Note) {
	s.mu.Lock()
	s.notes[n.ID] = n
	s.mu.Unlock()
}

func (s *Store) stamp() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// taken reports whether id is used by a note, a skipped file or a route
// word. wmu must be held.
func (s *Store) taken(id string) bool {
	return s.notes[id] != nil || s.blocked[id] || slices.Contains(reservedIDs, id)
}

func notFound(id string) error {
	return apperr.NotFound("NOTE_NOT_FOUND", "note %s not found", id)
}

// get returns a copy of note id.
func (s *Store) get(id string) (*Note, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := s.notes[id]
	if n == nil {
		return nil, notFound(id)
	}
	return n.clone(), nil
}

// create stores a new note; explicitID may be empty (derived from title).
func (s *Store) create(explicitID string, f fields, caller string) (*Note, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if len(s.notes) >= s.maxNote {
		return nil, apperr.Conflict("TOO_MANY_NOTES", "the worker holds %d notes, the most it keeps; delete some first", s.maxNote)
	}
	id := explicitID
	if id == "" {
		id = uniqueSlug(f.title, s.taken)
	} else if s.taken(id) {
		return nil, apperr.Conflict("NOTE_EXISTS", "a note with id %s exists already", id)
	}
	n := &Note{
		ID:        id,
		Title:     f.title,
		Body:      f.body,
		Scope:     f.scope,
		Severity:  cmp.Or(f.severity, SeverityInfo),
		Status:    cmp.Or(f.status, StatusActive),
		Tags:      f.tags,
		CreatedBy: cmp.Or(f.createdBy, caller),
		Version:   1,
		UpdatedAt: s.stamp(),
	}
	n.nonNil()
	if err := s.persist(n); err != nil {
		return nil, err
	}
	s.put(n)
	s.hook.notify(id)
	return n.clone(), nil
}

// update replaces note id. Omitted severity, status, tags and created_by
// keep their current values; expected, when set, must equal the current
// version.
func (s *Store) update(id string, f fields, expected *int) (*Note, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	cur := s.notes[id]
	if cur == nil {
		return nil, notFound(id)
	}
	if expected != nil && *expected != cur.Version {
		return nil, apperr.Conflict("VERSION_CONFLICT",
			"note %s is at version %d, not the expected %d; reload it and apply your change again", id, cur.Version, *expected).
			WithDetails(map[string]any{"current_version": cur.Version, "expected_version": *expected})
	}
	n := cur.clone()
	n.Title, n.Body, n.Scope = f.title, f.body, f.scope
	n.Severity = cmp.Or(f.severity, n.Severity)
	n.Status = cmp.Or(f.status, n.Status)
	n.CreatedBy = cmp.Or(f.createdBy, n.CreatedBy)
	if f.tags != nil {
		n.Tags = f.tags
	}
	n.Version++
	n.UpdatedAt = s.stamp()
	n.nonNil()
	if err := s.persist(n); err != nil {
		return nil, err
	}
	s.put(n)
	s.hook.notify(id)
	return n.clone(), nil
}

// deprecate soft-deletes note id: its status becomes deprecated and the
// document stays. A note deprecated already is answered unchanged.
func (s *Store) deprecate(id string) (*Note, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	cur := s.notes[id]
	if cur == nil {
		return nil, notFound(id)
	}
	if cur.Status == StatusDeprecated {
		return cur.clone(), nil
	}
	n := cur.clone()
	n.Status = StatusDeprecated
	n.Version++
	n.UpdatedAt = s.stamp()
	if err := s.persist(n); err != nil {
		return nil, err
	}
	s.put(n)
	s.hook.notify(id)
	return n.clone(), nil
}

// remove hard-deletes note id and its document.
func (s *Store) remove(id string) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.notes[id] == nil {
		return notFound(id)
	}
	if err := os.Remove(s.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return apperr.Wrap(apperr.ErrInternal, err, "STORAGE_FAILED", "the note could not be removed")
	}
	s.mu.Lock()
	delete(s.notes, id)
	s.mu.Unlock()
	s.hook.notify(id)
	return nil
}

// all returns copies of every note, deprecated ones included, by id.
func (s *Store) all() []*Note {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*Note, 0, len(s.notes))
	for _, n := range s.notes {
		out = append(out, n.clone())
	}
	slices.SortFunc(out, func(a, b *Note) int { return strings.Compare(a.ID, b.ID) })
	return out
}
