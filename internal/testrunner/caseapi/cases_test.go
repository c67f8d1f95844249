package caseapi

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"cpesuite/internal/testrunner/testcase"
)

func TestCreateReadReplaceDelete(t *testing.T) {
	e := newEnv(t)

	// The file name is derived from the id when the body names none.
	r := e.do("POST", "/api/tests", sampleCase("TC.Login-01", "Login works"))
	expect(t, r, 201, "")
	if loc := r.header.Get("Location"); loc != "/api/tests/tc-login-01.yaml" {
		t.Fatalf("Location %q", loc)
	}
	var view CaseView
	r.json(t, &view)
	if view.File != "tc-login-01.yaml" || view.ID != "TC.Login-01" || len(view.Steps) != 1 {
		t.Fatalf("created view %+v", view)
	}

	// An explicit file name is used as given.
	body := sampleCase("tc2", "Second")
	body["file"] = "second.yml"
	body["project"] = "Alpha"
	body["emulator_setup"] = map[string]any{"tree_file": "t.xml", "serial": "S1"}
	expect(t, e.do("POST", "/api/tests", body), 201, "")

	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"same file", sampleCase("tc-login-01", "again"), 409, "CASE_EXISTS"},
		{"same id in another file", map[string]any{"file": "other.yaml", "id": "tc2", "title": "x", "steps": []map[string]string{{"action": "a"}}}, 409, "CASE_ID_EXISTS"},
		{"unknown field", map[string]any{"id": "x", "title": "x", "steps": []map[string]string{{"action": "a"}}, "colour": "red"}, 400, "INVALID"},
		{"unknown nested field", map[string]any{"id": "x", "title": "x", "steps": []map[string]string{{"action": "a", "expectation": "b"}}}, 400, "INVALID"},
		{"no steps", map[string]any{"id": "x", "title": "x"}, 400, "INVALID_CASE"},
		{"traversal in file", map[string]any{"file": "../x.yaml", "id": "x", "title": "x", "steps": []map[string]string{{"action": "a"}}}, 400, "INVALID_FILE_NAME"},
		{"backslash in file", map[string]any{"file": `a\b.yaml`, "id": "x", "title": "x", "steps": []map[string]string{{"action": "a"}}}, 400, "INVALID_FILE_NAME"},
		{"not yaml", map[string]any{"file": "x.txt", "id": "x", "title": "x", "steps": []map[string]string{{"action": "a"}}}, 400, "INVALID_FILE_NAME"},
		{"malformed JSON", `{"id": "x",`, 400, "INVALID"},
		{"not an object", `[1]`, 400, "INVALID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := expect(t, e.do("POST", "/api/tests", tc.body), tc.status, tc.code)
			if tc.code == "INVALID_CASE" && (len(b.Problems) == 0 || b.Problems[0].Field != "steps") {
				t.Fatalf("problems %+v", b.Problems)
			}
		})
	}
	if got := dirNames(t, e.casesDir); !slices.Equal(got, []string{"second.yml", "tc-login-01.yaml"}) {
		t.Fatalf("case folder %v", got)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(e.casesDir), "x.yaml")); err == nil {
		t.Fatal("a traversal wrote outside the case folder")
	}

	// The JSON view, and the raw text.
	r = e.do("GET", "/api/tests/second.yml", nil)
	expect(t, r, 200, "")
	view = CaseView{}
	r.json(t, &view)
	if view.File != "second.yml" || view.Project != "Alpha" || view.EmulatorSetup.TreeFile != "t.xml" || view.EmulatorSetup.Serial != "S1" {
		t.Fatalf("view %+v", view)
	}
	r = e.do("GET", "/api/tests/second.yml/yaml", nil)
	expect(t, r, 200, "")
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/yaml") {
		t.Fatalf("content type %q", ct)
	}
	if c, err := testcase.Parse(r.body); err != nil || c.ID != "tc2" {
		t.Fatalf("raw text does not parse back: %v\n%s", err, r.body)
	}

	// The list.
	var sums []testcase.Summary
	r = e.do("GET", "/api/tests", nil)
	expect(t, r, 200, "")
	r.json(t, &sums)
	if len(sums) != 2 || sums[0].File != "second.yml" || sums[1].StepsPreview[0] != "open the page" || r.header.Get(ErrorCountHeader) != "0" {
		t.Fatalf("list %+v (errors %q)", sums, r.header.Get(ErrorCountHeader))
	}

	// Replace: the JSON view read above goes back unchanged but for the title.
	view.Title = "Second, edited"
	r = e.do("PUT", "/api/tests/second.yml", view)
	expect(t, r, 200, "")
	if c, _ := e.cases.Get("second.yml"); c.Title != "Second, edited" || c.Project != "Alpha" {
		t.Fatalf("after PUT %+v", c)
	}
	expect(t, e.do("PUT", "/api/tests/missing.yaml", sampleCase("m", "m")), 404, "CASE_NOT_FOUND")
	expect(t, e.do("PUT", "/api/tests/second.yml", view.withFile("other.yaml")), 400, "FILE_MISMATCH")
	expect(t, e.do("PUT", "/api/tests/second.yml", map[string]any{"id": "tc2"}), 400, "INVALID_CASE")
	expect(t, e.do("PUT", "/api/tests/second.yml", sampleCase("TC.Login-01", "steal the id")), 409, "CASE_ID_EXISTS")

	// Delete one, then all.
	expect(t, e.do("GET", "/api/tests/nope.yaml", nil), 404, "CASE_NOT_FOUND")
	expect(t, e.do("GET", "/api/tests/nope.yaml/yaml", nil), 404, "CASE_NOT_FOUND")
	expect(t, e.do("DELETE", "/api/tests/second.yml", nil), 200, "")
	expect(t, e.do("DELETE", "/api/tests/second.yml", nil), 404, "CASE_NOT_FOUND")
	e.writeCase("broken.yaml", "id: [\n")
	var deleted map[string]int
	r = e.do("DELETE", "/api/tests", nil)
	expect(t, r, 200, "")
	r.json(t, &deleted)
	if deleted["deleted"] != 2 {
		t.Fatalf("delete all: %v", deleted)
	}
	r = e.do("GET", "/api/tests", nil)
	if string(r.body) != "[]\n" {
		t.Fatalf("list after delete all: %s", r.body)
	}
}

