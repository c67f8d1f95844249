package notes

import (
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestNotesSurviveARestart(t *testing.T) {
	e := newEnv(t)
	seed(e)
	before := e.store.all()
	e.store.hook.wait()
	e.open()
	after := e.store.all()
	if len(after) != len(before) {
		t.Fatalf("%d notes after restart, want %d", len(after), len(before))
	}
	for i := range before {
		if !before[i].UpdatedAt.Equal(after[i].UpdatedAt) {
			t.Fatalf("note %s: updated_at %v, want %v", before[i].ID, after[i].UpdatedAt, before[i].UpdatedAt)
		}
		after[i].UpdatedAt = before[i].UpdatedAt
		if !reflect.DeepEqual(after[i], before[i]) {
			t.Fatalf("after restart %+v, want %+v", after[i], before[i])
		}
	}
	// Versions continue where they were.
	var n Note
	decodeInto(t, e.call("PUT", "/api/notes/mesh-latency", note("Mesh latency", "expected_version", 1), http.StatusOK), &n)
	if n.Version != 2 {
		t.Fatalf("version %d, want 2", n.Version)
	}
}

func TestUnreadableFilesAreSkippedAndKept(t *testing.T) {
	e := newEnv(t)
	e.create(note("Good one"))
	e.store.hook.wait()
	files := map[string]string{
		"broken.json":       `{"id": "broken", "title": `,
		"mismatch.json":     `{"id": "other", "title": "t", "body": "b", "version": 1}`,
		"no-body.json":      `{"id": "no-body", "title": "t", "body": " ", "version": 1}`,
		"zero-version.json": `{"id": "zero-version", "title": "t", "body": "b", "version": 0}`,
		"Bad_Name.json":     `{"id": "Bad_Name", "title": "t", "body": "b", "version": 1}`,
		"array.json":        `[1, 2]`,
		// Not note documents at all: ignored without a warning.
		".tmp-good-one.json-123": `{`,
		"README.txt":             "notes live here",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(e.dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(e.dir, "sub.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	e.open()
	if got := e.store.all(); len(got) != 1 || got[0].ID != "good-one" {
		t.Fatalf("loaded %+v, want only good-one", got)
	}
	logs := e.logs.String()
	for _, name := range []string{"broken.json", "mismatch.json", "no-body.json", "zero-version.json", "Bad_Name.json", "array.json"} {
		if !strings.Contains(logs, "file="+name) {
			t.Errorf("no warning names %s; logs:\n%s", name, logs)
		}
	}
	for _, name := range []string{".tmp-good-one.json-123", "README.txt", "sub.json"} {
		if strings.Contains(logs, "file="+name) {
			t.Errorf("%s was treated as a note file", name)
		}
	}
	// The skipped files block their ids, so nothing overwrites them.
	e.fail("POST", "/api/notes", note("x", "id", "broken"), http.StatusConflict, "NOTE_EXISTS")
	if id := e.create(note("Broken")).ID; id != "broken-2" {
		t.Fatalf("derived id %q, want broken-2", id)
	}
	e.fail("PUT", "/api/notes/broken", note("x"), http.StatusNotFound, "NOTE_NOT_FOUND")
	e.fail("DELETE", "/api/notes/broken?hard=true", nil, http.StatusNotFound, "NOTE_NOT_FOUND")
	for name, content := range files {
		got, err := os.ReadFile(filepath.Join(e.dir, name))
		if err != nil || string(got) != content {
			t.Fatalf("%s was changed: %q, %v", name, got, err)
		}
	}
}

func TestNewChecksItsConfig(t *testing.T) {
	setting := func(string) string { return "" }
	if _, err := New(Config{Setting: setting}); err == nil {
		t.Fatal("New without Dir succeeded")
	}
	if _, err := New(Config{Dir: t.TempDir()}); err == nil {
		t.Fatal("New without Setting succeeded")
	}
	// A Dir that is a file cannot hold notes.
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Dir: f, Setting: setting}); err == nil {
		t.Fatal("New on a file succeeded")
	}
}

// A write that cannot reach the disk fails with a 500 and leaves the
// store as it was.
func TestStorageFailureLeavesMemoryUnchanged(t *testing.T) {
	e := newEnv(t)
	before := e.create(note("Kept"))
	e.store.hook.wait()
	// A file where the directory was fails every write, also for root.
	if err := os.Rename(e.dir, e.dir+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, path string
		body         any
		detail       string
	}{
		{"POST", "/api/notes", note("New"), "the note could not be saved"},
		{"PUT", "/api/notes/kept", note("Changed"), "the note could not be saved"},
		{"DELETE", "/api/notes/kept", nil, "the note could not be saved"},
		{"DELETE", "/api/notes/kept?hard=true", nil, "the note could not be removed"},
	} {
		// The body names no path and no system error.
		if m := e.fail(c.method, c.path, c.body, http.StatusInternalServerError, "STORAGE_FAILED"); m["detail"] != c.detail {
			t.Fatalf("%s %s: detail %q, want %q", c.method, c.path, m["detail"], c.detail)
		}
	}
	if got := e.store.all(); len(got) != 1 || !reflect.DeepEqual(*got[0], before) {
		t.Fatalf("store after failed writes: %+v", got)
	}
	if body := e.logs.String(); !strings.Contains(body, "not a directory") {
		t.Fatalf("the cause is not logged:\n%s", body)
	}
}

func TestSlugify(t *testing.T) {
	tests := []struct{ title, want string }{
		{"Speed gauge", "speed-gauge"},
		{"  --Wi-Fi: 5 GHz!!  ", "wi-fi-5-ghz"},
		{"ÄÖÜ", "note"},
		{"Проверка Wi-Fi", "wi-fi"},
		{"../../etc/passwd", "etc-passwd"},
		{"a_b.c", "a-b-c"},
		{strings.Repeat("ab ", 40), strings.TrimRight(strings.Repeat("ab-", 22)[:64], "-")},
		{strings.Repeat("x", 100), strings.Repeat("x", 64)},
	}
	for _, tt := range tests {
		got := slugify(tt.title, maxIDLen)
		if got != tt.want {
			t.Errorf("slugify(%q) = %q, want %q", tt.title, got, tt.want)
		}
		if checkID(got) != nil {
			t.Errorf("slugify(%q) = %q is not a valid id", tt.title, got)
		}
	}
}

func TestUniqueSlugKeepsSuffixedIDsValid(t *testing.T) {
	title := strings.Repeat("x", 100)
	taken := map[string]bool{}
	for i := 0; i < 12; i++ {
		id := uniqueSlug(title, func(s string) bool { return taken[s] })
		if taken[id] || checkID(id) != nil || len(id) > maxIDLen {
			t.Fatalf("round %d: id %q (taken %v, valid %v)", i, id, taken[id], checkID(id))
		}
		taken[id] = true
	}
	if !taken[strings.Repeat("x", 61)+"-12"] {
		t.Fatalf("ids %v lack the 12th", taken)
	}
}

func TestCheckID(t *testing.T) {
	for id, ok := range map[string]bool{
		"a": true, "a-1": true, "0": true, strings.Repeat("a", 64): true,
		"": false, "A": false, "a_b": false, "a--b": false, "-a": false, "a-": false, "../x": false,
		"a.json": false, "raw": false, "reindex": false, strings.Repeat("a", 65): false, "ä": false,
	} {
		if got := checkID(id) == nil; got != ok {
			t.Errorf("checkID(%q) ok = %v, want %v", id, got, ok)
		}
	}
}

func TestNormTags(t *testing.T) {
	tests := []struct {
		in   []string
		want []string
		bad  bool
	}{
		{nil, nil, false},
		{[]string{}, []string{}, false},
		{[]string{"  Known   Issue ", "known-issue", "", "B", "a"}, []string{"a", "b", "known-issue"}, false},
		{[]string{"fw:2.1/beta_x"}, []string{"fw:2.1/beta_x"}, false},
		{[]string{"Ошибка"}, []string{"ошибка"}, false},
		{append(distinct(20), distinct(20)...), distinct(20), false},
		{[]string{"a,b"}, nil, true},
		{distinct(21), nil, true},
	}
	for _, tt := range tests {
		got, err := normTags(tt.in)
		if (err != nil) != tt.bad {
			t.Errorf("normTags(%q): error %v", tt.in, err)
			continue
		}
		if tt.bad {
			continue
		}
		want := slices.Clone(tt.want)
		slices.Sort(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("normTags(%q) = %#v, want %#v", tt.in, got, want)
		}
	}
}
