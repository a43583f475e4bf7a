package daemon

import (
	"testing"
	"time"
)

func TestLogLimit(t *testing.T) {
	t.Parallel()
	l := logLimit{period: time.Hour}
	if ok, n := l.allow(); !ok || n != 0 {
		t.Fatalf("first line: %v, %d", ok, n)
	}
	for range 1000 {
		if ok, _ := l.allow(); ok {
			t.Fatal("a second line within the period")
		}
	}
	l.last = time.Now().Add(-2 * time.Hour)
	if ok, n := l.allow(); !ok || n != 1000 {
		t.Fatalf("after the period: %v, %d held back, want 1000", ok, n)
	}
}
