package meter

import (
	"fmt"
	"hash/maphash"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/openai"
)

var sinkInt int

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
	tk := Meter(tiktokenForTest(b)) // encodings built before timing
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
	// tiktoken-go's encoders are built before timing; tm has no cache, to
	// measure the work.
	library(b, "gpt-4o")
	tm := &tiktokenMeter{o200k: shared.o200k, cl100k: shared.cl100k}
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

// Per-event tallying: what the meter adds to the chat door's parse
// (openai's BenchmarkChunk).
func BenchmarkTally(b *testing.B) {
	o := Observation{Text: "token 42 "}
	var t Tally
	for b.Loop() {
		t.Observe(o)
		if t.output.Len() > 1<<20 {
			t = Tally{}
		}
	}
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
	parsed, err := openai.ParseChatRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	req := chatRequest(parsed)
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
			preq, _ := openai.ParseChatRequest(prev)
			p.Reserve(warm, chatRequest(preq))
			b.StartTimer()
			_, r := p.Reserve(warm, req)
			sinkUnits += int64(r)
		}
	})
	b.Run("baseline-parse-only", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			r, err := openai.ParseChatRequest(body)
			if err != nil {
				b.Fatal(err)
			}
			sinkInt += len(r.Messages)
		}
	})
}
