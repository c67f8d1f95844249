package acsclient_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"cpesuite/internal/acs"
	"cpesuite/internal/acs/acsclient"
	"cpesuite/internal/platform/httpx"
	"cpesuite/internal/platform/logx"
	"cpesuite/internal/platform/metrics"
	"cpesuite/internal/platform/sqlstore"
	"cpesuite/internal/platform/sqlstore/sqltest"
)

func TestClientAgainstAPI(t *testing.T) {
	ctx := context.Background()
	store, err := acs.OpenStore(ctx, sqltest.Open(t, sqlstore.SQLite), 1)
	if err != nil {
		t.Fatal(err)
	}
	a, err := acs.New(acs.Config{MaxSessions: 10, SessionTimeout: time.Minute, InformBatch: 8, InformWriters: 1, Auth: "digest",
		Password: "x", OnlineGrace: 2, ConnReq: acs.ConnRequestConfig{Timeout: time.Second, Attempts: 1}}, store, logx.Discard(), metrics.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	mux := httpx.NewMux()
	acs.NewAPI(a).Routes(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	res, err := store.ApplyInforms(ctx, []acs.InformUpdate{{Key: acs.DeviceKey{OUI: "A", ProductClass: "B", Serial: "SER1"},
		Manufacturer: "Acme", DataModel: acs.DataModelTR181, At: time.Now(), OnlineUntil: time.Now().Add(time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	dev := res[0].DeviceID
	c := acsclient.New(srv.URL, nil)

	page, err := c.Devices(ctx, acsclient.DeviceQuery{Serial: "ser1"})
	if err != nil || page.Total != 1 || page.Items[0].Protocol != "TR181" {
		t.Fatalf("devices %+v %v", page, err)
	}
	dom, err := c.CreateDomain(ctx, "North", nil)
	if err != nil {
		t.Fatal(err)
	}
	pw := "cr-secret"
	d, err := c.UpdateDevice(ctx, dev, acs.DeviceUpdate{DomainID: &dom.ID, ConnReqPassword: &pw})
	if err != nil || *d.DomainID != dom.ID {
		t.Fatalf("update %+v %v", d, err)
	}
	if page, _ := c.Devices(ctx, acsclient.DeviceQuery{DomainIDs: []int64{dom.ID}}); page.Total != 1 {
		t.Fatal("domain filter")
	}
	resp, finished, err := c.Enqueue(ctx, dev, acs.EnqueueRequest{Tasks: []acs.TaskSpec{{Kind: acs.KindReboot}}})
	if err != nil || finished || resp.ID == 0 || resp.State != acs.TaskPending {
		t.Fatalf("enqueue %+v %v %v", resp, finished, err)
	}
	txn, err := c.Transaction(ctx, resp.ID)
	if err != nil || len(txn.Tasks) != 1 {
		t.Fatalf("transaction %+v %v", txn, err)
	}
	if task, err := c.CancelTask(ctx, txn.Tasks[0].ID); err != nil || task.State != acs.TaskFault {
		t.Fatalf("cancel %+v %v", task, err)
	}
	detail, err := c.Device(ctx, dev)
	if err != nil || len(detail.OpenTasks) != 0 {
		t.Fatalf("detail %+v %v", detail, err)
	}

	// Errors come back typed, with the API's code.
	tests := []struct {
		name   string
		call   func() error
		status int
		code   string
	}{
		{"unknown device", func() error { _, err := c.Device(ctx, 999); return err }, 404, "NOT_FOUND"},
		{"bad task kind", func() error {
			_, _, err := c.Enqueue(ctx, dev, acs.EnqueueRequest{Tasks: []acs.TaskSpec{{Kind: "Explode"}}})
			return err
		}, 400, "INVALID_TASK"},
		{"bad args", func() error {
			_, _, err := c.Enqueue(ctx, dev, acs.EnqueueRequest{Tasks: []acs.TaskSpec{{Kind: acs.KindGetParameterValues, Args: []byte(`{"names":[]}`)}}})
			return err
		}, 400, "INVALID_TASK"},
		{"wait too long", func() error {
			_, _, err := c.Enqueue(ctx, dev, acs.EnqueueRequest{Tasks: []acs.TaskSpec{{Kind: acs.KindReboot}}, WaitSeconds: 1000})
			return err
		}, 400, "INVALID_WAIT"},
		{"no connection request URL", func() error { return c.ConnectionRequest(ctx, dev) }, 409, "NO_CONNECTION_REQUEST_URL"},
		{"group without selection", func() error {
			_, err := c.EnqueueGroup(ctx, acs.GroupRequest{Tasks: []acs.TaskSpec{{Kind: acs.KindReboot}}})
			return err
		}, 400, "INVALID_SELECTION"},
		{"bad condition", func() error {
			_, err := c.SaveCondition(ctx, 0, acs.ConditionRequest{Name: "x", Criteria: acs.Criteria{Rules: []acs.Rule{{Key: "x", Op: "eq"}}}})
			return err
		}, 400, "INVALID_CRITERIA"},
	}
	for _, tt := range tests {
		err := tt.call()
		e, ok := err.(*acsclient.Error)
		if !ok || e.Status != tt.status || e.Code != tt.code || e.Message == "" {
			t.Errorf("%s: %v, want %d %s", tt.name, err, tt.status, tt.code)
		}
	}
	if !acsclient.IsNotFound(func() error { _, err := c.Task(ctx, 12345); return err }()) {
		t.Error("IsNotFound")
	}

	cond, err := c.SaveCondition(ctx, 0, acs.ConditionRequest{Name: "north", Criteria: acs.Criteria{DomainIDs: []int64{dom.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.EnqueueGroup(ctx, acs.GroupRequest{ConditionID: cond.ID, Tasks: []acs.TaskSpec{{Kind: acs.KindGetParameterValues, Args: []byte(`{"names":["Device."]}`)}}})
	if err != nil || len(g.Tasks) != 1 || g.Tasks[0].DeviceID != dev {
		t.Fatalf("group %+v %v", g, err)
	}
	st, err := c.Stats(ctx)
	if err != nil || st.Devices != 1 || st.TasksPending != 1 {
		t.Fatalf("stats %+v %v", st, err)
	}
	if _, err := http.Get(srv.URL + "/acs/docs/"); err != nil {
		t.Fatal(err)
	}
}
