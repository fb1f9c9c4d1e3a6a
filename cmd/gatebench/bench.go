package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quotagate/quotagate/backend/upstream/demo"
	"github.com/quotagate/quotagate/cmd/internal/child"
)

// Options is one benchmark run.
type Options struct {
	Binary      string
	Clients     []int
	Reps        int
	Duration    time.Duration
	SlowStreams int
	Meter       string
	Pprof       string // a file for the gateway's CPU profile, "" = none
	// PprofClients is the client count -pprof profiles (non-stream, and
	// stream into FILE.stream); 64 clients is where the gateway's CPU per
	// call shows.
	PprofClients int
}

// The fake upstreams' models: one upstream each, so each answers its way.
const (
	modelStream = "bench-stream" // 20 chunks, 5 ms apart
	modelFast   = "bench-fast"   // the whole answer at once
	modelSlow   = "bench-slow"   // 10 chunks, 1 s apart: the memory run
	benchKey    = "sk-bench-0123456789abcdef"
	upstreamKey = "sk-upstream-bench"
)

// Sample is one measurement of one target.
type Sample struct {
	Calls, Failed int
	FirstError    string
	Wall          time.Duration
	TTFB, Total   []time.Duration
	CPU           time.Duration // the gateway process's CPU time during it (gateway only)
}

func (s Sample) rate() float64 { return float64(s.Calls) / s.Wall.Seconds() }

// Run starts everything, measures, prints the report and stops everything.
func Run(ctx context.Context, o Options, w io.Writer) error {
	ups, err := startUpstreams()
	for _, d := range ups {
		defer d.Close()
	}
	if err != nil {
		return err
	}
	gw, err := spawn(ctx, o, ups)
	if err != nil {
		return err
	}
	defer gw.Stop()

	tr := &http.Transport{MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, IdleConnTimeout: time.Minute, DisableCompression: true}
	client := &http.Client{Transport: tr}
	direct := target{client: client, key: upstreamKey, url: func(model string) string { return ups[model].URL() + "/chat/completions" }}
	through := target{client: client, key: benchKey, url: func(string) string { return gw.base + "/v1/chat/completions" }}

	fmt.Fprintf(w, "# gatebench: quotagate %s, meter %s, %d reps of %s, GOMAXPROCS of this load generator %s\n\n",
		gw.version, o.Meter, o.Reps, o.Duration, os.Getenv("GOMAXPROCS"))
	if p50, p90, err := syncedWrite(gw.Dir, 200); err == nil {
		// A call is two durable commits in series (admission, then the
		// outcome before the answer): the floor of its added latency.
		fmt.Fprintf(w, "this disk: a synced 4 KiB append p50 %.3f ms, p90 %.3f ms (two in series: %.2f ms, the floor of the added p50 at 1 client)\n\n",
			ms(p50), ms(p90), 2*ms(p50))
	}
	results := map[cell][][2]Sample{}
	for rep := range o.Reps {
		for _, n := range o.Clients {
			for _, stream := range []bool{false, true} {
				pair, err := measureCell(ctx, o, w, gw, direct, through, rep, cell{stream, n})
				if err != nil {
					return err
				}
				results[cell{stream, n}] = append(results[cell{stream, n}], pair)
			}
		}
	}
	writeTable(w, o, results)
	rss, hwm := gw.memory()
	fmt.Fprintf(w, "\ngateway RSS after the runs: %.1f MB (peak %.1f MB)\n", mb(rss), mb(hwm))
	if err := gw.settled(ctx, client, w); err != nil {
		return err
	}
	if o.SlowStreams > 0 {
		if err := slowStreams(ctx, w, through, gw, ups[modelSlow], o.SlowStreams, heapOf(o.Pprof)); err != nil {
			return err
		}
	}
	return nil
}

// startUpstreams starts one fake upstream per model: streaming, fast and
// slow. The caller closes those returned, also on an error.
func startUpstreams() (map[string]*demo.Server, error) {
	ups := map[string]*demo.Server{}
	for model, plan := range map[string]demo.Plan{
		modelStream: {Kind: demo.KindNormal, Chunks: 20, ChunkDelay: 5 * time.Millisecond},
		modelFast:   {Kind: demo.KindNormal, Chunks: 20},
		modelSlow:   {Kind: demo.KindNormal, Chunks: 10, ChunkDelay: time.Second},
	} {
		d, err := demo.Start(demo.Options{Models: []string{model}, APIKey: upstreamKey, Plan: plan, KeepRequests: 1})
		if err != nil {
			return ups, err
		}
		ups[model] = d
	}
	return ups, nil
}

