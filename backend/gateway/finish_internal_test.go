package gateway

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/quotagate/quotagate/backend/openai"
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
		// a decoded finish reason must always be seen. encoding/json also
		// takes "Finish_Reason" and the like; no provider sends those, and
		// an unseen finish only keeps the hold, so the scan matches exactly.
		exact := bytes.Contains(b, []byte(`"finish_reason"`))
		if want && exact && !hasFinishReason(b) {
			t.Fatalf("%s: finish reason not seen", b)
		}
	})
}

// The native Responses answer marks its finish on the output_item.done that
// leaves no item open, and says the answer goes on when another item is
// added after it: a client that left at the first finish
// then does not have the whole answer.
func TestNativeResponsesFinish(t *testing.T) {
	a := &nativeResponsesAnswer{}
	for i, tc := range []struct {
		typ, data    string
		finish, more bool
	}{
		{"response.created", `"response":{"id":"resp_1","status":"in_progress"}`, false, false},
		{"response.output_item.added", `"output_index":0,"item":{"type":"reasoning"}`, false, false},
		{"response.output_item.added", `"output_index":1,"item":{"type":"message"}`, false, false},
		{"response.output_item.done", `"output_index":0,"item":{"type":"reasoning"}`, false, false}, // the message is still open
		{"response.output_text.delta", `"output_index":1,"delta":"hi"`, false, false},
		{"response.output_item.done", `"output_index":1,"item":{"type":"message"}`, true, false},
		{"response.output_item.added", `"output_index":2,"item":{"type":"function_call"}`, false, true},
		{"response.function_call_arguments.delta", `"output_index":2,"delta":"{}"`, false, false},
		{"response.output_item.done", `"output_index":2,"item":{"type":"function_call"}`, true, false},
	} {
		data := []byte(`{"type":"` + tc.typ + `",` + tc.data + `}`)
		s := a.event(openai.Event{Name: tc.typ, Data: data, Raw: append(append([]byte("data: "), data...), "\n\n"...)})
		if s.finish != tc.finish || s.more != tc.more || s.relay == nil {
			t.Errorf("event %d %s: finish %v more %v relayed %v; want finish %v more %v, relayed", i, tc.typ, s.finish, s.more, s.relay != nil, tc.finish, tc.more)
		}
	}
}
