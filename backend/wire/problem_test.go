package wire

import "testing"

func TestProblemKeepsTheFirst(t *testing.T) {
	var p Problem
	if p.String() != "" {
		t.Fatalf("zero Problem: %q", p.String())
	}
	if err := p.Fail("first %d", 1); err == nil || err.Error() != "first 1" {
		t.Fatalf("Fail = %v", err)
	}
	if err := p.Fail("second"); err == nil || err.Error() != "second" {
		t.Fatalf("Fail = %v", err)
	}
	if p.String() != "first 1" {
		t.Errorf("Problem = %q, want the first", p.String())
	}
}
