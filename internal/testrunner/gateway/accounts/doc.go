// Package accounts holds the test-runner gateway's accounts, sessions,
// login rate limit and audit log, and serves their part of the gateway API
// (/api/auth/*, /api/users*, /api/activity).
//
// # Sessions are random tokens, not signed ones
//
// A login returns "trg_" followed by 32 random bytes in base64url. The
// database keeps only the token's SHA-256 (hex) with the username and an
// expiry. Signed, self-contained tokens (JWTs) were rejected because:
//
//   - logout and a password reset must end sessions at once; with signed
//     tokens that needs a server-side deny list, that is server state
//     anyway, only of a more awkward kind;
//   - checking a token is one primary-key read of its hash, which costs
//     about as much as verifying a signature and also yields the account's
//     current role, so a deleted account loses access on its next request;
//   - a leaked copy of the table holds no usable token: SHA-256 of 256
//     random bits cannot be reversed, so, unlike for passwords, a fast hash
//     without salt is enough.
//
// Expired tokens are refused; they are deleted when presented, when their
// owner logs in again, and by PurgeExpired.
//
// # Passwords and logins
//
// Passwords are argon2id hashes (passwd.Hash); chosen passwords must pass
// passwd.Check. A login for an unknown user spends one argon2 verification
// against a dummy hash, so that its timing does not tell which usernames
// exist, and it gets the same answer as a wrong password.
//
// Failed logins are limited per (username, client address) pair: after
// MaxFailures failures within FailureWindow the next attempts answer 429
// without checking the password, until the oldest failure leaves the
// window. The window counts failures only: a success in between does not
// clear them. Clearing on success would let someone who knows one valid
// password, or who shares an address with its owner, reset the counter at
// will and keep guessing the other accounts' passwords at full speed; the
// cost is that the owner of an account who mistyped five times waits up to
// a minute even after a later success.
//
// # Audit log
//
// Logins (successful, failed, refused by a limit and refused as busy),
// logouts and every account change are recorded; of the refusals only the
// first of each run per pair or address and window, so that a flood of
// them cannot grow the table or queue behind its writes. The rows go to
// the gw_activity table, which the gateway also writes through Record.
// Passwords and tokens are never recorded or logged.
package accounts
