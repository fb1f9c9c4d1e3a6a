package meter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"strings"
	"testing"
)

// Per-chunk metering: what the gateway pays per relayed delta. The baseline
// is len(), the cheapest possible count.
var chunkTexts = map[string]string{
	"ascii-16B": "Hello, world! Hi",
	"cjk-18B":   "你好，世界！",
	"mixed-64B": "The answer is 42. 答案是四十二。 Let's check: 6 × 7 = 42.",
}

var sinkUnits int64

func BenchmarkCountChunk(b *testing.B) {
	utf8m := mustMeter(b, NameUTF8Bytes)
	tk := mustMeter(b, NameTiktoken)
	for _, name := range []string{"ascii-16B", "cjk-18B", "mixed-64B"} {
		text := chunkTexts[name]
		b.Run(name+"/baseline-len", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				sinkUnits += int64(len(text))
			}
		})
		b.Run(name+"/utf8-bytes-v1", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				sinkUnits += int64(utf8m.Count("demo", text))
			}
		})
		b.Run(name+"/tiktoken-cl100k", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				sinkUnits += int64(tk.Count("deepseek-chat", text))
			}
		})
		b.Run(name+"/tiktoken-o200k", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				sinkUnits += int64(tk.Count("gpt-4o", text))
			}
		})
	}
}

// Whole-text counting: segmenting (this package) against handing the whole
// text to tiktoken-go, on natural text and on one pathological piece.
func BenchmarkCountText(b *testing.B) {
	shared := tiktokenForTest(b)
	tm := &tiktokenMeter{o200k: shared.o200k, cl100k: shared.cl100k} // no cache: measure the work
	texts := map[string]string{
		"natural-16KB":   strings.Repeat("The quick brown fox jumps over the lazy dog; 敏捷的棕色狐狸跳过了懒狗。 ", 16<<10/86),
		"one-piece-16KB": strings.Repeat("a", 16<<10),
	}
	for _, name := range []string{"natural-16KB", "one-piece-16KB"} {
		text := texts[name]
		b.Run(name+"/segmented", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				sinkUnits += int64(tm.Count("gpt-4o", text))
			}
		})
		b.Run(name+"/segmented-cached-repeat", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			shared.Count("gpt-4o", text)
			for b.Loop() {
				sinkUnits += int64(shared.Count("gpt-4o", text))
			}
		})
		b.Run(name+"/direct-tiktoken-go", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				sinkUnits += int64(direct(tm, "gpt-4o", text))
			}
		})
	}
}

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
	b.Run("Tally.Observe", func(b *testing.B) {
		ev := Event{Raw: payload, Data: payload}
		var t Tally
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if _, err := t.Observe(ev); err != nil {
				b.Fatal(err)
			}
			if t.output.Len() > 1<<20 {
				t = Tally{}
			}
		}
	})
}

// An agent resends the whole conversation every turn. Reserve for turn 21
// of a conversation of 2 KB messages: cold (nothing counted before) against
// warm (the 20 earlier messages are in the count cache).
func BenchmarkReserveAgentTurn(b *testing.B) {
	shared := tiktokenForTest(b)
	var msgs []string
	for i := 0; i < 21; i++ {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":%q}`,
			strings.Repeat(fmt.Sprintf("Turn %d: please refactor func f%d(x int) int { return x * %d } and explain. ", i, i, i), 24)))
	}
	body := []byte(`{"model":"gpt-4o","max_tokens":1000,"messages":[` + strings.Join(msgs, ",") + `]}`)
	prev := []byte(`{"model":"gpt-4o","max_tokens":1000,"messages":[` + strings.Join(msgs[:20], ",") + `]}`)
	req, err := ParseChatRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	p := ReservePolicy{DefaultOutputUnits: 1000}
	b.Run("cold", func(b *testing.B) {
		cold := &tiktokenMeter{o200k: shared.o200k, cl100k: shared.cl100k}
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			_, r := p.Reserve(cold, req)
			sinkUnits += int64(r)
		}
	})
	b.Run("warm-previous-turns-cached", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			b.StopTimer()
			warm := &tiktokenMeter{o200k: shared.o200k, cl100k: shared.cl100k, cache: &countCache{seed: maphash.MakeSeed()}}
			preq, _ := ParseChatRequest(prev)
			p.Reserve(warm, preq)
			b.StartTimer()
			_, r := p.Reserve(warm, req)
			sinkUnits += int64(r)
		}
	})
	b.Run("baseline-parse-only", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			r, err := ParseChatRequest(body)
			if err != nil {
				b.Fatal(err)
			}
			sinkInt += len(r.Messages)
		}
	})
}
