package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"
)

// benchStream is n OpenAI-shaped chunk events plus usage and [DONE].
func benchStream(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764400000,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"token %d "},"finish_reason":null}],"usage":null}`+"\n\n", i)
		if i%50 == 0 {
			b.WriteString(": keep-alive\n\n")
		}
	}
	b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

var sinkInt int

// SSE framing throughput: SSEReader (exact Raw, CR/CRLF/LF, limits) against
// the least a relay could do — bufio.Scanner lines, joining data lines.
func BenchmarkSSE(b *testing.B) {
	stream := benchStream(1000)
	b.Run("SSEReader", func(b *testing.B) {
		b.SetBytes(int64(len(stream)))
		for b.Loop() {
			r := NewSSEReader(bytes.NewReader(stream), 0)
			n := 0
			for {
				ev, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				n += len(ev.Data)
			}
			sinkInt += n
		}
	})
	b.Run("baseline-bufio.Scanner-lines", func(b *testing.B) {
		b.SetBytes(int64(len(stream)))
		// b.N, not b.Loop: this loop body inside b.Loop crashes the Go 1.26.8
		// compiler (internal compiler error in escape analysis).
		for i := 0; i < b.N; i++ {
			sc := bufio.NewScanner(bytes.NewReader(stream))
			n := 0
			var data []byte
			for sc.Scan() {
				line := sc.Bytes()
				switch {
				case len(line) == 0:
					n += len(data)
					data = data[:0]
				case bytes.HasPrefix(line, []byte("data: ")):
					data = append(data, line[6:]...)
				}
			}
			sinkInt += n
		}
	})
}

// Per-event parsing and tallying against a bare json.Unmarshal of the same
// payload into a minimal struct.
func BenchmarkChunk(b *testing.B) {
	payload := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764400000,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"token 42 "},"finish_reason":null}],"usage":null}`)
	b.Run("ParseChunk", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			c, err := ParseChunk(payload)
			if err != nil {
				b.Fatal(err)
			}
			sinkInt += len(c.Content)
		}
	})
	b.Run("baseline-json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			var w struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(payload, &w); err != nil {
				b.Fatal(err)
			}
			sinkInt += len(w.Choices)
		}
	})
}
