package gateway

import (
	"encoding/json"
	"testing"
)

// FuzzHasFinishReason: hasFinishReason agrees with a JSON decode of the
// chunk whenever the chunk is valid JSON of the chat-chunk shape.
func FuzzHasFinishReason(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}`,
		`{"choices":[{"delta":{"content":"\"finish_reason\":\"stop\""},"finish_reason":null}]}`,
		`{"choices":[{"finish_reason" : "length"}]}`,
		`{"choices":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var c struct {
			Choices []struct {
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if json.Unmarshal(b, &c) != nil {
			hasFinishReason(b) // must not panic
			return
		}
		want := false
		for _, ch := range c.Choices {
			want = want || ch.FinishReason != nil
		}
		// A valid chunk may carry the key elsewhere (another object); only
		// a decoded finish reason must always be seen.
		if want && !hasFinishReason(b) {
			t.Fatalf("%s: finish reason not seen", b)
		}
	})
}
