package fcc

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"cpesuite/internal/platform/sqlstore"
)

func TestParseIdentity(t *testing.T) {
	cases := []struct {
		name    string
		h       hdr
		wantErr string
		all     bool
		ids     []int64
		user    string
	}{
		{"missing scope", hdr{}, "is required", false, nil, ""},
		{"unparseable scope", hdr{HeaderScope: "*"}, "must be LIST or ALL", false, nil, ""},
		{"wildcard words are not a scope", hdr{HeaderScope: "ANY"}, "must be LIST or ALL", false, nil, ""},
		{"all", hdr{HeaderScope: "ALL", HeaderDomainIDs: "1,2"}, "", true, nil, ""},
		{"list lower case", hdr{HeaderScope: " list ", HeaderDomainIDs: "3, 2,3", HeaderUserID: "u1"}, "", false, []int64{2, 3}, "u1"},
		{"list without ids sees nothing", hdr{HeaderScope: "LIST"}, "", false, nil, ""},
		{"bad id list", hdr{HeaderScope: "LIST", HeaderDomainIDs: "1,x"}, "comma separated", false, nil, ""},
		{"bad domain id", hdr{HeaderScope: "LIST", HeaderDomainID: "one"}, "must be a domain id", false, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range c.h {
				h.Set(k, v)
			}
			id, err := parseIdentity(h)
			if c.wantErr != "" {
				if err == nil || errorCode(403, err) != 9401 {
					t.Fatalf("err %v, want the identity 403", err)
				}
				if e, _ := err.(interface{ Error() string }); !strings.Contains(describeOf(err), c.wantErr) {
					t.Fatalf("description %q lacks %q (%v)", describeOf(err), c.wantErr, e)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if id.All != c.all || len(id.DomainIDs) != len(c.ids) || id.UserID != c.user {
				t.Fatalf("got %+v", id)
			}
			for i := range c.ids {
				if id.DomainIDs[i] != c.ids[i] {
					t.Fatalf("ids %v, want %v", id.DomainIDs, c.ids)
				}
			}
		})
	}
}

func describeOf(err error) string {
	w := httptest.NewRecorder()
	writeError(w, nil, 403, err)
	return w.Body.String()
}

// The identity filter guards every route: no scope, no service, whatever
// the body says.
func TestIdentityFilterOnEveryRoute(t *testing.T) {
	h := newHarness(t, sqlstore.SQLite, nil)
	for _, route := range []string{"PUT /FCC/item/details", "POST /FCC/item/details", "POST /FCC/items", "PUT /FCC/item/export",
		"PUT /FCC/item/import", "POST /FCC/devices/resolve", "POST /FCC/devices/count", "PUT /FCC/devices/import",
		"POST /FCC/activate/devices/countByGroupConfigs", "POST /FCC/activate/devices/countByGroupIds",
		"POST /FCC/manufacturerAndModelByTestType", "POST /FCC/admin/domain-setting/list", "PUT /FCC/admin/domain-setting",
		"POST /FCC/admin/domain-setting/delete", "POST /FCC/admin/model-capability/list", "PUT /FCC/admin/model-capability"} {
		method, path, _ := strings.Cut(route, " ")
		for _, id := range []hdr{{}, {HeaderScope: "EVERYTHING"}, {HeaderScope: "LIST", HeaderDomainIDs: "2;3"}} {
			r := h.do(method, path, id, map[string]any{"id": 1, "domainIds": []int{2}})
			r.want(403)
			if e := r.errorBody(); e.Code != 9401 {
				t.Fatalf("%s: code %d, want the identity code 9401", route, e.Code)
			}
		}
	}
	// The documentation is not behind the filter.
	h.do("GET", "/FCC/v3/api-docs", nil, nil).want(200)
}
