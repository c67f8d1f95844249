// Package jwtauth issues and verifies the configuration service's access
// and refresh tokens: JWTs signed with HMAC-SHA256 under the key decoded
// from JWT_SECRET.
//
// Revocation and refresh-token reuse detection need state and live in the
// service; this package only says whether a token is authentic, current and
// of the expected kind.
//
//	key, err := jwtauth.DecodeSecret(os.Getenv("JWT_SECRET"))
//	iss, err := jwtauth.NewIssuer(key, 24*time.Hour, 7*24*time.Hour)
//	tok, claims, err := iss.Issue(jwtauth.Access, jwtauth.Claims{UserID: 7, Role: "ADMIN"})
//	claims, err := iss.Parse(tok, jwtauth.Access)
package jwtauth
