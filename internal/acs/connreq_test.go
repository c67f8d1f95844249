package acs

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cpesuite/internal/platform/httpauth"
	"cpesuite/internal/platform/logx"
)

// cpeEndpoint is a CPE's connection request endpoint guarded by Digest,
// answering failures first when asked to.
func cpeEndpoint(t *testing.T, user, pass string, failFirst int32) (*httptest.Server, *atomic.Int32) {
	v := &httpauth.Verifier{Digest: true, Creds: httpauth.StaticCredentials{user: pass}}
	var hits atomic.Int32
	srv := httptest.NewServer(v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= failFirst {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestConnectionRequest(t *testing.T) {
	forStores(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ok, _ := cpeEndpoint(t, "cr", "secret", 0)
		flaky, flakyHits := cpeEndpoint(t, "cr", "secret", 1)
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		dead := "http://" + ln.Addr().String() + "/cr"
		ln.Close()

		tests := []struct {
			name, url, user, pass string
			wantErr               string
			wantOutcome           string
		}{
			{"digest ok", ok.URL + "/cr", "cr", "secret", "", CROK},
			{"retried after 503", flaky.URL + "/cr", "cr", "secret", "", CROK},
			{"wrong password is not retried", ok.URL + "/cr", "cr", "wrong", "credentials rejected", CRAuthFailed},
			{"unreachable", dead, "cr", "secret", "after 3 attempts", CRUnreachable},
			{"no url", "", "", "", "no connection request URL", CRNoURL},
			{"not http", "ftp://x/y", "", "", "not an http URL", CRNoURL},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res, err := s.ApplyInforms(ctx, []InformUpdate{inform("CR"+string(rune('A'+i)), time.Now(), nil)})
				if err != nil {
					t.Fatal(err)
				}
				dev := res[0].DeviceID
				txn, _ := s.Enqueue(ctx, "", []NewTask{{DeviceID: dev, Kind: KindReboot}})
				user, pass := tt.user, tt.pass
				if err := s.UpdateDevice(ctx, dev, DeviceUpdate{ConnReqUsername: &user, ConnReqPassword: &pass}); err != nil {
					t.Fatal(err)
				}
				d := mustDevice(t, s, dev)
				d.ConnReqURL = tt.url
				var outcomes []string
				cr := newConnRequester(ConnRequestConfig{Timeout: 30 * time.Second, Attempts: 3, Backoff: time.Millisecond}, s, logx.Discard())
				cr.observe = func(o string) { outcomes = append(outcomes, o) }
				err = cr.Request(ctx, d)
				if tt.wantErr == "" && err != nil {
					t.Fatalf("err %v", err)
				}
				if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				if len(outcomes) == 0 || outcomes[len(outcomes)-1] != tt.wantOutcome {
					t.Fatalf("outcomes %v, want last %s", outcomes, tt.wantOutcome)
				}
				// The task is never dropped; the attempt is recorded on it.
				task, err := s.Task(ctx, txn.Tasks[0].ID)
				if err != nil || task.State != TaskPending || task.ConnReqCount != 1 {
					t.Fatalf("task %+v %v", task, err)
				}
				if (task.ConnReqError == "") != (tt.wantErr == "") {
					t.Fatalf("recorded error %q", task.ConnReqError)
				}
			})
		}
		if flakyHits.Load() < 2 {
			t.Errorf("flaky endpoint hit %d times", flakyHits.Load())
		}
	})
}

func TestConnectionRequestHonoursContext(t *testing.T) {
	forStores(t, func(t *testing.T, s *Store) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
		defer srv.Close()
		res, _ := s.ApplyInforms(context.Background(), []InformUpdate{inform("CTX", time.Now(), nil)})
		d := mustDevice(t, s, res[0].DeviceID)
		d.ConnReqURL = srv.URL
		cr := newConnRequester(ConnRequestConfig{Timeout: time.Second, Attempts: 5, Backoff: time.Hour}, s, logx.Discard())
		// The hour-long backoff must be cut short by the caller's deadline.
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if err := cr.Request(ctx, d); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v, want context.DeadlineExceeded", err)
		}
	})
}
