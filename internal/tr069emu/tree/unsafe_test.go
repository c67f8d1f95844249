package tree

import "unsafe"

// unsafeSameData reports whether two strings share their bytes.
func unsafeSameData(a, b string) bool {
	return len(a) > 0 && len(b) > 0 && unsafe.StringData(a) == unsafe.StringData(b)
}