// cell is one cell of the report's table: streaming or not, at a number of clients.
type cell struct {
	stream  bool
	clients int
}

// measureCell loads the upstream directly, then through the gateway
// (interleaved, so both see the same machine), for one rep of c; with
// o.Pprof, the first rep at o.PprofClients also profiles the gateway.
func measureCell(ctx context.Context, o Options, w io.Writer, gw *gateway, direct, through target, rep int, c cell) ([2]Sample, error) {
	model := modelFast
	if c.stream {
		model = modelStream
	}
	d := load(ctx, direct, model, c.stream, c.clients, o.Duration, nil)
	var prof chan error
	profFile, what := o.Pprof, "non-stream"
	if c.stream {
		profFile, what = o.Pprof+".stream", "stream"
	}
	if o.Pprof != "" && rep == 0 && c.clients == o.PprofClients {
		prof = make(chan error, 1)
		go func() { prof <- gw.profile(ctx, profFile, o.Duration) }()
	}
	g := load(ctx, through, model, c.stream, c.clients, o.Duration, gw)
	if prof != nil {
		if err := <-prof; err != nil {
			return [2]Sample{}, err
		}
		fmt.Fprintf(w, "CPU profile of the gateway, %d clients %s: %s\n\n", c.clients, what, profFile)
	}
	if g.Failed > 0 || d.Failed > 0 {
		fmt.Fprintf(w, "rep %d, %d clients, stream %v: %d direct and %d gateway calls failed (%s%s)\n",
			rep+1, c.clients, c.stream, d.Failed, g.Failed, d.FirstError, g.FirstError)
	}
	return [2]Sample{d, g}, nil
}

// writeTable writes the report's table: per cell, the medians over the reps.
func writeTable(w io.Writer, o Options, results map[cell][][2]Sample) {
	fmt.Fprintln(w, "| mode | clients | direct calls/s | quotagate calls/s | ratio | added TTFB p50 / p99 | added total p50 / p99 | gateway CPU s per 1,000 calls |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, stream := range []bool{false, true} {
		for _, n := range o.Clients {
			var dr, gr, ratio, t50, t99, a50, a99, cpu []float64
			for _, s := range results[cell{stream, n}] {
				d, g := s[0], s[1]
				dr, gr = append(dr, d.rate()), append(gr, g.rate())
				ratio = append(ratio, g.rate()/d.rate())
				t50 = append(t50, ms(pct(g.TTFB, 50)-pct(d.TTFB, 50)))
				t99 = append(t99, ms(pct(g.TTFB, 99)-pct(d.TTFB, 99)))
				a50 = append(a50, ms(pct(g.Total, 50)-pct(d.Total, 50)))
				a99 = append(a99, ms(pct(g.Total, 99)-pct(d.Total, 99)))
				cpu = append(cpu, g.CPU.Seconds()*1000/float64(max(1, g.Calls)))
			}
			mode := "non-stream"
			if stream {
				mode = "stream, 20 chunks × 5 ms"
			}
			fmt.Fprintf(w, "| %s | %d | %.0f | %.0f | %.3f | %+.2f / %+.2f ms | %+.2f / %+.2f ms | %.3f |\n",
				mode, n, median(dr), median(gr), median(ratio), median(t50), median(t99), median(a50), median(a99), median(cpu))
		}
	}
}

// target is where the load goes: the fake upstream directly, or the gateway.
type target struct {
	client *http.Client
	key    string
	url    func(model string) string
}

func body(model string, stream bool) []byte {
	return []byte(`{"model":"` + model + `","stream":` + strconv.FormatBool(stream) +
		`,"stream_options":{"include_usage":true},"max_tokens":256,"messages":[{"role":"user","content":"Say something short about ledgers, please."}]}`)
}

