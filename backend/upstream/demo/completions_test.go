package demo

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"reflect"
	"testing"
)

// TestEmbeddingIsDeterministic: the same seed gives the same unit vector,
// another seed another one, and the base64 form is its float32s.
func TestEmbeddingIsDeterministic(t *testing.T) {
	a, b, c := Embedding("package main", 8), Embedding("package main", 8), Embedding("package demo", 8)
	if !reflect.DeepEqual(a, b) || reflect.DeepEqual(a, c) {
		t.Fatalf("%v %v %v", a, b, c)
	}
	var norm float64
	for _, f := range a {
		norm += float64(f) * float64(f)
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Fatalf("norm² %v, want 1", norm)
	}
	raw, err := base64.StdEncoding.DecodeString(base64Floats(a))
	if err != nil || len(raw) != 4*len(a) {
		t.Fatalf("%d bytes, %v", len(raw), err)
	}
	for i, f := range a {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])); got != f {
			t.Fatalf("element %d: %v, want %v", i, got, f)
		}
	}
}
