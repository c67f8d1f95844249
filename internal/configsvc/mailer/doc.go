// Package mailer sends the configuration service's e-mail (temporary
// passwords and deletion one-time passwords) or withholds it, according to a
// delivery mode resolved once at start-up.
//
// The mode exists because the service must work where no mail server is
// reachable: under MAIL_MODE=AUTO mail is attempted only when MAIL_HOST,
// MAIL_USERNAME and MAIL_PASSWORD are all set, and MAIL_MODE=OFFLINE never
// sends. When mail is offline, or a send fails, the caller takes the offline
// path for that operation (the temporary password is returned in the HTTP
// response, a deletion needs no one-time password), so Send reports ErrOffline
// without touching the network and reports every other failure as an error
// instead of retrying. The resolution is a configuration check only: probing
// the server at start-up would make the advertised mode depend on a moment's
// network state.
//
// Every SMTP step runs under the fixed Timeout of the specification, so a
// silent or unreachable server costs an operation seconds, not minutes.
// MAIL_PASSWORD never appears in logs or in returned errors.
package mailer
