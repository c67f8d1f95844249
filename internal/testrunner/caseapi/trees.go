package caseapi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/fsx"
)

// Tree is one row of GET /api/trees.
type Tree struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
	// MTime is the modification time in Unix epoch seconds.
	MTime int64 `json:"mtime"`
}

// SavedTree is the answer of POST /api/trees/upload.
type SavedTree struct {
	File     string `json:"file"`
	Size     int64  `json:"size"`
	Replaced bool   `json:"replaced"`
}

// trees is the folder of .xml data-model trees. Writes are serialised so
// that "replaced" tells the truth when two uploads of one name race.
type trees struct {
	dir string
	mu  sync.Mutex
}

func openTrees(dir string) (*trees, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating tree folder: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("opening tree folder: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("tree folder %s is not a directory", dir)
	}
	return &trees{dir: dir}, nil
}

// list returns the tree files sorted by name: regular files with a valid
// tree name. Hidden files (the atomic writer's temporaries), folders and
// symbolic links are not trees.
func (t *trees) list() ([]Tree, error) {
	des, err := os.ReadDir(t.dir)
	if err != nil {
		return nil, apperr.Internal(fmt.Errorf("listing trees: %w", err))
	}
	out := []Tree{}
	for _, de := range des {
		if !de.Type().IsRegular() || ValidTreeName(de.Name()) != nil {
			continue
		}
		fi, err := de.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted since ReadDir
		}
		if err != nil {
			return nil, apperr.Internal(fmt.Errorf("listing trees: %w", err))
		}
		out = append(out, Tree{Name: de.Name(), Size: fi.Size(), MTime: fi.ModTime().Unix()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// names maps the lower-case name of every tree to its name, for the
// case-insensitive look-ups of regenerate.
func (t *trees) names() (map[string]string, error) {
	list, err := t.list()
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(list))
	for _, tr := range list {
		m[strings.ToLower(tr.Name)] = tr.Name
	}
	return m, nil
}

// save checks data (checkTreeXML) and writes it atomically as name.
func (t *trees) save(name string, data []byte) (SavedTree, error) {
	if err := ValidTreeName(name); err != nil {
		return SavedTree{}, err
	}
	if err := checkTreeXML(data); err != nil {
		return SavedTree{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	path := filepath.Join(t.dir, name)
	replaced := false
	switch fi, err := os.Lstat(path); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return SavedTree{}, apperr.Internal(fmt.Errorf("checking tree %s: %w", name, err))
	case !fi.Mode().IsRegular():
		return SavedTree{}, apperr.Conflict("TREE_EXISTS", "%s exists and is not a tree file", name)
	default:
		replaced = true
	}
	if err := fsx.WriteFileAtomic(path, data); err != nil {
		return SavedTree{}, apperr.Internal(fmt.Errorf("writing tree %s: %w", name, err))
	}
	return SavedTree{File: name, Size: int64(len(data)), Replaced: replaced}, nil
}

// remove deletes the tree name; a missing one (or a name taken by
// something that is not a tree file) is 404 TREE_NOT_FOUND.
func (t *trees) remove(name string) error {
	if err := ValidTreeName(name); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	path := filepath.Join(t.dir, name)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !fi.Mode().IsRegular() {
		return treeNotFound(name)
	}
	if err != nil {
		return apperr.Internal(fmt.Errorf("checking tree %s: %w", name, err))
	}
	if err := os.Remove(path); errors.Is(err, fs.ErrNotExist) {
		return treeNotFound(name)
	} else if err != nil {
		return apperr.Internal(fmt.Errorf("deleting tree %s: %w", name, err))
	}
	return nil
}

func treeNotFound(name string) error {
	return apperr.NotFound("TREE_NOT_FOUND", "tree file %s not found", name)
}
