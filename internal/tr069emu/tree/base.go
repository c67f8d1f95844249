package tree

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"sync"
)

//go:embed base/tr098-base.xml base/tr181-base.xml
var baseFS embed.FS

var baseFiles = map[string]string{
	TR098: "tr098-base.xml",
	TR181: "tr181-base.xml",
}

type baseTemplate struct {
	once sync.Once
	t    *Template
	err  error
}

var bases = map[string]*baseTemplate{TR098: {}, TR181: {}}

// Base returns the shipped base tree of a data model: "TR-098" or "TR-181".
// It is parsed once and shared. The data model is matched without regard
// to case.
func Base(dataModel string) (*Template, error) {
	var model string
	for m := range bases {
		if strings.EqualFold(m, dataModel) {
			model = m
		}
	}
	if model == "" {
		return nil, fmt.Errorf("tree: no base tree for data model %q (want %s or %s)", dataModel, TR098, TR181)
	}
	b := bases[model]
	b.once.Do(func() {
		data, err := baseFS.ReadFile("base/" + baseFiles[model])
		if err != nil {
			b.err = err
			return
		}
		b.t, b.err = Parse(bytes.NewReader(data), 0)
		if b.err == nil && b.t.DataModel() != model {
			b.t, b.err = nil, fmt.Errorf("tree: base file %s is %s, not %s", baseFiles[model], b.t.DataModel(), model)
		}
	})
	return b.t, b.err
}

// BaseFiles returns the file names and bytes of the shipped base trees,
// written to the tree folder on first start. The bytes are a copy.
func BaseFiles() map[string][]byte {
	out := make(map[string][]byte, len(baseFiles))
	for _, f := range baseFiles {
		data, err := baseFS.ReadFile("base/" + f)
		if err != nil {
			panic("tree: embedded base file missing: " + err.Error())
		}
		out[f] = bytes.Clone(data)
	}
	return out
}
