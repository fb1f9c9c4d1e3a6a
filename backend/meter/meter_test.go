package meter

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

func mustMeter(t testing.TB, name string) Meter {
	t.Helper()
	m, err := New(name)
	if err != nil {
		t.Fatalf("New(%q): %v", name, err)
	}
	return m
}

func TestUTF8BytesCountsBytesNotRunes(t *testing.T) {
	m := mustMeter(t, NameUTF8Bytes)
	if m.Name() != "utf8-bytes-v1" {
		t.Fatalf("Name() = %q", m.Name())
	}
	for _, tc := range []struct {
		name string
		text string
		want ledger.Units
	}{
		{"seed000 hi", "hi", 2},
		{"seed000 input 问题", "问题", 6},
		{"seed000 output 你好 AI", "你好 AI", 9},
		{"seed000 cut output part", "part", 4},
		{"empty", "", 0},
		{"emoji is 4 bytes", "😀", 4},
		{"invalid UTF-8 byte still one unit", "\xff", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := m.Count("any-model", tc.text); got != tc.want {
				t.Errorf("Count(%q) = %d, want %d (runes: %d)", tc.text, got, tc.want, len([]rune(tc.text)))
			}
		})
	}
}

func TestNewUnknownMeter(t *testing.T) {
	for _, name := range []string{"", "utf8", "UTF8-BYTES-V1", "tiktoken-v2"} {
		if m, err := New(name); err == nil {
			t.Errorf("New(%q) = %v, want an error", name, m.Name())
		}
	}
}

func TestEncodingForModel(t *testing.T) {
	for model, want := range map[string]string{
		"gpt-4o": EncodingO200k, "gpt-4o-mini": EncodingO200k, "gpt-4o-2024-08-06": EncodingO200k,
		"chatgpt-4o-latest": EncodingO200k, "gpt-4.1": EncodingO200k, "gpt-4.1-nano": EncodingO200k,
		"gpt-5": EncodingO200k, "gpt-5-mini": EncodingO200k, "gpt-5.1": EncodingO200k,
		"o1": EncodingO200k, "o1-mini": EncodingO200k, "o3": EncodingO200k, "o3-mini": EncodingO200k,
		"o4-mini": EncodingO200k, "openai/gpt-4o": EncodingO200k, "GPT-4O": EncodingO200k,
		"gpt-4": EncodingCL100k, "gpt-4-turbo": EncodingCL100k, "gpt-3.5-turbo": EncodingCL100k,
		"o100": EncodingCL100k, "o1x": EncodingCL100k, "gpt-50": EncodingCL100k,
		"deepseek-v4-flash": EncodingCL100k, "doubao-seed-1.6": EncodingCL100k, "": EncodingCL100k,
		"demo": EncodingCL100k,
	} {
		if got := EncodingForModel(model); got != want {
			t.Errorf("EncodingForModel(%q) = %s, want %s", model, got, want)
		}
	}
}

func TestTiktokenCounts(t *testing.T) {
	m := mustMeter(t, NameTiktoken)
	if m.Name() != "tiktoken" {
		t.Fatalf("Name() = %q", m.Name())
	}
	for _, tc := range []struct {
		model, text string
		want        ledger.Units
	}{
		// Figures from OpenAI's cookbook "How to count tokens with tiktoken".
		{"gpt-4o", "tiktoken is great!", 6},
		{"gpt-3.5-turbo", "tiktoken is great!", 6},
		{"gpt-4o", "hello world", 2},
		{"unknown-model", "hello world", 2},
		{"gpt-4o", "", 0},
		// Special-token text is ordinary text, never a panic.
		{"gpt-4o", "<|endoftext|>", 7},
	} {
		if got := m.Count(tc.model, tc.text); got != tc.want {
			t.Errorf("Count(%q, %q) = %d, want %d", tc.model, tc.text, got, tc.want)
		}
	}
	// The two encodings really differ: o200k merges long punctuation runs.
	bang := strings.Repeat("!", 1000)
	if o, c := m.Count("gpt-4o", bang), m.Count("gpt-4", bang); o != 63 || c != 125 {
		t.Errorf("1000 '!': o200k %d (want 63), cl100k %d (want 125)", o, c)
	}
}

func TestTiktokenPathologicalTextIsFastAndClose(t *testing.T) {
	tm := tiktokenForTest(t)
	for name, text := range map[string]string{
		"one long word": strings.Repeat("a", 100_000),
		"spaces":        strings.Repeat(" ", 100_000),
		"unpunctuated":  strings.Repeat("问", 30_000),
		"digits":        strings.Repeat("7", 100_000),
		"punctuation":   strings.Repeat("!", 100_000),
	} {
		// Direct counting of these took 8–14 s each; the test would time out.
		got, forced := tm.count("gpt-4o", text)
		if forced == 0 {
			t.Errorf("%s: expected forced cuts", name)
		}
		if got <= 0 || got > ledger.Units(len(text)) {
			t.Errorf("%s: %d tokens for %d bytes", name, got, len(text))
		}
	}
	// Where the exact figure is known, the segmented count matches it.
	if got := tm.Count("gpt-4o", strings.Repeat("a", 100_000)); got != 12500 {
		t.Errorf("100,000 'a' = %d tokens, want 12,500", got)
	}
	if got := tm.Count("gpt-4o", strings.Repeat("7", 99_999)); got != 33_333 {
		t.Errorf("99,999 digits = %d tokens, want 33,333", got)
	}
}