func (v CaseView) withFile(f string) CaseView {
	v.File = f
	return v
}

// TestFileNamesInPaths: every case route refuses a file name that is not a
// plain .yaml/.yml name, however it is spelled in the URL; unescaped dot
// segments never reach a handler, the mux redirects them to the clean path.
func TestFileNamesInPaths(t *testing.T) {
	e := newEnv(t)
	e.writeCase("a.yaml", caseYAML("a", ""))
	outside := filepath.Join(filepath.Dir(e.casesDir), "x.yaml")
	if err := os.WriteFile(outside, []byte(caseYAML("outside", "")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"..%2fx.yaml", "..%2Fx.yaml", "%2e%2e", "%2e", "a%5cb.yaml", "x.txt", ".hidden.yaml", "a%00.yaml", "%2e%2e%2fworker%2ftests%2fa.yaml"} {
		for _, rt := range []struct{ method, suffix string }{
			{"GET", ""}, {"GET", "/yaml"}, {"PUT", ""}, {"DELETE", ""}, {"POST", "/regenerate"},
		} {
			r := e.do(rt.method, "/api/tests/"+name+rt.suffix, sampleCase("zz", "zz"))
			expect(t, r, 400, "INVALID_FILE_NAME")
		}
	}
	for _, path := range []string{"/api/tests/../x.yaml", "/api/tests/./a.yaml", "/api/tests/a.yaml/../../x.yaml"} {
		r := e.do("DELETE", path, nil)
		if r.status/100 != 3 {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatalf("file outside the case folder touched: %v", err)
	}
	if _, err := e.cases.Get("a.yaml"); err != nil {
		t.Fatalf("a.yaml touched: %v", err)
	}
}

func TestUnparsableFilesDoNotHideTheOthers(t *testing.T) {
	e := newEnv(t)
	e.writeCase("good.yaml", caseYAML("good", "P"))
	e.writeCase("bad.yaml", "id: bad\ntitle: Bad\nsteps:\n  - action: x\n    colour: red\n")
	e.writeCase("worse.yml", "id: [unclosed\n")

	r := e.do("GET", "/api/tests", nil)
	expect(t, r, 200, "")
	var sums []testcase.Summary
	r.json(t, &sums)
	if len(sums) != 1 || sums[0].File != "good.yaml" || r.header.Get(ErrorCountHeader) != "2" {
		t.Fatalf("list %+v, %s %q", sums, ErrorCountHeader, r.header.Get(ErrorCountHeader))
	}

	r = e.do("GET", "/api/tests?with_errors=true", nil)
	expect(t, r, 200, "")
	var list CaseList
	r.json(t, &list)
	if len(list.Tests) != 1 || len(list.Errors) != 2 || list.Errors[0].File != "bad.yaml" ||
		!strings.Contains(list.Errors[0].Error, "steps[0].colour: unknown field (line 5)") {
		t.Fatalf("with errors: %+v", list)
	}
	expect(t, e.do("GET", "/api/tests?with_errors=maybe", nil), 400, "INVALID_QUERY")

	// Reading the broken file is 422 with the parser's problems.
	b := expect(t, e.do("GET", "/api/tests/bad.yaml", nil), 422, "INVALID_CASE")
	if !strings.Contains(b.Detail, "bad.yaml") || len(b.Problems) != 1 || b.Problems[0].Line != 5 || b.Problems[0].Field != "steps[0].colour" {
		t.Fatalf("broken read: %+v", b)
	}
	// Its raw text is still readable, so it can be fixed.
	r = e.do("GET", "/api/tests/bad.yaml/yaml", nil)
	expect(t, r, 200, "")
	if !strings.Contains(string(r.body), "colour: red") {
		t.Fatalf("raw %s", r.body)
	}
	expect(t, e.do("POST", "/api/tests/bad.yaml/regenerate", nil), 422, "INVALID_CASE")
}

func TestSections(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/api/sections", nil)
	expect(t, r, 200, "")
	if string(r.body) != "[]\n" {
		t.Fatalf("no cases: %s", r.body)
	}
	for i, s := range []string{"Wi-Fi", "", "DHCP", "Wi-Fi"} {
		c := sampleCase("c"+string(rune('a'+i)), "t")
		if s != "" {
			c["section"] = s
		}
		expect(t, e.do("POST", "/api/tests", c), 201, "")
	}
	e.writeCase("broken.yaml", "section: Hidden\n")
	var got []string
	r = e.do("GET", "/api/sections", nil)
	r.json(t, &got)
	if !reflect.DeepEqual(got, []string{"DHCP", "Wi-Fi"}) {
		t.Fatalf("sections %v", got)
	}
}

func TestUploadYAML(t *testing.T) {
	e := newEnv(t)
	text := "# hand-written, comments stay\nid: up-1\ntitle: Uploaded\nsteps:\n  - action: go   # why\n"

	r := e.upload("/api/tests/upload-yaml", "up.yaml", []byte(text))
	expect(t, r, 201, "")
	var up Uploaded
	r.json(t, &up)
	if up != (Uploaded{File: "up.yaml", ID: "up-1", Title: "Uploaded", Created: true}) || r.header.Get("Location") != "/api/tests/up.yaml" {
		t.Fatalf("first upload %+v %v", up, r.header)
	}
	r = e.upload("/api/tests/upload-yaml", "up.yaml", []byte(strings.Replace(text, "Uploaded", "Again", 1)))
	expect(t, r, 200, "")
	up = Uploaded{}
	r.json(t, &up)
	if up.Created || !up.Replaced || up.Title != "Again" {
		t.Fatalf("second upload %+v", up)
	}
	raw := e.do("GET", "/api/tests/up.yaml/yaml", nil)
	if !strings.HasPrefix(string(raw.body), "# hand-written") || !strings.Contains(string(raw.body), "# why") {
		t.Fatalf("stored text lost the author's comments: %s", raw.body)
	}

	tests := []struct {
		name, file, text string
		status           int
		code             string
		problems         []testcase.Problem
	}{
		{"syntax error", "s.yaml", "id: a\ntitle: b\nsteps:\n  - action: [x\n", 400, "INVALID_CASE", nil},
		{"unknown field with line", "u.yaml", "id: a\ntitle: b\npriority: high\ncolour: red\nsteps:\n  - action: x\n", 400, "INVALID_CASE",
			[]testcase.Problem{{Field: "colour", Line: 4, Message: "unknown field"}}},
		{"wrong type with line", "w.yaml", "id: a\ntitle: b\nsteps:\n  - action: x\n    tool: true\n", 400, "INVALID_CASE",
			[]testcase.Problem{{Field: "steps[0].tool", Line: 5, Message: "must be a mapping, got a boolean"}}},
		{"missing required", "m.yaml", "id: a\nsteps:\n  - action: x\n", 400, "INVALID_CASE",
			[]testcase.Problem{{Field: "title", Line: 1, Message: "required"}}},
		{"id of another file", "other.yaml", "id: up-1\ntitle: t\nsteps:\n  - action: x\n", 409, "CASE_ID_EXISTS", nil},
		{"traversal", "../x.yaml", text, 400, "INVALID_FILE_NAME", nil},
		{"deeper traversal", "../../etc/x.yaml", text, 400, "INVALID_FILE_NAME", nil},
		{"backslash", `a\b.yaml`, text, 400, "INVALID_FILE_NAME", nil},
		{"dot", ".", text, 400, "INVALID_FILE_NAME", nil},
		{"dot dot", "..", text, 400, "INVALID_FILE_NAME", nil},
		{"hidden", ".x.yaml", text, 400, "INVALID_FILE_NAME", nil},
		{"not yaml", "x.txt", text, 400, "INVALID_FILE_NAME", nil},
		{"empty name", "", text, 400, "INVALID_FILE_NAME", nil},
		{"too large for a case", "big.yaml", "id: a\ntitle: b\nsteps:\n  - action: x\n#" + strings.Repeat("x", testcase.MaxDocumentSize), 413, "CASE_TOO_LARGE", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := expect(t, e.upload("/api/tests/upload-yaml", tc.file, []byte(tc.text)), tc.status, tc.code)
			if tc.name == "syntax error" && (len(b.Problems) != 1 || b.Problems[0].Line != 4 || !strings.Contains(b.Problems[0].Message, "invalid YAML")) {
				t.Fatalf("problems %+v", b.Problems)
			}
			if tc.problems != nil && !reflect.DeepEqual(b.Problems, tc.problems) {
				t.Fatalf("problems %+v, want %+v", b.Problems, tc.problems)
			}
		})
	}
	if got := dirNames(t, e.casesDir); !slices.Equal(got, []string{"up.yaml"}) {
		t.Fatalf("case folder %v", got)
	}
	if got := dirNames(t, filepath.Dir(e.casesDir)); slices.Contains(got, "x.yaml") {
		t.Fatal("a traversal wrote outside the case folder")
	}
}

func TestUploadForms(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxUpload = 1024 })
	ok := []byte(caseYAML("f", ""))
	wrongField, ct := multipartBody(t, "document", "f.yaml", ok)
	expect(t, e.send(&editor, "POST", "/api/tests/upload-yaml", ct, wrongField), 400, "INVALID_UPLOAD")
	expect(t, e.send(&editor, "POST", "/api/tests/upload-yaml", "application/json", []byte(`{}`)), 400, "INVALID_UPLOAD")
	expect(t, e.send(&editor, "POST", "/api/tests/upload-yaml", "multipart/form-data; boundary=x", []byte("garbage")), 400, "INVALID_UPLOAD")
	noName := []byte("--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nid: x\r\n--b--\r\n")
	expect(t, e.send(&editor, "POST", "/api/tests/upload-yaml", "multipart/form-data; boundary=b", noName), 400, "INVALID_UPLOAD")
	big := []byte(caseYAML("big", "") + "#" + strings.Repeat("x", 1100))
	expect(t, e.upload("/api/tests/upload-yaml", "big.yaml", big), 413, "CASE_TOO_LARGE")
	// A large field before the file counts against the body limit.
	var huge []byte
	huge = append(huge, "--b\r\nContent-Disposition: form-data; name=\"pad\"\r\n\r\n"...)
	huge = append(huge, strings.Repeat("p", 200<<10)...)
	huge = append(huge, "\r\n--b--\r\n"...)
	expect(t, e.send(&editor, "POST", "/api/tests/upload-yaml", "multipart/form-data; boundary=b", huge), 413, "CASE_TOO_LARGE")
	// A JSON case body is held to the same limit.
	c := sampleCase("j", strings.Repeat("t", 2000))
	expect(t, e.do("POST", "/api/tests", c), 413, "TOO_LARGE")
	expect(t, e.upload("/api/tests/upload-yaml", "f.yaml", ok), 201, "")
}
