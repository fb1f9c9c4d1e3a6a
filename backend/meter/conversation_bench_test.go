package meter

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/openai"
)

// mixedMessage is one ~2k-token message of English prose, Chinese prose and
// code, different for every i (the corpus BENCHMARKS.md's counting targets use).
func mixedMessage(i int) string {
	var b strings.Builder
	for j := 0; b.Len() < 6000; j++ {
		fmt.Fprintf(&b, "Step %d.%d: the ledger records every admission before the call is relayed, and the hold stays until trusted usage arrives. ", i, j)
		fmt.Fprintf(&b, "第%d轮第%d步：网关在转发之前记录每一次准入，预留额度一直保留，直到收到可信的用量。请解释原因，并给出例子。", i, j)
		fmt.Fprintf(&b, "func f%d_%d(x int) int { return x*%d + %d }\n", i, j, i, j)
	}
	return b.String()
}

// conversation is a chat body of n mixed messages.
func conversation(n int) []byte {
	msgs := make([]map[string]string, n)
	for i := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs[i] = map[string]string{"role": role, "content": mixedMessage(i)}
	}
	b, _ := json.Marshal(map[string]any{"model": "gpt-4o", "max_tokens": 1000, "messages": msgs})
	return b
}

// TestMixedCorpusCountsEqualTiktoken: on the English/Chinese/code corpus the
// meter's segmented, cached count of each message equals tiktoken-go's count
// of the whole text in one piece, in both encodings.
func TestMixedCorpusCountsEqualTiktoken(t *testing.T) {
	m := tiktokenForTest(t)
	for i := range 6 {
		text := mixedMessage(i)
		for _, model := range []string{"gpt-4o", "deepseek-chat"} {
			got, want := m.Count(model, text), direct(m, model, text)
			if got != want {
				t.Errorf("message %d, %s: meter %d tokens, tiktoken %d", i, model, got, want)
			}
			if again := m.Count(model, text); again != want { // from the cache
				t.Errorf("message %d, %s: cached count %d, tiktoken %d", i, model, again, want)
			}
		}
	}
}

// BenchmarkConversation200k: from the request body to the reserve for a
// conversation of ~200k tokens (100 mixed messages of ~2k), sent the first
// time (nothing counted before) and resent with one new message (the 100
// earlier ones in the count cache). The targets in BENCHMARKS.md: ≤ 250 ms and ≤ 10 ms.
//
//	go test -run '^$' -bench BenchmarkConversation200k -benchtime 5x ./backend/meter/
func BenchmarkConversation200k(b *testing.B) {
	shared := tiktokenForTest(b)
	first, resent := conversation(100), conversation(101)
	p := ReservePolicy{DefaultOutputUnits: 1000}
	reserve := func(m *tiktokenMeter, body []byte) int64 {
		req, err := openai.ParseChatRequest(body)
		if err != nil {
			b.Fatal(err)
		}
		in, _ := p.Reserve(m, chatRequest(req))
		return int64(in)
	}
	fresh := func() *tiktokenMeter {
		return &tiktokenMeter{o200k: shared.o200k, cl100k: shared.cl100k, cache: &countCache{seed: maphash.MakeSeed()}}
	}
	b.Run("first-send", func(b *testing.B) {
		b.SetBytes(int64(len(first)))
		var tokens int64
		for b.Loop() {
			tokens = reserve(fresh(), first)
		}
		b.ReportMetric(float64(tokens), "tokens")
		b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(time.Millisecond), "ms/body")
	})
	b.Run("first-send-baseline-tiktoken-go", func(b *testing.B) {
		// The same segments counted by tiktoken-go's encoder (the meter
		// before its compact encodings).
		b.SetBytes(int64(len(first)))
		var tokens int64
		for b.Loop() {
			req, err := openai.ParseChatRequest(first)
			if err != nil {
				b.Fatal(err)
			}
			in, _ := p.Reserve(libraryMeter{}, chatRequest(req))
			tokens = int64(in)
		}
		b.ReportMetric(float64(tokens), "tokens")
		b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(time.Millisecond), "ms/body")
	})
	b.Run("resent-with-one-new-message", func(b *testing.B) {
		b.SetBytes(int64(len(resent)))
		var tokens int64
		for b.Loop() {
			b.StopTimer()
			m := fresh()
			reserve(m, first)
			b.StartTimer()
			tokens = reserve(m, resent)
		}
		b.ReportMetric(float64(tokens), "tokens")
		b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(time.Millisecond), "ms/body")
	})
}

// libraryMeter counts like the tiktoken meter, segment by segment, with
// tiktoken-go's own encoders and no cache: the baseline.
type libraryMeter struct{}

func (libraryMeter) Name() string { return NameTiktoken }

func (libraryMeter) Count(model, text string) ledger.Units {
	var n ledger.Units
	for rest := text; rest != ""; {
		seg, tail, _ := nextSegment(rest, segmentBytes)
		n += direct(nil, model, seg)
		rest = tail
	}
	return n
}
