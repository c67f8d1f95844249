package buildfail

import "testing"

func TestF(t *testing.T) { var x int = "s"; _ = x }
