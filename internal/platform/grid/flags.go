package grid

import (
	"errors"

	"cpesuite/internal/platform/config"
)

// RegisterFlags registers the grid settings. GRID_MEMBERS keeps the name
// the specs give it; the others follow it. StoreDir defaults to empty so
// the process can derive it from its data directory.
func (c *Config) RegisterFlags(s *config.Set) {
	d := DefaultConfig()
	s.Func(config.Var{Flag: "grid.members", Env: EnvMembers, Usage: "external NATS members as host[:port],...; empty runs an embedded server"},
		func(v string) error {
			m, err := ParseMembers(v)
			if err != nil {
				// The loader names the variable itself.
				if inner := errors.Unwrap(err); inner != nil {
					return inner
				}
				return err
			}
			c.Members = m
			return nil
		})
	s.String(&c.StoreDir, "grid.store-dir", EnvStoreDir, "", "JetStream store of the embedded server (default <data-dir>/grid)")
	s.String(&c.Listen, "grid.listen", EnvListen, "", "host:port on which the embedded server also accepts other processes; empty: in-process only")
	s.Duration(&c.ConnectTimeout, "grid.connect-timeout", EnvConnectTimeout, d.ConnectTimeout, "initial connection timeout per member")
	s.String(&c.Name, "grid.name", EnvName, d.Name, "client connection name")
}
