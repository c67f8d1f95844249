package testcase

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"cpesuite/internal/platform/apperr"
)

func newStore(t *testing.T) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tests")
	s, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func minimal(id string) *Case {
	return &Case{ID: id, Title: "case " + id, Steps: []Step{{Action: "do " + id}}}
}

// wantCode fails unless err carries code and status.
func wantCode(t *testing.T, err error, code string, status int) {
	t.Helper()
	if apperr.Code(err) != code || apperr.Status(err) != status {
		t.Fatalf("err = %v (code %q, status %d), want %d %s", err, apperr.Code(err), apperr.Status(err), status, code)
	}
}

func TestOpenStoreCreatesTheFolder(t *testing.T) {
	_, dir := newStore(t)
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&^0o750 != 0 {
		t.Fatalf("folder: %v %v; want a directory of at most 0750", fi.Mode(), err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(file); err == nil {
		t.Fatal("OpenStore on a file must fail")
	}
}

func TestStoreCRUD(t *testing.T) {
	s, dir := newStore(t)
	c := sampleCase()
	if err := s.Create("tc-001.yaml", c); err != nil {
		t.Fatalf("Create: %v", err)
	}
	fi, err := os.Stat(filepath.Join(dir, "tc-001.yaml"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v, err %v; want 0600", fi.Mode(), err)
	}
	got, err := s.Get("tc-001.yaml")
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("Get = %#v, %v", got, err)
	}
	raw, err := s.Raw("tc-001.yaml")
	if want, _ := Marshal(c); err != nil || string(raw) != string(want) {
		t.Fatalf("Raw = %q, %v", raw, err)
	}
	wantCode(t, s.Create("tc-001.yaml", minimal("other")), "CASE_EXISTS", http.StatusConflict)
	wantCode(t, s.Create("copy.yaml", minimal("TC-001")), "CASE_ID_EXISTS", http.StatusConflict)

	c.Title = "Renamed"
	if err := s.Put("tc-001.yaml", c); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if got, _ := s.Get("tc-001.yaml"); got.Title != "Renamed" {
		t.Fatalf("Put did not replace the case: %q", got.Title)
	}
	wantCode(t, s.Put("missing.yaml", minimal("m")), "CASE_NOT_FOUND", http.StatusNotFound)

	if err := s.Create("b.yaml", minimal("B")); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.Put("b.yaml", minimal("TC-001")), "CASE_ID_EXISTS", http.StatusConflict)

	if err := s.Delete("tc-001.yaml"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	_, err = s.Get("tc-001.yaml")
	wantCode(t, err, "CASE_NOT_FOUND", http.StatusNotFound)
	_, err = s.Raw("tc-001.yaml")
	wantCode(t, err, "CASE_NOT_FOUND", http.StatusNotFound)
	wantCode(t, s.Delete("tc-001.yaml"), "CASE_NOT_FOUND", http.StatusNotFound)
	if err := s.Create("again.yaml", minimal("TC-001")); err != nil {
		t.Fatalf("the id of a deleted case must be free again: %v", err)
	}
}

func TestStoreRefusesInvalidCases(t *testing.T) {
	s, dir := newStore(t)
	bad := minimal("x")
	bad.Steps[0].Action = ""
	ps := problemsOf(t, s.Create("x.yaml", bad))
	if ps[0].Field != "steps[0].action" || ps[0].Line != 0 {
		t.Fatalf("problem %+v", ps[0])
	}
	wantCode(t, s.Create("x.yaml", nil), "INVALID_CASE", http.StatusBadRequest)
	if _, err := s.PutRaw("x.yaml", []byte("id: x\n")); err == nil {
		t.Fatal("PutRaw must validate")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("invalid cases left files: %v", entries)
	}
}

func TestStoreRefusesTraversalNames(t *testing.T) {
	s, dir := newStore(t)
	outside := filepath.Join(filepath.Dir(dir), "x.yaml")
	if err := os.WriteFile(outside, []byte("id: outside\ntitle: t\nsteps: [{action: x}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	names := []string{"../x.yaml", "a/b.yaml", `a\b.yaml`, ".hidden.yaml", "x.txt", "..", "", "/etc/passwd", "x\x00.yaml", "../tests/../x.yaml"}
	for _, name := range names {
		ops := map[string]error{
			"Create": s.Create(name, minimal("n")),
			"Put":    s.Put(name, minimal("n")),
			"Delete": s.Delete(name),
			"Update": s.Update(name, func(*Case) error { return nil }),
		}
		_, ops["Get"] = s.Get(name)
		_, ops["Raw"] = s.Raw(name)
		_, ops["PutRaw"] = s.PutRaw(name, []byte("id: n\ntitle: t\nsteps: [{action: x}]\n"))
		for op, err := range ops {
			if apperr.Code(err) != "INVALID_FILE_NAME" || apperr.Status(err) != http.StatusBadRequest {
				t.Errorf("%s(%q) = %v, want 400 INVALID_FILE_NAME", op, name, err)
			}
		}
	}
	if data, err := os.ReadFile(outside); err != nil || !strings.HasPrefix(string(data), "id: outside") {
		t.Fatalf("the file outside the folder changed: %q %v", data, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("traversal attempts left files: %v", entries)
	}
}

func TestStoreDoesNotFollowSymlinks(t *testing.T) {
	s, dir := newStore(t)
	target := filepath.Join(t.TempDir(), "secret.yaml")
	if err := os.WriteFile(target, []byte("id: secret\ntitle: t\nsteps: [{action: x}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "link.yaml")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	_, err := s.Get("link.yaml")
	wantCode(t, err, "CASE_NOT_FOUND", http.StatusNotFound)
	sums, bad, err := s.List()
	if err != nil || sums == nil || bad == nil || len(sums) != 0 || len(bad) != 0 {
		t.Fatalf("List sees the link (or gives nil lists): %#v %#v %v", sums, bad, err)
	}
	wantCode(t, s.Create("link.yaml", minimal("x")), "CASE_EXISTS", http.StatusConflict)
}

func TestStorePutRawKeepsTheAuthorsText(t *testing.T) {
	s, _ := newStore(t)
	doc := "# written by hand\nid: raw-1   # the id\ntitle: Raw\nsteps:\n    - action: x   # odd indent kept\n"
	created, err := s.PutRaw("raw.yml", []byte(doc))
	if err != nil || !created {
		t.Fatalf("PutRaw = %v, %v; want created", created, err)
	}
	if raw, _ := s.Raw("raw.yml"); string(raw) != doc {
		t.Fatalf("Raw = %q, want the bytes as given", raw)
	}
	created, err = s.PutRaw("raw.yml", []byte(doc+"# edited\n"))
	if err != nil || created {
		t.Fatalf("second PutRaw = %v, %v; want a replacement", created, err)
	}
	_, err = s.PutRaw("other.yaml", []byte(doc))
	wantCode(t, err, "CASE_ID_EXISTS", http.StatusConflict)
	_, err = s.PutRaw("big.yaml", make([]byte, MaxDocumentSize+1))
	if !errors.Is(err, apperr.ErrTooLarge) {
		t.Fatalf("PutRaw of 1 MiB + 1: %v, want ErrTooLarge", err)
	}
}

func TestStoreListReportsBrokenFiles(t *testing.T) {
	s, dir := newStore(t)
	for _, id := range []string{"b", "a"} {
		if err := s.Create(id+".yaml", minimal(id)); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("c.yml", "id: c\ntitle: t\nsteps:\n  - expected: no action\n")
	write("d.yaml", "id: [\n")
	write("notes.txt", "not a case")
	write(".tmp-a.yaml-123", "half written")
	write(".hidden.yaml", "id: hidden\ntitle: t\nsteps: [{action: x}]\n")
	write("x\x01.yaml", "id: ctl\ntitle: t\nsteps: [{action: x}]\n")
	if err := os.Mkdir(filepath.Join(dir, "dir.yaml"), 0o750); err != nil {
		t.Fatal(err)
	}

	sums, bad, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, sum := range sums {
		files = append(files, sum.File)
	}
	if !slices.Equal(files, []string{"a.yaml", "b.yaml"}) {
		t.Fatalf("List files = %v, want [a.yaml b.yaml] sorted", files)
	}
	if sums[0].ID != "a" || sums[0].Title != "case a" || sums[0].StepCount != 1 || sums[0].StepsPreview[0] != "do a" {
		t.Fatalf("summary = %+v", sums[0])
	}
	want := []FileError{
		{File: "c.yml", Error: "steps[0].action: required (line 4)"},
		{File: "d.yaml", Error: "invalid YAML: did not find expected node content (line 2)"},
		{File: "x\x01.yaml", Error: "invalid case file name: must not contain control characters"},
	}
	if !reflect.DeepEqual(bad, want) {
		t.Fatalf("FileErrors = %#v, want %#v", bad, want)
	}

	// The index must see edits made behind the store's back.
	write("c.yml", "id: c\ntitle: fixed\nsteps:\n  - action: now there is one\n")
	sums, bad, _ = s.List()
	if len(sums) != 3 || sums[2].Title != "fixed" || len(bad) != 2 {
		t.Fatalf("after fixing c.yml: %+v %+v", sums, bad)
	}
	sums[2].Tags = append(sums[2].Tags, "mutated")
	sums[2].StepsPreview[0] = "mutated"
	sums, _, _ = s.List()
	if len(sums[2].Tags) != 0 || sums[2].StepsPreview[0] != "now there is one" {
		t.Fatalf("a caller changed the index through a summary: %+v", sums[2])
	}
}

func TestStoreDeleteAllAndSections(t *testing.T) {
	s, dir := newStore(t)
	for i, sec := range []string{"Wi-Fi", "", "ACS", "Wi-Fi"} {
		c := minimal(fmt.Sprint("c", i))
		c.Section = sec
		if err := s.Create(fmt.Sprintf("c%d.yaml", i), c); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("::"), 0o600)
	os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("x"), 0o600)
	secs, err := s.Sections()
	if err != nil || !slices.Equal(secs, []string{"ACS", "Wi-Fi"}) {
		t.Fatalf("Sections = %v, %v", secs, err)
	}
	n, err := s.DeleteAll()
	if err != nil || n != 5 {
		t.Fatalf("DeleteAll = %d, %v; want 5", n, err)
	}
	sums, bad, _ := s.List()
	if len(sums) != 0 || len(bad) != 0 {
		t.Fatalf("after DeleteAll: %v %v", sums, bad)
	}
	if _, err := os.Stat(filepath.Join(dir, "keep.txt")); err != nil {
		t.Fatal("DeleteAll removed a file that is not a case")
	}
	if secs, _ := s.Sections(); secs == nil || len(secs) != 0 {
		t.Fatalf("Sections of an empty store = %#v, want []", secs)
	}
}

func TestStoreUpdate(t *testing.T) {
	s, _ := newStore(t)
	if err := s.Create("a.yaml", minimal("a")); err != nil {
		t.Fatal(err)
	}
	if err := s.Create("b.yaml", minimal("b")); err != nil {
		t.Fatal(err)
	}
	if err := s.Update("a.yaml", func(c *Case) error { c.Project = "Alpha"; return nil }); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if c, _ := s.Get("a.yaml"); c.Project != "Alpha" {
		t.Fatalf("project = %q", c.Project)
	}
	stop := errors.New("stop")
	if err := s.Update("a.yaml", func(c *Case) error { c.Project = "Beta"; return stop }); err != stop {
		t.Fatalf("Update must return fn's error as is, got %v", err)
	}
	if c, _ := s.Get("a.yaml"); c.Project != "Alpha" {
		t.Fatal("a failed Update wrote the file")
	}
	err := s.Update("a.yaml", func(c *Case) error { c.Steps = nil; return nil })
	wantCode(t, err, "INVALID_CASE", http.StatusBadRequest)
	err = s.Update("a.yaml", func(c *Case) error { c.ID = "b"; return nil })
	wantCode(t, err, "CASE_ID_EXISTS", http.StatusConflict)
	err = s.Update("none.yaml", func(c *Case) error { return nil })
	wantCode(t, err, "CASE_NOT_FOUND", http.StatusNotFound)
}

// Two files sharing an id (copied by hand) stay editable; only a change
// of id is checked against the other files.
func TestStoreExistingDuplicateIDsStayEditable(t *testing.T) {
	s, dir := newStore(t)
	if err := s.Create("a.yaml", minimal("dup")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "a.yaml"))
	if err := os.WriteFile(filepath.Join(dir, "b.yaml"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	c := minimal("dup")
	c.Title = "edited"
	if err := s.Put("b.yaml", c); err != nil {
		t.Fatalf("Put keeping the id: %v", err)
	}
	if _, err := s.PutRaw("b.yaml", data); err != nil {
		t.Fatalf("PutRaw keeping the id: %v", err)
	}
	if err := s.Update("b.yaml", func(c *Case) error { c.Project = "P"; return nil }); err != nil {
		t.Fatalf("Update keeping the id: %v", err)
	}
	if err := s.Update("b.yaml", func(c *Case) error { c.ID = "fresh"; return nil }); err != nil {
		t.Fatalf("Update to a free id: %v", err)
	}
	err := s.Update("b.yaml", func(c *Case) error { c.ID = "dup"; return nil })
	wantCode(t, err, "CASE_ID_EXISTS", http.StatusConflict)
}

// Many goroutines add a tag each to one case: with the read-modify-write
// under the store lock none of them is lost. Run with -race.
func TestStoreConcurrentUpdatesLoseNothing(t *testing.T) {
	s, _ := newStore(t)
	if err := s.Create("a.yaml", minimal("a")); err != nil {
		t.Fatal(err)
	}
	const writers = 40
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Go(func() {
			errs <- s.Update("a.yaml", func(c *Case) error {
				c.Tags = append(c.Tags, fmt.Sprint("t", i))
				return nil
			})
		})
		wg.Go(func() {
			if _, _, err := s.List(); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.Get("a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tags) != writers {
		t.Fatalf("%d tags, want %d: updates were lost", len(c.Tags), writers)
	}
	sums, _, _ := s.List()
	if len(sums[0].Tags) != writers {
		t.Fatalf("List shows %d tags, want %d", len(sums[0].Tags), writers)
	}
}

// Concurrent Creates of one id in different files: exactly one wins.
func TestStoreConcurrentCreatesKeepIDsUnique(t *testing.T) {
	s, _ := newStore(t)
	const n = 20
	var wg sync.WaitGroup
	results := make(chan error, n)
	for i := range n {
		wg.Go(func() { results <- s.Create(fmt.Sprintf("f%d.yaml", i), minimal("same")) })
	}
	wg.Wait()
	close(results)
	ok := 0
	for err := range results {
		switch {
		case err == nil:
			ok++
		case apperr.Code(err) != "CASE_ID_EXISTS":
			t.Fatalf("unexpected error %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d creates succeeded, want 1", ok)
	}
}
