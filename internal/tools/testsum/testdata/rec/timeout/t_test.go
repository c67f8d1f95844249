package timeout

import (
	"testing"
	"time"
)

func TestQuick(t *testing.T) {}

func TestHangs(t *testing.T) {
	t.Log("waiting forever")
	time.Sleep(time.Hour)
}
