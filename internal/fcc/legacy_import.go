package fcc

import "cpesuite/internal/fcc/legacy"

// UseLegacy connects the legacy import endpoints to an importer. The app
// constructs it with legacy.New(ctx, cfg.Legacy, legacy.Deps{FCC: s.DB(),
// Source: <database opened from cfg.Legacy.SourceDialect/SourceDSN>,
// Store: <the result store>, Gate: <the results.Probe>, Devices:
// legacy.ACSDevices(<ACS device tables>), Registerer, Log}) after the
// campaign store is open, calls Close on shutdown, and should construct it
// even when the import is disabled so that status still answers. Without
// an importer the three endpoints answer 503.
func (s *Service) UseLegacy(imp *legacy.Importer) { s.legacy = imp }
