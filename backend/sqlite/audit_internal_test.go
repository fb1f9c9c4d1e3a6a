package sqlite

import "testing"

// TestTrigramQuery: a text search asks audit_text for at most six distinct
// trigrams, the last first, those with a repeated character only when no
// other is left, each quoted with its quotes doubled.
func TestTrigramQuery(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"usage", `"age" AND "sag" AND "usa"`},
		{"Tenant:T3", `":t3" AND "nt:" AND "ant" AND "ena" AND "ten"`},
		{"run_01a235db462e020000003d85", `"d85" AND "3d8" AND "03d" AND "e02" AND "2e0" AND "62e"`},
		{`"q*"`, `"q*""" AND """q*"`},
		{"aaaa", `"aaa"`},
		{"内存膨胀", `"存膨胀" AND "内存膨"`},
	} {
		if got := trigramQuery([]rune(tc.text)); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.text, got, tc.want)
		}
	}
}
