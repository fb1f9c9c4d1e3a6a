package e2e_test

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/upstream/demo"
)

// TestReliabilityNoLeakAfterLoad is the resource half of T12 and T37: a
// quotagate in its own process (so nothing else shares its counters) serves
// three identical bursts of 40 clients that finish, leave mid-stream, leave
// before the headers, meet a cut or a refusing upstream. Its own /metrics
// (go_goroutines, process_open_fds) must not grow from the first burst to
// the third: a leak of one goroutine or descriptor per disconnect would add
// 32 of each (16 a burst).
func TestReliabilityNoLeakAfterLoad(t *testing.T) {
	t.Parallel()
	if os.Getenv(killChildDir) != "" {
		t.Skip("in the child")
	}
	// The provider is restarted on one address for each burst: closing it
	// closes the child's pooled upstream connections, so the gauges read
	// after a burst hold only what quotagate itself kept.
	demoAddr := closedPort(t)
	startDemo := func() *demo.Server {
		d, err := demo.Start(demo.Options{APIKey: canaryUpstream, Addr: demoAddr})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	base := startChild(t, "TestReliabilityKill9Child", killChildDir+"="+t.TempDir(), killChildDemo+"=http://"+demoAddr+"/v1").url

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}} // no idle conns held in the child
	gauges := func() (goroutines, fds float64) {
		t.Helper()
		resp, err := client.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			name, v, ok := strings.Cut(sc.Text(), " ")
			if !ok {
				continue
			}
			switch name {
			case "go_goroutines":
				goroutines, _ = strconv.ParseFloat(v, 64)
			case "process_open_fds":
				fds, _ = strconv.ParseFloat(v, 64)
			}
		}
		if goroutines == 0 || fds == 0 {
			t.Fatal("go_goroutines or process_open_fds missing from /metrics")
		}
		return goroutines, fds
	}
	burst := func() {
		d := startDemo()
		defer d.Close()
		var wg sync.WaitGroup
		for i := range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				content, leave := "hello", -1 // -1: read it all
				switch i % 5 {
				case 1:
					content, leave = "/demo kind=slow&delay=20ms", 2 // leave mid-stream
				case 2:
					content, leave = "/demo latency=10s", 0 // leave before the headers
				case 3:
					content = "/demo kind=cut&after=2"
				case 4:
					content = "/demo kind=error&status=500"
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if leave == 0 {
					time.AfterFunc(200*time.Millisecond, cancel) // gives up while the provider is silent
				}
				req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/chat/completions", strings.NewReader(chatBody(content, true, 32)))
				req.Header.Set("Authorization", "Bearer "+canaryKeyA)
				resp, err := client.Do(req)
				if err != nil {
					return
				}
				defer resp.Body.Close()
				br := bufio.NewReader(resp.Body)
				for n := 0; leave < 0 || n < leave; n++ {
					if _, err := br.ReadString('\n'); err != nil {
						return
					}
				}
			}()
		}
		wg.Wait()
		if n := d.Stats().Received; n < 32 { // the 8 early leavers may give up before the call leaves
			t.Fatalf("the provider received %d of the burst's 40 calls", n)
		}
	}
	// steady waits (polling the child's own gauges, with a deadline) until
	// two readings a moment apart agree, and returns them.
	steady := func() (float64, float64) {
		deadline := time.Now().Add(10 * time.Second)
		g, f := gauges()
		for {
			time.Sleep(100 * time.Millisecond) // the runs end asynchronously; poll the observable figure
			g2, f2 := gauges()
			if (g2 == g && f2 == f) || time.Now().After(deadline) {
				return g2, f2
			}
			g, f = g2, f2
		}
	}
	burst()
	g1, f1 := steady()
	burst()
	burst()
	g3, f3 := steady()
	t.Logf("after burst 1: %v goroutines, %v fds; after burst 3: %v goroutines, %v fds", g1, f1, g3, f3)
	if g3 > g1+5 || f3 > f1+5 {
		t.Fatalf("resources grew over two more bursts of 40 (16 disconnects each): goroutines %v → %v, fds %v → %v", g1, g3, f1, f3)
	}
}
