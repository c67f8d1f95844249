// Package fsx holds the file-system helpers services share.
package fsx

import (
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces path so a crash leaves the old or the new file,
// never half of one. The file is created with mode 0600 (os.CreateTemp),
// which is what files holding secrets need.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
