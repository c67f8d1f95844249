package configsvc

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"cpesuite/internal/platform/apperr"
)

// Limits of a product-class group; the name is also its grid map key.
var groupNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

const (
	maxGroupClasses   = 1000
	maxClassLen       = 64
	maxGroupDescBytes = 1024
)

// GroupInput is the body of PUT /api/admin/product-class-groups/{name}.
type GroupInput struct {
	Description    string   `json:"description,omitempty"`
	ProductClasses []string `json:"productClasses"`
}

func validGroupName(name string) error {
	if !groupNameRE.MatchString(name) || strings.Contains(name, "..") || strings.HasSuffix(name, ".") {
		return apperr.Invalid("INVALID_GROUP_NAME", "group name must be 1 to 128 letters, digits, '_', '-' or single dots, starting with a letter or digit")
	}
	return nil
}

// PutGroup creates or replaces a group and republishes the snapshot.
func (s *Service) PutGroup(ctx context.Context, actor Principal, name string, in GroupInput) (ProductClassGroup, bool, error) {
	if err := validGroupName(name); err != nil {
		return ProductClassGroup{}, false, err
	}
	if len(in.Description) > maxGroupDescBytes {
		return ProductClassGroup{}, false, apperr.Invalid("INVALID_GROUP", "description is longer than %d bytes", maxGroupDescBytes)
	}
	if len(in.ProductClasses) == 0 || len(in.ProductClasses) > maxGroupClasses {
		return ProductClassGroup{}, false, apperr.Invalid("INVALID_GROUP", "productClasses must list 1 to %d product classes", maxGroupClasses)
	}
	classes := make([]string, 0, len(in.ProductClasses))
	for _, c := range in.ProductClasses {
		c = strings.TrimSpace(c)
		if c == "" || len(c) > maxClassLen || strings.ContainsFunc(c, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return ProductClassGroup{}, false, apperr.Invalid("INVALID_GROUP", "each product class must be 1 to %d printable characters", maxClassLen)
		}
		classes = append(classes, c)
	}
	slices.Sort(classes)
	classes = slices.Compact(classes)
	g := ProductClassGroup{Name: name, Description: strings.TrimSpace(in.Description), ProductClasses: classes, UpdatedAt: s.now().UTC().Truncate(1e6)}
	created, err := s.st.putGroup(ctx, g)
	if err != nil {
		return ProductClassGroup{}, false, err
	}
	s.audit.record(ctx, actor, "GROUP_PUT", name, "SUCCESS", map[string]any{"created": created, "productClasses": anySlice(classes)})
	if err := s.link.publishGroups(ctx); err != nil {
		// Stored; the next reconnect or change republishes it.
		s.log.Warn("publishing product-class groups", "err", err)
	}
	return g, created, nil
}

// DeleteGroup deletes a group and republishes the snapshot.
func (s *Service) DeleteGroup(ctx context.Context, actor Principal, name string) error {
	if err := validGroupName(name); err != nil {
		return err
	}
	if err := s.st.deleteGroup(ctx, name); err != nil {
		return err
	}
	s.audit.record(ctx, actor, "GROUP_DELETE", name, "SUCCESS", nil)
	if err := s.link.publishGroups(ctx); err != nil {
		s.log.Warn("publishing product-class groups", "err", err)
	}
	return nil
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
