package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/gateway"
	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/meter"
	"github.com/quotagate/quotagate/backend/sqlite"
	"github.com/quotagate/quotagate/backend/upstream"
	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// benchEnv is a gateway in front of the demo upstream with the production
// ledger settings (synchronous=FULL, group commit), for measurements that
// compare the gateway with calling the demo directly in the same run.
type benchEnv struct {
	demo   *demo.Server
	gwURL  string
	client *http.Client
	store  *sqlite.Store
}

const benchText = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"

func newBenchEnv(tb testing.TB, plan demo.Plan) *benchEnv {
	tb.Helper()
	// QUOTAGATE_BENCH_SYNC=OFF separates the ledger's fsyncs from the relay's own cost.
	store, err := sqlite.Open(filepath.Join(tb.TempDir(), "ledger.db"), sqlite.Options{Synchronous: os.Getenv("QUOTAGATE_BENCH_SYNC")})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	if err := store.ApplyTenants(context.Background(), []ledger.Tenant{tenant("a", ledger.MaxUnits, 100_000)}, ledger.System("bench")); err != nil {
		tb.Fatal(err)
	}
	d, err := demo.Start(demo.Options{Plan: plan})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { d.Close() })
	up, err := upstream.New(upstream.Options{Name: "demo", BaseURL: d.URL(), Models: d.Models()})
	if err != nil {
		tb.Fatal(err)
	}
	m, _ := meter.New(meter.NameUTF8Bytes)
	gw := gateway.New(gateway.Options{Store: store, Meter: m, Upstreams: []gateway.Upstream{up},
		Reserve: meter.ReservePolicy{DefaultOutputUnits: 4096}})
	srv := &http.Server{Handler: gw, ReadHeaderTimeout: 10 * time.Second}
	ln, err := netListen()
	if err != nil {
		tb.Fatal(err)
	}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	tr := &http.Transport{MaxIdleConns: 2048, MaxIdleConnsPerHost: 2048, IdleConnTimeout: time.Minute}
	tb.Cleanup(tr.CloseIdleConnections)
	return &benchEnv{demo: d, gwURL: "http://" + ln.Addr().String() + "/v1", client: &http.Client{Transport: tr}, store: store}
}

func benchBody(stream bool) string {
	return `{"model":"demo-chat","stream":` + strconv.FormatBool(stream) + `,"messages":[{"role":"user","content":"hi"}]}`
}

// call makes one request and returns time to the first body byte and to
// the end of the body.
func (b *benchEnv) call(base string, body string) (ttfb, total time.Duration, err error) {
	req, _ := http.NewRequest(http.MethodPost, base+"/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer key-a")
	start := time.Now()
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		msg, _ := io.ReadAll(resp.Body)
		return 0, 0, fmt.Errorf("status %d: %s", resp.StatusCode, msg)
	}
	buf := make([]byte, 32<<10)
	n, err := resp.Body.Read(buf)
	ttfb = time.Since(start)
	for err == nil && n >= 0 {
		n, err = resp.Body.Read(buf)
	}
	if err != io.EOF {
		return 0, 0, err
	}
	return ttfb, time.Since(start), nil
}

