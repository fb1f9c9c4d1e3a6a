package openai

import (
	"encoding/json"
	"reflect"
	"testing"
)

var chunkScanCases = []string{
	`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi \"there\"\n"},"finish_reason":null}]}`,
	`{"choices":[{"delta":{"reasoning_content":"think","content":null}}],"usage":null}`,
	`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"a\":1}"}},null,{"function":null}]}}]}`,
	`{"choices":[{"message":{"content":"whole"},"finish_reason":"stop"}]}`,
	`{"error":{"message":"boom","code":"x"}}`,
	`{"Choices":[{"delta":{"content":"case"}}]}`, `{"choices":[{"Delta":{"content":"case"}}]}`,
	`{"choices":[{"delta":{"CONTENT":"x"}}]}`, `{"choiceſ":[]}`,
	`{"choices":[{"delta":{"content":"a","content":"b"}}]}`, `{"choices":[],"choices":null}`,
	`{"choices":[{"delta":{"content":5}}]}`, `{"choices":{"a":1}}`, `{"choices":[1]}`,
	`{"choices":[{"delta":{"content":"\ud800"}}]}`, "{\"choices\":[{\"delta\":{\"content\":\"\xff\"}}]}",
	`{"choices":[{"delta":{"content":"x"}}]`, `{"choices":null,"usage":[1,2],"error":"str"}`,
	`{"\u0063hoices":[{"delta":{"content":"escaped key"}}]}`, ` {"choices" : [ { "delta" : { "content" : "sp" } } ] } `,
	`{"choices":[{"delta":null,"message":null}]}`, `{"choices":[{"delta":{"tool_calls":null}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"name":null,"arguments":"x","name":"y"}}]}}]}`,
}

// checkScanChunk: when scanChunk takes a payload, it reads what
// json.Unmarshal reads; when json.Unmarshal fails, scanChunk declines.
func checkScanChunk(t *testing.T, d []byte) {
	t.Helper()
	var want wireChunk
	werr := json.Unmarshal(d, &want)
	var got wireChunk
	if !scanChunk(d, &got) {
		return
	}
	if werr != nil {
		t.Fatalf("scanChunk took %s; json.Unmarshal: %v", d, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("scanChunk(%s) = %+v\njson.Unmarshal %+v", d, got, want)
	}
}

func TestScanChunkEqualsUnmarshal(t *testing.T) {
	for _, c := range chunkScanCases {
		checkScanChunk(t, []byte(c))
	}
	// The usual chunk is taken by the scan, not left to encoding/json.
	var w wireChunk
	if !scanChunk([]byte(chunkScanCases[0]), &w) || *w.Choices[0].Delta.Content != "Hi \"there\"\n" {
		t.Fatalf("the usual chunk was not scanned: %+v", w)
	}
}

// FuzzScanChunk: scanChunk never reads a payload differently from
// json.Unmarshal.
func FuzzScanChunk(f *testing.F) {
	for _, c := range chunkScanCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, d []byte) { checkScanChunk(t, d) })
}
