package exitafter

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	fmt.Println("leaked goroutines found after the tests")
	if code == 0 {
		code = 1
	}
	os.Exit(code)
}

func TestFine(t *testing.T) {}