// BenchmarkRelay compares one call through the gateway with the same call
// to the demo upstream directly, in the same run: the difference is the
// gateway's cost per call (parse, reserve, admit + settle on the ledger,
// relay).
func BenchmarkRelay(b *testing.B) {
	plan := demo.Plan{Text: benchText, Chunks: 20}
	for _, stream := range []bool{true, false} {
		e := newBenchEnv(b, plan)
		mode := map[bool]string{true: "stream20", false: "complete"}[stream]
		for _, target := range []struct{ name, base string }{{"direct", e.demo.URL()}, {"gateway", e.gwURL}} {
			b.Run(mode+"/"+target.name, func(b *testing.B) {
				body := benchBody(stream)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, _, err := e.call(target.base, body); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

type sample struct{ ttfb, total []time.Duration }

func (e *benchEnv) measure(base, body string, conc, n int) (sample, error) {
	var (
		mu   sync.Mutex
		s    sample
		next atomic.Int64
		errs atomic.Value
		wg   sync.WaitGroup
	)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				ttfb, total, err := e.call(base, body)
				if err != nil {
					errs.Store(err)
					return
				}
				mu.Lock()
				s.ttfb = append(s.ttfb, ttfb)
				s.total = append(s.total, total)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err, _ := errs.Load().(error); err != nil {
		return s, err
	}
	return s, nil
}

func pct(d []time.Duration, p float64) time.Duration {
	slices.Sort(d)
	i := int(p * float64(len(d)-1))
	return d[i]
}

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) }

// TestGatewayOverheadReport prints docs/bench/gateway.md's latency table:
// time to first byte and total time, p50 and p99, direct and through the
// gateway, streaming 20 chunks and non-streaming, at 1, 16 and 64
// concurrent clients. Run with QUOTAGATE_BENCH=1.
func TestGatewayOverheadReport(t *testing.T) {
	if os.Getenv("QUOTAGATE_BENCH") == "" {
		t.Skip("set QUOTAGATE_BENCH=1 to measure")
	}
	plan := demo.Plan{Text: benchText, Chunks: 20}
	e := newBenchEnv(t, plan)
	fmt.Printf("| mode | clients | calls | direct TTFB p50/p99 ms | gateway TTFB p50/p99 ms | added TTFB p50/p99 ms | direct total p50/p99 ms | gateway total p50/p99 ms | added total p50/p99 ms |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|---|\n")
	for _, stream := range []bool{true, false} {
		body := benchBody(stream)
		for _, conc := range []int{1, 16, 64} {
			n := max(500, conc*30)
			// Warm both paths (connections, ledger pages), then measure.
			if _, err := e.measure(e.demo.URL(), body, conc, conc*2); err != nil {
				t.Fatal(err)
			}
			if _, err := e.measure(e.gwURL, body, conc, conc*2); err != nil {
				t.Fatal(err)
			}
			d, err := e.measure(e.demo.URL(), body, conc, n)
			if err != nil {
				t.Fatal(err)
			}
			g, err := e.measure(e.gwURL, body, conc, n)
			if err != nil {
				t.Fatal(err)
			}
			mode := map[bool]string{true: "stream, 20 chunks", false: "non-streaming"}[stream]
			dt50, dt99, gt50, gt99 := pct(d.ttfb, .5), pct(d.ttfb, .99), pct(g.ttfb, .5), pct(g.ttfb, .99)
			dT50, dT99, gT50, gT99 := pct(d.total, .5), pct(d.total, .99), pct(g.total, .5), pct(g.total, .99)
			fmt.Printf("| %s | %d | %d | %s / %s | %s / %s | %s / %s | %s / %s | %s / %s | %s / %s |\n",
				mode, conc, n, ms(dt50), ms(dt99), ms(gt50), ms(gt99), ms(gt50-dt50), ms(gt99-dt99),
				ms(dT50), ms(dT99), ms(gT50), ms(gT99), ms(gT50-dT50), ms(gT99-dT99))
		}
	}
}

// TestGatewayRSSSlowStreams holds 1,000 concurrent slow streams open (each
// 20 parts, one every 250 ms) and reports the process's RSS and Go heap
// with every stream in flight. Run each target in its own process, e.g.
//
//	QUOTAGATE_BENCH=1 go test -run 'TestGatewayRSSSlowStreams/direct' ./backend/gateway -v
//	QUOTAGATE_BENCH=1 go test -run 'TestGatewayRSSSlowStreams/gateway' ./backend/gateway -v
//
// the gateway's cost is the difference of the two "added" figures.
func TestGatewayRSSSlowStreams(t *testing.T) {
	if os.Getenv("QUOTAGATE_BENCH") == "" {
		t.Skip("set QUOTAGATE_BENCH=1 to measure")
	}
	const streams = 1000
	plan := demo.Plan{Text: benchText, Chunks: 20, ChunkDelay: 250 * time.Millisecond}
	for _, target := range []string{"direct", "gateway"} {
		t.Run(target, func(t *testing.T) {
			e := newBenchEnv(t, plan)
			base := e.demo.URL()
			if target == "gateway" {
				base = e.gwURL
			}
			runtime.GC()
			rss0, heap0 := rss(t), heapInuse()
			var first, done sync.WaitGroup
			first.Add(streams)
			done.Add(streams)
			var failed atomic.Int64
			for range streams {
				go func() {
					defer done.Done()
					req, _ := http.NewRequest(http.MethodPost, base+"/chat/completions", strings.NewReader(benchBody(true)))
					req.Header.Set("Authorization", "Bearer key-a")
					resp, err := e.client.Do(req)
					if err != nil {
						failed.Add(1)
						first.Done()
						return
					}
					defer resp.Body.Close()
					buf := make([]byte, 4096)
					_, err = resp.Body.Read(buf)
					first.Done()
					for err == nil {
						_, err = resp.Body.Read(buf)
					}
				}()
			}
			first.Wait() // every stream has relayed its first event and is in flight
			rss1, heap1, g := rss(t), heapInuse(), runtime.NumGoroutine()
			done.Wait()
			if failed.Load() > 0 {
				t.Fatalf("%d streams failed", failed.Load())
			}
			fmt.Printf("| %s | %d | %.1f | %.1f | %.1f | %.1f | %d |\n", target, streams,
				float64(rss0)/(1<<20), float64(rss1)/(1<<20), float64(rss1-rss0)/(1<<20), float64(heap1-heap0)/(1<<20), g)
		})
	}
}

func rss(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func heapInuse() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

func netListen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }
