package configsvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cpesuite/internal/platform/apperr"
	"cpesuite/internal/platform/grid"
	"cpesuite/internal/platform/health"
)

// Grid settings fixed by the spec's Limits table.
const (
	gridBackoffInitial = 2 * time.Second
	gridBackoffMax     = 10 * time.Second
	nearCacheTTL       = 90 * time.Second
	// gridCallTimeout bounds one map call made while serving a request, so
	// that a half-open connection fails the request instead of hanging it.
	gridCallTimeout = 2 * time.Second
	revokedMapName  = "revokedTokens"
)

// errGridDown rejects token-bearing requests while the revocation list
// cannot be read: accepting them would honour tokens that were revoked.
var errGridDown = apperr.New(apperr.ErrUnavailable, "GRID_UNAVAILABLE", "the token revocation list cannot be checked (data grid unreachable); try again shortly")

// gridLink is the service's client connection to the grid: the revocation
// list, the product-class groups cache it publishes, and the state shown
// by the cacheWarmup health detail.
type gridLink struct {
	g         *grid.Grid
	log       *slog.Logger
	st        *store
	prefix    string
	groupsN   string
	revTTL    time.Duration
	accessTTL time.Duration
	now       func() time.Time

	mu      sync.RWMutex
	revoked *grid.Map
	groups  *grid.Map

	running     atomic.Bool
	warm        atomic.Bool
	republishes atomic.Int64
	stopEvents  func()
	wg          sync.WaitGroup
	ctx         context.Context
	cancel      context.CancelFunc

	near nearCache
	// onPublish, when not nil, hears of each completed publication.
	onPublish func()
}

// newGridLink declares the maps and publishes the snapshots (the warm-up).
// The grid's cluster name prefixes every map so that two clusters sharing
// one NATS account never read each other's data.
func newGridLink(ctx context.Context, g *grid.Grid, st *store, cluster, groupsCache string, accessTTL time.Duration, onPublish func(), log *slog.Logger) (*gridLink, error) {
	l := &gridLink{g: g, log: log, st: st, prefix: cluster + "_", groupsN: groupsCache, revTTL: accessTTL + time.Minute, accessTTL: accessTTL, now: time.Now, onPublish: onPublish}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.running.Store(true)
	if err := l.publish(ctx); err != nil {
		l.cancel()
		return nil, err
	}
	l.stopEvents = g.OnEvent(l.onEvent)
	return l, nil
}

// onEvent runs on the grid's event goroutine. The republish goes to its own
// goroutine so that a slow grid never delays the next event.
func (l *gridLink) onEvent(ev grid.Event) {
	switch ev.Kind {
	case grid.Disconnected:
		l.log.Warn("grid client disconnected; token checks fail until it reconnects", "err", ev.Err)
	case grid.Reconnected:
		l.log.Info("grid client connected again; republishing cache snapshots", "server", ev.Server)
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			if err := l.publish(l.ctx); err != nil && l.ctx.Err() == nil {
				l.log.Error("republishing cache snapshots", "err", err)
			}
		}()
	case grid.Closed:
		l.running.Store(false)
	}
}

// publish (re)declares the maps and writes the snapshots into them: the
// product-class groups and every revoked access token still alive. After a
// grid restart that lost its data, this is what brings revocations back.
func (l *gridLink) publish(ctx context.Context) error {
	l.warm.Store(false)
	rev, err := grid.NewMap(ctx, l.g, l.prefix+revokedMapName, grid.MapOptions{TTL: l.revTTL})
	if err != nil {
		return fmt.Errorf("declaring revocation map: %w", err)
	}
	groups, err := grid.NewMap(ctx, l.g, l.prefix+l.groupsN, grid.MapOptions{})
	if err != nil {
		return fmt.Errorf("declaring %s: %w", l.groupsN, err)
	}
	l.mu.Lock()
	l.revoked, l.groups = rev, groups
	l.mu.Unlock()

	now := l.now()
	tokens, err := l.st.liveRevoked(ctx, now)
	if err != nil {
		return err
	}
	for _, t := range tokens {
		val := []byte{1}
		if strings.HasPrefix(t.JTI, "user-") {
			// A user entry's value is its epoch: expiry minus the access
			// lifetime (see revokeUser).
			val = []byte(strconv.FormatInt(t.ExpiresAt.Add(-l.accessTTL).UnixMilli(), 10))
		}
		if err := rev.Put(ctx, t.JTI, val, t.ExpiresAt.Sub(now)); err != nil && !errors.Is(err, grid.ErrInvalid) {
			return fmt.Errorf("republishing revoked token: %w", err)
		}
	}
	list, err := l.st.listGroups(ctx)
	if err != nil {
		return err
	}
	if err := l.replaceGroups(ctx, groups, list); err != nil {
		return err
	}
	l.near.invalidate()
	l.republishes.Add(1)
	if l.onPublish != nil {
		l.onPublish()
	}
	l.warm.Store(true)
	l.log.Info("cache snapshots published", "cache", l.groupsN, "groups", len(list), "revoked_tokens", len(tokens))
	return nil
}

