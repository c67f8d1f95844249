package portainer

import (
	"regexp"
	"strings"

	"cpesuite/internal/platform/apperr"
)

// MaxStackNameLen is our own cap; Portainer sets none, but compose derives
// network and container names from the stack name.
const MaxStackNameLen = 63

// maxComposeBytes caps the compose file we send, like the bodies we read.
const maxComposeBytes = maxBody

var (
	// stackNameRe is what Portainer keeps of a name: it lower-cases it and
	// drops everything outside [-_a-z0-9]. Refusing other names up front
	// means the stack we create is the stack we later look up by name.
	stackNameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	// containerNameRe is Docker's rule for container names (and ids).
	containerNameRe = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)
	envNameRe       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// ValidateStackName returns an apperr.ErrInvalid (400) error unless name is
// a stack name Portainer keeps as it is.
func ValidateStackName(name string) error {
	if len(name) > MaxStackNameLen || !stackNameRe.MatchString(name) {
		return apperr.Invalid("", "invalid stack name %q: use 1 to %d lower-case letters, digits, '-' and '_', starting with a letter or digit", clip(name), MaxStackNameLen)
	}
	return nil
}

func validateContainerName(name string) error {
	if len(name) > 255 || !containerNameRe.MatchString(strings.TrimPrefix(name, "/")) {
		return apperr.Invalid("", "invalid container name %q", clip(name))
	}
	return nil
}

func validateID(id int) error {
	if id <= 0 {
		return apperr.Invalid("", "invalid stack id %d", id)
	}
	return nil
}

func validateCompose(compose string) error {
	if strings.TrimSpace(compose) == "" {
		return apperr.Invalid("", "the compose file is empty")
	}
	if len(compose) > maxComposeBytes {
		return apperr.Invalid("", "the compose file is larger than %d bytes", maxComposeBytes)
	}
	return nil
}

// validateEnv checks the variables Portainer writes into the stack's env
// file as NAME=value lines: a line break in a value would smuggle in a
// variable of its own.
func validateEnv(env []EnvVar) error {
	seen := make(map[string]bool, len(env))
	for _, v := range env {
		if !envNameRe.MatchString(v.Name) {
			return apperr.Invalid("", "invalid environment variable name %q", clip(v.Name))
		}
		if seen[v.Name] {
			return apperr.Invalid("", "environment variable %s is given twice", v.Name)
		}
		seen[v.Name] = true
		if strings.ContainsAny(v.Value, "\r\n\x00") {
			return apperr.Invalid("", "environment variable %s: the value must not contain line breaks or NUL", v.Name)
		}
	}
	return nil
}

// clip keeps echoed input short.
func clip(s string) string {
	const max = 80
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
