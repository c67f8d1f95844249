package tr069emu

import (
	"bytes"
	"cpesuite/internal/platform/fsx"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"cpesuite/internal/tr069emu/tree"
)

// fileNameRE is a tree file name: no path, no hidden files, .xml only.
var fileNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,123}\.xml$`)

// checkFileName refuses anything that is not a plain .xml name in the tree
// folder, with the reason.
func checkFileName(name string) error {
	switch {
	case name == "":
		return errf("file name is required")
	case strings.ContainsAny(name, `/\`) || strings.Contains(name, ".."):
		return errf("file name %q must not contain a path ('/', '\\' or '..')", name)
	case name == "." || strings.HasPrefix(name, "."):
		return errf("file name %q must not start with '.'", name)
	case !strings.HasSuffix(name, ".xml"):
		return errf("file name %q must end with .xml", name)
	case !fileNameRE.MatchString(name):
		return errf("file name %q may hold letters, digits, '.', '_' and '-' only, at most 128 characters, ending in .xml", name)
	}
	return nil
}

// treeFiles is the parameter tree folder and a cache of parsed templates,
// so all devices of one file share one Template.
type treeFiles struct {
	dir      string
	maxBytes int64

	mu    sync.Mutex
	cache map[string]*tree.Template
}

func newTreeFiles(dir string, maxBytes int64) (*treeFiles, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// The base trees are (re)written when missing so a fresh data dir has
	// them and an operator can always get them back by deleting a copy.
	for name, data := range tree.BaseFiles() {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			if err := fsx.WriteFileAtomic(path, data); err != nil {
				return nil, err
			}
		}
	}
	return &treeFiles{dir: dir, maxBytes: maxBytes, cache: map[string]*tree.Template{}}, nil
}

// List returns the .xml file names, sorted.
func (f *treeFiles) List() ([]string, error) {
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, e := range entries {
		if e.Type().IsRegular() && checkFileName(e.Name()) == nil {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// Exists reports whether name is a tree file.
func (f *treeFiles) Exists(name string) bool {
	if checkFileName(name) != nil {
		return false
	}
	st, err := os.Stat(filepath.Join(f.dir, name))
	return err == nil && st.Mode().IsRegular()
}

// Template returns the parsed tree of name, from the cache when loaded.
func (f *treeFiles) Template(name string) (*tree.Template, error) {
	if err := checkFileName(name); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if t := f.cache[name]; t != nil {
		return t, nil
	}
	file, err := os.Open(filepath.Join(f.dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, notFound("parameter tree file %s not found", name)
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", name, err)
	}
	defer file.Close()
	t, err := tree.Parse(file, f.maxBytes)
	if err != nil {
		return nil, errf("parameter tree file %s is not valid: %v", name, err)
	}
	f.cache[name] = t
	return t, nil
}

// Upload validates a tree file and stores it under name, replacing an
// older one of that name.
func (f *treeFiles) Upload(name string, data []byte) error {
	if err := checkFileName(name); err != nil {
		return err
	}
	if int64(len(data)) > f.maxBytes {
		return errf("%s is larger than %d bytes", name, f.maxBytes)
	}
	if _, err := tree.Parse(bytes.NewReader(data), f.maxBytes); err != nil {
		return errf("%s is not a valid parameter tree: %v", name, err)
	}
	if err := fsx.WriteFileAtomic(filepath.Join(f.dir, name), data); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	f.mu.Lock()
	delete(f.cache, name)
	f.mu.Unlock()
	return nil
}

// Delete removes name; the caller refuses the active file.
func (f *treeFiles) Delete(name string) error {
	if err := checkFileName(name); err != nil {
		return err
	}
	err := os.Remove(filepath.Join(f.dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return notFound("parameter tree file %s not found", name)
	}
	if err != nil {
		return fmt.Errorf("deleting %s: %w", name, err)
	}
	f.mu.Lock()
	delete(f.cache, name)
	f.mu.Unlock()
	return nil
}

// ClearCache drops parsed templates (stop with clearCaches).
func (f *treeFiles) ClearCache() {
	f.mu.Lock()
	f.cache = map[string]*tree.Template{}
	f.mu.Unlock()
}