// replaceGroups makes the map hold exactly list.
func (l *gridLink) replaceGroups(ctx context.Context, m *grid.Map, list []ProductClassGroup) error {
	keep := map[string]bool{}
	for _, g := range list {
		b, err := json.Marshal(g)
		if err != nil {
			return err
		}
		if err := m.Put(ctx, g.Name, b, 0); err != nil {
			return fmt.Errorf("publishing group %q: %w", g.Name, err)
		}
		keep[g.Name] = true
	}
	keys, err := m.Keys(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if !keep[k] {
			if err := m.Delete(ctx, k); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *gridLink) maps() (rev, groups *grid.Map) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.revoked, l.groups
}

func (l *gridLink) connected() bool { return l.g.Status() == grid.StatusConnected }

// userKey is the revocation entry that voids every token of a user issued
// before a moment (password change, deletion).
func userKey(id int64) string { return "user-" + strconv.FormatInt(id, 10) }

// checkRevoked reports whether the token jti of user uid, issued under
// credential epoch (Unix ms), is revoked. It fails while the grid is
// unreachable.
func (l *gridLink) checkRevoked(ctx context.Context, jti string, uid int64, epoch int64) (bool, error) {
	if !l.connected() {
		return false, errGridDown
	}
	rev, _ := l.maps()
	ctx, cancel := context.WithTimeout(ctx, gridCallTimeout)
	defer cancel()
	if _, ok, err := rev.Get(ctx, jti); err != nil {
		return false, errors.Join(errGridDown, err)
	} else if ok {
		return true, nil
	}
	v, ok, err := rev.Get(ctx, userKey(uid))
	if err != nil {
		return false, errors.Join(errGridDown, err)
	}
	if ok {
		cut, err := strconv.ParseInt(string(v), 10, 64)
		if err == nil && epoch < cut {
			return true, nil
		}
	}
	return false, nil
}

// revokeToken puts an access token on the list until it expires.
func (l *gridLink) revokeToken(ctx context.Context, jti string, exp time.Time) error {
	ttl := exp.Sub(l.now())
	if ttl <= 0 {
		return nil
	}
	if err := l.st.recordRevoked(ctx, jti, exp); err != nil {
		return err
	}
	rev, _ := l.maps()
	if err := rev.Put(ctx, jti, []byte{1}, ttl); err != nil {
		return errors.Join(errGridDown, err)
	}
	return nil
}

// revokeUser voids every access token of uid issued under a credential
// epoch before epoch, for the longest an access token lives.
func (l *gridLink) revokeUser(ctx context.Context, uid int64, epoch time.Time) error {
	now, accessTTL := epoch, l.accessTTL
	if err := l.st.recordRevoked(ctx, userKey(uid), now.Add(accessTTL)); err != nil {
		return err
	}
	rev, _ := l.maps()
	// The durable row keeps only the key; the cut-off is the grid value.
	if err := rev.Put(ctx, userKey(uid), []byte(strconv.FormatInt(now.UnixMilli(), 10)), accessTTL); err != nil {
		return errors.Join(errGridDown, err)
	}
	return nil
}

// publishGroups replaces the groups snapshot after a change.
func (l *gridLink) publishGroups(ctx context.Context) error {
	list, err := l.st.listGroups(ctx)
	if err != nil {
		return err
	}
	_, groups := l.maps()
	if err := l.replaceGroups(ctx, groups, list); err != nil {
		return errors.Join(errGridDown, err)
	}
	l.near.invalidate()
	return nil
}

// cachedGroups reads the groups as a grid client does: from the near cache
// while it is younger than 90 s, otherwise from the grid map.
func (l *gridLink) cachedGroups(ctx context.Context) ([]ProductClassGroup, error) {
	if list, ok := l.near.get(l.now()); ok {
		return list, nil
	}
	if !l.connected() {
		return nil, errGridDown
	}
	_, m := l.maps()
	ctx, cancel := context.WithTimeout(ctx, gridCallTimeout)
	defer cancel()
	keys, err := m.Keys(ctx)
	if err != nil {
		return nil, errors.Join(errGridDown, err)
	}
	list := make([]ProductClassGroup, 0, len(keys))
	for _, k := range keys {
		v, ok, err := m.Get(ctx, k)
		if err != nil {
			return nil, errors.Join(errGridDown, err)
		}
		if !ok {
			continue
		}
		var g ProductClassGroup
		if err := json.Unmarshal(v, &g); err != nil {
			return nil, fmt.Errorf("group %q in the grid: %w", k, err)
		}
		list = append(list, g)
	}
	slices.SortFunc(list, func(a, b ProductClassGroup) int { return strings.Compare(a.Name, b.Name) })
	l.near.put(list, l.now())
	return list, nil
}

// health is the grid component: UP only while connected.
func (l *gridLink) health(context.Context) health.Result {
	if l.connected() {
		return health.Result{Status: health.StatusUp, Details: map[string]any{"cluster": l.prefix[:len(l.prefix)-1]}}
	}
	return health.Result{Status: health.StatusDown, Details: map[string]any{"state": l.g.Status().String()}}
}

// warmup is the cacheWarmup component with the spec's three flags, under
// their Hazelcast names for wire compatibility.
func (l *gridLink) warmup(context.Context) health.Result {
	connected, running, warm := l.connected(), l.running.Load() && l.g.Status() != grid.StatusClosed, l.warm.Load()
	st := health.StatusUp
	if !connected || !running || !warm {
		st = health.StatusDown
	}
	return health.Result{Status: st, Details: map[string]any{
		"hazelcastConnected": connected,
		"hazelcastRunning":   running,
		"warmupComplete":     warm,
	}}
}

// close stops listening and waits for a republish in flight.
func (l *gridLink) close() {
	if l.stopEvents != nil {
		l.stopEvents()
	}
	l.cancel()
	l.wg.Wait()
	l.running.Store(false)
}

// nearCache keeps the last groups read from the grid for nearCacheTTL, as
// the spec's near cache does; local writes invalidate it at once.
type nearCache struct {
	mu   sync.Mutex
	list []ProductClassGroup
	at   time.Time
	ok   bool
}

func (n *nearCache) get(now time.Time) ([]ProductClassGroup, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.ok || now.Sub(n.at) >= nearCacheTTL {
		return nil, false
	}
	return n.list, true
}

func (n *nearCache) put(list []ProductClassGroup, now time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.list, n.at, n.ok = list, now, true
}

func (n *nearCache) invalidate() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ok = false
}