// load runs n clients in a closed loop for d and returns what they saw; gw
// (when measuring the gateway) gives its CPU time over the run.
func load(ctx context.Context, t target, model string, stream bool, n int, d time.Duration, gw *gateway) Sample {
	b := body(model, stream)
	var mu sync.Mutex
	var s Sample
	var cpu0 time.Duration
	if gw != nil {
		cpu0 = gw.cpu()
	}
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ttfb, total []time.Duration
			calls, failed, firstErr := 0, 0, ""
			for time.Now().Before(deadline) {
				first, all, err := t.call(ctx, model, b)
				if err != nil {
					if failed == 0 {
						firstErr = err.Error()
					}
					failed++
					continue
				}
				calls++
				ttfb, total = append(ttfb, first), append(total, all)
			}
			mu.Lock()
			s.Calls += calls
			s.Failed += failed
			if s.FirstError == "" {
				s.FirstError = firstErr
			}
			s.TTFB = append(s.TTFB, ttfb...)
			s.Total = append(s.Total, total...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	s.Wall = time.Since(start)
	if gw != nil {
		s.CPU = gw.cpu() - cpu0
	}
	return s
}

// call makes one call and reads its whole answer: time to the first body
// byte, and to the end.
func (t target) call(ctx context.Context, model string, b []byte) (time.Duration, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url(model), bytes.NewReader(b))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+t.key)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := t.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	buf := make([]byte, 32<<10)
	var first time.Duration
	var got []byte
	for {
		k, err := resp.Body.Read(buf)
		if k > 0 && first == 0 {
			first = time.Since(start)
		}
		got = append(got, buf[:k]...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, 0, err
		}
	}
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("%s: %s", resp.Status, got)
	}
	if bytes.Contains(got, []byte(`"upstream_interrupted"`)) {
		return 0, 0, fmt.Errorf("stream interrupted: %s", got)
	}
	return first, time.Since(start), nil
}

// slowStreams opens n slow streams at once through the gateway and reports
// its RSS while all of them are in flight, against its RSS before.
func slowStreams(ctx context.Context, w io.Writer, t target, gw *gateway, up *demo.Server, n int, heapFile string) error {
	before, _ := gw.memory()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var failed atomic.Int64
	b := body(modelSlow, true)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := t.call(ctx, modelSlow, b); err != nil && ctx.Err() == nil {
				failed.Add(1)
			}
		}()
	}
	// Wait until the fake upstream sees all n in flight, sampling the peak.
	var peak int64
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		rss, _ := gw.memory()
		peak = max(peak, rss)
		if up.Stats().InFlight >= n || failed.Load() > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	inFlight := up.Stats().InFlight
	if gw.pprof != "" && heapFile != "" {
		// gc=1: a heap profile is as of the last GC, which may predate the
		// streams; the text form ends with the runtime's MemStats (stacks).
		if err := gw.save(ctx, heapFile, "/debug/pprof/heap?gc=1"); err != nil {
			return err
		}
		if err := gw.save(ctx, heapFile+".txt", "/debug/pprof/heap?debug=1"); err != nil {
			return err
		}
		if err := gw.save(ctx, strings.TrimSuffix(heapFile, ".heap")+".goroutines.txt", "/debug/pprof/goroutine?debug=1"); err != nil {
			return err
		}
	}
	rss, _ := gw.memory()
	peak = max(peak, rss)
	cancel()
	wg.Wait()
	fmt.Fprintf(w, "%d slow streams in flight (%d failed): gateway RSS %.1f MB (peak %.1f MB, %.1f MB before; +%.0f KiB a stream)\n",
		inFlight, failed.Load(), mb(rss), mb(peak), mb(before), float64(peak-before)/1024/float64(max(1, inFlight)))
	return nil
}

// gateway is the `quotagate serve` child.
type gateway struct {
	*child.Gateway
	base, version string
	pprof         string // the gateway's profiler address, "" = none
}

// spawn starts `quotagate serve` on a config of one tenant and an upstream
// per fake upstream, and returns it once it answers /healthz.
func spawn(ctx context.Context, o Options, ups map[string]*demo.Server) (*gateway, error) {
	var args []string
	var pprofAddr string
	if o.Pprof != "" {
		var err error
		if pprofAddr, err = child.FreeAddr(); err != nil {
			return nil, err
		}
		args = append(args, "--pprof", pprofAddr)
	}
	c, err := child.Start(child.Options{Binary: o.Binary, Prefix: "gatebench-", Args: args,
		Config: func(addr string) string { return benchConfig(addr, o.Meter, ups) }})
	if err != nil {
		return nil, err
	}
	g := &gateway{Gateway: c, base: "http://" + c.Addr, pprof: pprofAddr}
	if err := g.awaitHealthy(); err != nil {
		return nil, err
	}
	return g, nil
}

