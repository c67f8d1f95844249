package cwmp

import "testing"

func TestVersions(t *testing.T) {
	for v := CWMP10; v <= CWMP14; v++ {
		got, ok := ParseNamespace(" " + v.Namespace() + " ")
		if !ok || got != v || !v.Valid() {
			t.Errorf("%v: ParseNamespace(Namespace()) = %v, %v", v, got, ok)
		}
	}
	if CWMP12.String() != "cwmp-1-2" || CWMP10.Namespace() != "urn:dslforum-org:cwmp-1-0" {
		t.Errorf("String, Namespace = %q, %q", CWMP12.String(), CWMP10.Namespace())
	}
	bad := Version(5)
	if bad.Valid() || bad.Namespace() != "" || bad.String() != "cwmp-invalid" {
		t.Errorf("Version(5): %v %q %q", bad.Valid(), bad.Namespace(), bad.String())
	}
	for _, uri := range []string{"", "urn:dslforum-org:cwmp-1-5", "urn:dslforum-org:cwmp-1-", "urn:dslforum-org:cwmp-1-10", "urn:broadband-forum-org:cwmp-1-2", "urn:dslforum-org:cwmp-2-0"} {
		if v, ok := ParseNamespace(uri); ok {
			t.Errorf("ParseNamespace(%q) = %v", uri, v)
		}
	}
}