func TestCountIsSafeForConcurrentUse(t *testing.T) {
	texts := []string{"hello world", "你好 AI", strings.Repeat("abc def ", 100), "tiktoken is great!"}
	for _, name := range []string{NameUTF8Bytes, NameTiktoken} {
		m := mustMeter(t, name)
		want := make([]ledger.Units, len(texts))
		for i, s := range texts {
			want[i] = m.Count("gpt-4o", s)
		}
		var wg sync.WaitGroup
		errs := make(chan string, 64)
		for g := 0; g < 16; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// A second New shares the cached encoders.
				m2 := mustMeter(t, name)
				for k := 0; k < 50; k++ {
					i := (g + k) % len(texts)
					if got := m2.Count("gpt-4o", texts[i]); got != want[i] {
						errs <- fmt.Sprintf("%s: Count(%q) = %d, want %d", name, texts[i], got, want[i])
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	}
}

// TestTiktokenNeedsNoNetwork loads the encoders in a fresh process whose
// proxies point nowhere, whose tiktoken cache is an empty directory and whose
// default HTTP transport records and refuses every request.
func TestTiktokenNeedsNoNetwork(t *testing.T) {
	if os.Getenv("QUOTAGATE_METER_OFFLINE_CHILD") == "1" {
		offlineChild()
		return
	}
	cache := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTiktokenNeedsNoNetwork$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		"QUOTAGATE_METER_OFFLINE_CHILD=1",
		"HTTP_PROXY=http://127.0.0.1:1", "HTTPS_PROXY=http://127.0.0.1:1",
		"http_proxy=http://127.0.0.1:1", "https_proxy=http://127.0.0.1:1", "NO_PROXY=", "no_proxy=",
		"TIKTOKEN_CACHE_DIR="+cache, "DATA_GYM_CACHE_DIR="+cache)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "OFFLINE-OK 2 6") {
		t.Fatalf("child did not count offline:\n%s", out)
	}
	if strings.Contains(string(out), "NETWORK-TOUCHED") {
		t.Fatalf("tiktoken touched the network:\n%s", out)
	}
	entries, err := os.ReadDir(cache)
	if err != nil || len(entries) != 0 {
		t.Fatalf("tiktoken cache dir got %d entries (%v): something was downloaded", len(entries), err)
	}
}

type refusingTransport struct{}

func (refusingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	fmt.Println("NETWORK-TOUCHED", r.URL)
	return nil, fmt.Errorf("network disabled in this test: %s", r.URL)
}

func offlineChild() {
	http.DefaultTransport = refusingTransport{}
	m, err := New(NameTiktoken)
	if err != nil {
		fmt.Println("NEW-FAILED", err)
		os.Exit(1)
	}
	fmt.Println("OFFLINE-OK", m.Count("gpt-4o", "hello world"), m.Count("gpt-4", "tiktoken is great!"))
}

func TestCountCache(t *testing.T) {
	shared := tiktokenForTest(t)
	c := &countCache{seed: shared.cache.seed}
	m := &tiktokenMeter{o200k: shared.o200k, cl100k: shared.cl100k, cache: c}
	long := strings.Repeat("The cache keeps long texts. ", 40)
	first := m.Count("gpt-4o", long)
	if first != direct(m, "gpt-4o", long) {
		t.Fatalf("count %d differs from direct", first)
	}
	if _, ok := c.get(c.key(long, true)); !ok {
		t.Fatal("long text not cached")
	}
	if _, ok := c.get(c.key(long, false)); ok {
		t.Fatal("cached under the other encoding too")
	}
	if m.Count("gpt-4o", long) != first || m.Count("gpt-4", long) != direct(m, "gpt-4", long) {
		t.Fatal("cached count differs")
	}
	m.Count("gpt-4o", "short text")
	if _, ok := c.get(c.key("short text", true)); ok {
		t.Fatal("short text cached")
	}
	// Bounded: two generations of cacheEntries at most.
	for i := 0; i < 3*cacheEntries; i++ {
		c.put(cacheKey{sum: uint64(i), n: i}, counted{units: 1})
	}
	if len(c.cur) > cacheEntries || len(c.old) > cacheEntries {
		t.Fatalf("cache grew to %d + %d entries", len(c.cur), len(c.old))
	}
	if _, ok := c.get(cacheKey{sum: uint64(3*cacheEntries - 1), n: 3*cacheEntries - 1}); !ok {
		t.Fatal("newest entry evicted")
	}
}