// benchConfig is the gateway's config: one tenant with room for any load,
// one upstream per fake upstream, each without a useful queue.
func benchConfig(addr, meter string, ups map[string]*demo.Server) string {
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "addr: %s\nmeter: %s\ntenants:\n  - id: bench\n    key: %s\n    budget_units: 1000000000000000\n    max_concurrent: 10000\nupstreams:\n", addr, meter, benchKey)
	names := make([]string, 0, len(ups))
	for m := range ups {
		names = append(names, m)
	}
	sort.Strings(names)
	for _, m := range names {
		fmt.Fprintf(&cfg, "  - name: %s\n    base_url: %s\n    api_key: %s\n    models: [%s]\n    max_concurrent: 10000\n    queue: {max_waiters: 1, max_wait: 1s}\n",
			strings.TrimPrefix(m, "bench-"), ups[m].URL(), upstreamKey, m)
	}
	return cfg.String()
}

// awaitHealthy waits up to 30 s for g's /healthz and reads its version;
// when the child exits first, the error carries its log.
func (g *gateway) awaitHealthy() error {
	for deadline := time.Now().Add(30 * time.Second); ; {
		select {
		case <-g.Exited():
			log, _ := os.ReadFile(g.Log)
			return fmt.Errorf("quotagate exited before it was healthy:\n%s", log)
		default:
		}
		if resp, err := http.Get(g.base + "/healthz"); err == nil {
			var h struct{ Version string }
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				_ = json.Unmarshal(b, &h)
				g.version = h.Version
				return nil
			}
		}
		if time.Now().After(deadline) {
			_ = g.Stop()
			return errors.New("quotagate was not healthy after 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// settled reports the tenant's balance: nothing may stay held once every
// call has ended, or the gateway was not settling on trusted usage.
func (g *gateway) settled(ctx context.Context, c *http.Client, w io.Writer) error {
	var b struct {
		Spent  int64 `json:"spent_units"`
		Held   int64 `json:"held_units"`
		Active int64 `json:"active"`
	}
	if _, err := child.GetJSON(ctx, c, g.base+"/v1/balance", benchKey, &b); err != nil {
		return fmt.Errorf("read the balance: %w", err)
	}
	fmt.Fprintf(w, "tenant after the runs: spent %d units, held %d, active %d\n", b.Spent, b.Held, b.Active)
	if b.Held != 0 {
		return fmt.Errorf("%d units stay held: calls did not settle on trusted usage", b.Held)
	}
	return nil
}

// profile saves a CPU profile of the gateway over the next d (whole seconds,
// at least one) to file.
func (g *gateway) profile(ctx context.Context, file string, d time.Duration) error {
	return g.save(ctx, file, fmt.Sprintf("/debug/pprof/profile?seconds=%d", max(1, int(d/time.Second))))
}

// heapOf names the heap profile saved beside the CPU profile file.
func heapOf(cpuFile string) string {
	if cpuFile == "" {
		return ""
	}
	return cpuFile + ".heap"
}

// save writes the gateway's profile at path to file.
func (g *gateway) save(ctx context.Context, file, path string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+g.pprof+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profile the gateway: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile the gateway: %s %v", resp.Status, err)
	}
	return os.WriteFile(file, b, 0o644)
}

// cpu is the gateway's user+system CPU time so far (/proc/PID/stat).
func (g *gateway) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", g.PID))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is USER_HZ, 100 on Linux.
const clockTicks = 100

// memory is the gateway's resident set and its peak, in bytes.
func (g *gateway) memory() (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", g.PID))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = kb << 10
		case "VmHWM":
			hwm = kb << 10
		}
	}
	return rss, hwm
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// syncedWrite times n appends of 4 KiB, each followed by fsync, in a file
// in dir (the gateway's data directory's file system): what one durable
// commit of the ledger costs at least.
func syncedWrite(dir string, n int) (p50, p90 time.Duration, err error) {
	f, err := os.CreateTemp(dir, "fsync-probe-")
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	page := make([]byte, 4096)
	ds := make([]time.Duration, 0, n)
	for range n {
		t := time.Now()
		if _, err := f.Write(page); err != nil {
			return 0, 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, 0, err
		}
		ds = append(ds, time.Since(t))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[n/2], ds[n*9/10], nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mb(b int64) float64         { return float64(b) / (1 << 20) }
