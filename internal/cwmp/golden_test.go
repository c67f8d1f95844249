package cwmp

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.xml from the samples")

// TestGolden checks every sample against its golden file: the encoding is
// byte-identical, decoding the file gives the sample back, and encoding that
// again gives the file.
func TestGolden(t *testing.T) {
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			path := filepath.Join("testdata", "golden", s.name+".xml")
			got, err := Encode(s.env)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("Encode differs from %s (rerun with -update if intended):\n%s", path, lineDiff(string(want), string(got)))
			}
			env, err := Decode(want)
			if err != nil {
				t.Fatalf("Decode(%s): %v", path, err)
			}
			if !reflect.DeepEqual(env, s.env) {
				t.Fatalf("Decode(%s) =\n%#v\nwant\n%#v", path, env.Body, s.env.Body)
			}
			again, err := Encode(env)
			if err != nil || !bytes.Equal(again, want) {
				t.Fatalf("re-encoding %s differs (err %v)", path, err)
			}
		})
	}
}

// TestGoldenCoversEveryMethod makes sure a new message type gets a sample.
func TestGoldenCoversEveryMethod(t *testing.T) {
	have := map[string]bool{}
	for _, s := range samples {
		have[s.env.Body.Method()] = true
	}
	for name := range methods {
		if !have[name] {
			t.Errorf("no sample (and golden file) for %s", name)
		}
		if got := methods[name]().Method(); got != name {
			t.Errorf("methods[%q] builds a %s", name, got)
		}
	}
}

// lineDiff shows the first differing line with some context.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl
		}
	}
	return "(no line differs)"
}

// arrayElements hold array items: any child there is an item, so vendor
// elements are not injected into them.
var arrayElements = map[string]bool{
	"SOAP-ENV:Envelope": true, "SOAP-ENV:Body": true,
	"ParameterList": true, "Event": true, "ParameterNames": true, "MethodList": true, "AccessList": true,
	"FileTypeArg": true, "TimeWindowList": true, "TransferList": true, "OptionList": true, "VoucherList": true,
}

var complexStart = regexp.MustCompile(`<([A-Za-z:-]+)( [^>]*)?>\n( *)`)

// TestVendorExtensionsAreSkipped injects unknown elements, with attributes,
// children and text, as the first child of every struct in every golden file;
// decoding must give the sample unchanged.
func TestVendorExtensionsAreSkipped(t *testing.T) {
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "golden", s.name+".xml"))
			if err != nil {
				t.Fatal(err)
			}
			injected := complexStart.ReplaceAllStringFunc(string(data), func(m string) string {
				sub := complexStart.FindStringSubmatch(m)
				if arrayElements[sub[1]] {
					return m
				}
				return m + sub[3] + `<X_ACME_Ext a="1"><Value>v</Value>t&amp;<b/></X_ACME_Ext>` + "\n" + sub[3]
			})
			env, err := Decode([]byte(injected))
			if err != nil {
				t.Fatalf("Decode: %v\n%s", err, injected)
			}
			if !reflect.DeepEqual(env, s.env) {
				t.Fatalf("Decode with extensions =\n%#v\nwant\n%#v\n%s", env.Body, s.env.Body, injected)
			}
		})
	}
}
