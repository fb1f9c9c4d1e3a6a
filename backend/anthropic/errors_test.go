package anthropic_test

import (
	"testing"

	"github.com/quotagate/quotagate/backend/anthropic"
)

func TestUpstreamErrorMessage(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "Overloaded"},
		{`{"error":{"message":"rate limited","code":"x"}}`, "rate limited"},
		{"upstream down\nmore", "upstream down"},
		{"", "(empty body)"},
	} {
		if got := anthropic.UpstreamErrorMessage([]byte(c.body)); got != c.want {
			t.Errorf("%q: got %q, want %q", c.body, got, c.want)
		}
	}
}
