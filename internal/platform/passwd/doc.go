// Package passwd hashes and verifies account passwords (configuration
// service, test-runner gateway), generates temporary and one-time passwords, and
// enforces the policy for passwords that people choose.
//
// Hashes are argon2id in the PHC string format, so that a stored hash
// carries its own parameters and the cost can be raised later without
// invalidating existing rows:
//
//	h, err := passwd.Hash(password)          // store h
//	ok, err := passwd.Verify(h, attempt)     // err means the stored row is malformed
//
// Each argon2 computation holds 19 MiB and a core for tens of
// milliseconds, so services check passwords through the process's one
// Limiter (Shared().Verify, Shared().Hash), which bounds how many run at
// once and refuses the excess with a *BusyError instead of queueing it
// without end.
package passwd
