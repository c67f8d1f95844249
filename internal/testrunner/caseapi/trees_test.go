package caseapi

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func (e *env) trees() []Tree {
	e.t.Helper()
	r := e.do("GET", "/api/trees", nil)
	expect(e.t, r, 200, "")
	var out []Tree
	r.json(e.t, &out)
	return out
}

func TestTreeFolderIsCreatedPrivate(t *testing.T) {
	e := newEnv(t)
	fi, err := os.Stat(e.treesDir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("tree folder: %v %v", fi, err)
	}
	if got := e.trees(); len(got) != 0 {
		t.Fatalf("empty folder lists %v", got)
	}
}

func TestTreeUploadListDelete(t *testing.T) {
	e := newEnv(t)
	before := time.Now().Unix()
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment -->
<InternetGatewayDevice><DeviceInfo><SerialNumber>X1</SerialNumber></DeviceInfo></InternetGatewayDevice>
`
	r := e.upload("/api/trees/upload", "b-tree.xml", []byte(doc))
	expect(t, r, 201, "")
	var saved SavedTree
	r.json(t, &saved)
	if saved != (SavedTree{File: "b-tree.xml", Size: int64(len(doc))}) {
		t.Fatalf("saved %+v", saved)
	}
	r = e.upload("/api/trees/upload", "b-tree.xml", []byte("<a/>"))
	expect(t, r, 200, "")
	saved = SavedTree{}
	r.json(t, &saved)
	if saved != (SavedTree{File: "b-tree.xml", Size: 4, Replaced: true}) {
		t.Fatalf("replaced %+v", saved)
	}
	expect(t, e.upload("/api/trees/upload", "A.XML", []byte("<a/>")), 201, "")
	e.writeTree(".hidden.xml", "<a/>")
	e.writeTree("notes.txt", "x")
	if err := os.Mkdir(filepath.Join(e.treesDir, "dir.xml"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(e.treesDir, "link.xml")); err != nil {
		t.Fatal(err)
	}

	list := e.trees()
	if len(list) != 2 || list[0].Name != "A.XML" || list[1].Name != "b-tree.xml" || list[1].Size != 4 ||
		list[1].MTime < before || list[1].MTime > time.Now().Unix() {
		t.Fatalf("list %+v", list)
	}
	// Only the tree files, no temporary files of the atomic writer.
	if got := dirNames(t, e.treesDir); !slices.Equal(got, []string{".hidden.xml", "A.XML", "b-tree.xml", "dir.xml", "link.xml", "notes.txt"}) {
		t.Fatalf("folder %v", got)
	}
	if data, _ := os.ReadFile(filepath.Join(e.treesDir, "b-tree.xml")); string(data) != "<a/>" {
		t.Fatalf("stored %q", data)
	}

	expect(t, e.do("DELETE", "/api/trees/b-tree.xml", nil), 200, "")
	expect(t, e.do("DELETE", "/api/trees/b-tree.xml", nil), 404, "TREE_NOT_FOUND")
	expect(t, e.do("DELETE", "/api/trees/never.xml", nil), 404, "TREE_NOT_FOUND")
	expect(t, e.do("DELETE", "/api/trees/dir.xml", nil), 404, "TREE_NOT_FOUND")
	expect(t, e.do("DELETE", "/api/trees/link.xml", nil), 404, "TREE_NOT_FOUND")
	expect(t, e.upload("/api/trees/upload", "dir.xml", []byte("<a/>")), 409, "TREE_EXISTS")
	if fi, err := os.Lstat(filepath.Join(e.treesDir, "link.xml")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("symbolic link touched: %v %v", fi, err)
	}
}

func TestTreeNamesRefused(t *testing.T) {
	e := newEnv(t)
	e.writeTree("keep.xml", "<k/>")
	outside := filepath.Join(filepath.Dir(e.treesDir), "x.xml")
	if err := os.WriteFile(outside, []byte("<o/>"), 0o600); err != nil {
		t.Fatal(err)
	}
	names := []string{
		"../x.xml", "../../x.xml", "..", ".", "..xml", "a..b.xml", `a\b.xml`, `..\x.xml`, "a/b.xml", "/etc/x.xml",
		"x.txt", "x.xml.txt", "xml", ".xml", ".hidden.xml", "", "a\u0085.xml", "\xff.xml",
		strings.Repeat("a", MaxTreeNameLength-3) + ".xml",
	}
	for _, name := range names {
		t.Run("upload "+name, func(t *testing.T) {
			expect(t, e.upload("/api/trees/upload", name, []byte("<a/>")), 400, "INVALID_TREE_NAME")
		})
	}
	for _, path := range []string{"..%2fx.xml", "..%2Fx.xml", "%2e%2e", "%2e", "a%5cb.xml", "x.txt", ".hidden.xml", "%2e%2e%2f%2e%2e%2fx.xml", "a%00.xml"} {
		t.Run("delete "+path, func(t *testing.T) {
			expect(t, e.do("DELETE", "/api/trees/"+path, nil), 400, "INVALID_TREE_NAME")
		})
	}
	// Unescaped dot segments are redirected by the mux, never handled.
	for _, path := range []string{"/api/trees/../x.xml", "/api/trees/./keep.xml"} {
		if r := e.do("DELETE", path, nil); r.status/100 != 3 {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatalf("file outside the tree folder touched: %v", err)
	}
	if got := dirNames(t, e.treesDir); !slices.Equal(got, []string{"keep.xml"}) {
		t.Fatalf("tree folder %v", got)
	}
	// The longest name is accepted.
	longest := strings.Repeat("a", MaxTreeNameLength-4) + ".xml"
	expect(t, e.upload("/api/trees/upload", longest, []byte("<a/>")), 201, "")
}

func TestTreeContentRefused(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxUpload = 4096 })
	tests := []struct {
		name, doc string
		status    int
		code      string
	}{
		{"doctype", `<?xml version="1.0"?><!DOCTYPE a><a/>`, 400, "TREE_DTD_REFUSED"},
		{"billion laughs", `<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>
<lolz>&lol2;</lolz>`, 400, "TREE_DTD_REFUSED"},
		{"external entity", `<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>`, 400, "TREE_DTD_REFUSED"},
		{"doctype after a comment", "<!-- c -->\n<!DOCTYPE a SYSTEM \"http://example.invalid/a.dtd\">\n<a/>", 400, "TREE_DTD_REFUSED"},
		{"undeclared entity", `<a>&x;</a>`, 400, "INVALID_TREE_XML"},
		{"not XML", `{"a": 1}`, 400, "INVALID_TREE_XML"},
		{"unclosed", `<a><b></a>`, 400, "INVALID_TREE_XML"},
		{"truncated", `<a><b/>`, 400, "INVALID_TREE_XML"},
		{"two roots", `<a/><b/>`, 400, "INVALID_TREE_XML"},
		{"no root", `<?xml version="1.0"?><!-- only a comment -->`, 400, "INVALID_TREE_XML"},
		{"empty", ``, 400, "INVALID_TREE_XML"},
		{"text outside the root", `<a/>trailing`, 400, "INVALID_TREE_XML"},
		{"unknown encoding", `<?xml version="1.0" encoding="KOI8-R"?><a/>`, 400, "INVALID_TREE_XML"},
		{"too large", "<a>" + strings.Repeat("x", 4096) + "</a>", 413, "TREE_TOO_LARGE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			expect(t, e.upload("/api/trees/upload", "t.xml", []byte(tc.doc)), tc.status, tc.code)
		})
	}
	if got := dirNames(t, e.treesDir); len(got) != 0 {
		t.Fatalf("refused uploads left files: %v", got)
	}
	i := 0
	for name, doc := range map[string]string{
		"bom":             "\ufeff<?xml version=\"1.0\"?><a/>",
		"latin1":          "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>caf\xe9</a>",
		"cdata and pi":    "<?xml version=\"1.0\"?><?pi x?><a><![CDATA[<!DOCTYPE x>]]></a>\n<!-- end -->\n",
		"standard entity": "<a>&amp;&lt;&#65;</a>",
	} {
		t.Run("accepts "+name, func(t *testing.T) {
			i++
			expect(t, e.upload("/api/trees/upload", fmt.Sprintf("ok-%d.xml", i), []byte(doc)), 201, "")
		})
	}
}
