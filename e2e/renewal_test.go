package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/clock"
	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/price"
	"github.com/quotagate/quotagate/backend/server"
)

// A renewing budget crossed from outside: a child quotagate runs with
// QUOTAGATE_CLOCK_OFFSET chosen so that its tenant's period ends a few
// seconds after it starts, in a zone far from UTC. The parent spends before
// the boundary, leaves a run held, waits for /v1/balance to name the next
// period (no sleep), then checks that the new period starts empty, admits
// the whole budget, and that the held run's hold and reconcile stay in the
// period it was admitted in.

const (
	renewalChildDir    = "QG_E2E_RENEWAL_DIR"
	renewalChildConfig = "QG_E2E_RENEWAL_CONFIG"
	renewalKey         = "sk-e2e-renewal-team-4Fq8ZpL2xN7vB1mK"
	renewalAdmin       = "e2e-renewal-admin-9Hs3Tg6Wd1Yc"
	// renewalLead is how long after the child's start the period ends:
	// enough for the spending before it on a busy machine.
	renewalLead = 20 * time.Second
	// Output costs 0.01 a token (10000 per 1M) and input nothing, so a
	// call's cost and reserve in micros are its output's and its
	// max_tokens's, times renewalMicrosPerToken.
	renewalMicrosPerToken = 10_000
	renewalBudget         = price.Micros(5_000_000) // "5.00"
)

const renewalConfig = `
meter: utf8-bytes-v1
admin_token: %q
money: {currency: USD}
tenants:
  - {id: team, key: %q, budget: "5.00", budget_period: %s, timezone: %s, week_starts: monday, max_concurrent: 8}
upstreams:
  - name: demo
    kind: demo
    models: [demo-chat]
    prices: {demo-chat: {input: "0", cached_input: "0", cache_write: "0", output: "10000"}}
%s`

// TestRenewalChild is not a test on its own: run by the renewal tests as a
// child process, it serves quotagate from the config and data dir in its
// environment, on the clock QUOTAGATE_CLOCK_OFFSET sets, until killed.
func TestRenewalChild(t *testing.T) {
	dir, path := os.Getenv(renewalChildDir), os.Getenv(renewalChildConfig)
	if dir == "" {
		t.Skip("child process of the renewal tests")
	}
	fail := func(err error) {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	cfg, err := config.Load(path)
	if err != nil {
		fail(err)
	}
	clk, err := clock.FromEnv(os.LookupEnv) // as the command line reads it
	if err != nil {
		fail(err)
	}
	s, err := server.Open(context.Background(), server.Options{Config: cfg, DataDir: dir, Addr: "127.0.0.1:0",
		Clock: clk, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		fail(err)
	}
	fmt.Println("URL", s.URL())
	select {} // until killed
}

// calendar is one kind of period: its budget_period, a zone far from UTC,
// the first period start after an instant, and a period's label.
type calendar struct {
	period string
	zone   string
	next   func(t time.Time) time.Time // t in the zone
	label  func(t time.Time) string    // t in the zone
}

var (
	daily = calendar{period: "day", zone: "Asia/Kathmandu", // UTC+5:45
		next: func(t time.Time) time.Time {
			return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, t.Location())
		},
		label: func(t time.Time) string { return t.Format("2006-01-02") }}
	weekly = calendar{period: "week", zone: "Pacific/Pago_Pago", // UTC−11
		next: func(t time.Time) time.Time {
			days := (8 - int(t.Weekday())) % 7 // to the next Monday
			if days == 0 {
				days = 7
			}
			return time.Date(t.Year(), t.Month(), t.Day()+days, 0, 0, 0, 0, t.Location())
		},
		label: func(t time.Time) string { y, w := t.ISOWeek(); return fmt.Sprintf("%04d-W%02d", y, w) }}
)

// renewal is a child quotagate whose tenant "team" reaches the end of its
// period renewalLead after the start.
type renewal struct {
	t                    *testing.T
	base                 string
	boundary             time.Time // the next period's start (the shifted clock's time)
	due                  time.Time // when the boundary comes, in real time
	oldPeriod, newPeriod string    // the labels of the period that ends and the next
}

// startRenewal starts the child on cal with extra YAML (the alerts key) and
// env beside the clock's, and checks that its balance is in the period that
// ends at the boundary.
func startRenewal(t *testing.T, cal calendar, extra string, env ...string) *renewal {
	t.Helper()
	loc, err := time.LoadLocation(cal.zone)
	if err != nil {
		t.Skipf("no zone data for %s: %v", cal.zone, err)
	}
	dir := t.TempDir()
	path := filepath.Join(t.TempDir(), "quotagate.yaml")
	yaml := fmt.Sprintf(renewalConfig, renewalAdmin, renewalKey, cal.period, cal.zone, extra)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	boundary := cal.next(now.In(loc))
	offset := boundary.Sub(now) - renewalLead
	r := &renewal{t: t, boundary: boundary, due: now.Add(renewalLead),
		oldPeriod: cal.label(boundary.Add(-time.Second)), newPeriod: cal.label(boundary)}
	c := startChild(t, "TestRenewalChild", append([]string{renewalChildDir + "=" + dir, renewalChildConfig + "=" + path,
		clock.EnvOffset + "=" + offset.String()}, env...)...)
	r.base = c.url
	b := r.balance()
	if b.Period != r.oldPeriod || !b.PeriodEnd.Equal(boundary) || b.Budget() != renewalBudget || b.Currency != "USD" {
		t.Fatalf("balance at the start %+v, want period %s ending %v with a 5.00 USD budget", b, r.oldPeriod, boundary)
	}
	t.Logf("%s in %s: offset %v, period %s ends %v, %v from now", cal.period, cal.zone, offset, r.oldPeriod, boundary, time.Until(r.due).Round(time.Second))
	return r
}

// periodBalance is GET /v1/balance as the contract writes it.
type periodBalance struct {
	Period          string        `json:"period"`
	PeriodStart     time.Time     `json:"period_start"`
	PeriodEnd       time.Time     `json:"period_end"`
	Currency        string        `json:"currency"`
	BudgetMicros    *price.Micros `json:"budget_micros"`
	SpentMicros     price.Micros  `json:"spent_micros"`
	HeldMicros      price.Micros  `json:"held_micros"`
	AvailableMicros *price.Micros `json:"available_micros"`
}

func (b periodBalance) Budget() price.Micros    { return deref(b.BudgetMicros) }
func (b periodBalance) Available() price.Micros { return deref(b.AvailableMicros) }

func deref(m *price.Micros) price.Micros {
	if m == nil {
		return -1
	}
	return *m
}

func (r *renewal) balance() periodBalance {
	r.t.Helper()
	var b periodBalance
	r.getJSON("/v1/balance", renewalKey, &b)
	return b
}

// periodRun is GET /v1/runs/{id}: the run's status, its period, whether it
// holds its reserve, and its money.
type periodRun struct {
	ID            string       `json:"id"`
	Status        string       `json:"status"`
	Usage         string       `json:"usage"`
	Period        string       `json:"period"`
	HeldUnits     int64        `json:"held_units"`
	ReserveMicros price.Micros `json:"reserve_micros"`
	CostMicros    price.Micros `json:"cost_micros"`
}

func (r *renewal) getJSON(path, key string, v any) {
	r.t.Helper()
	rep := doURL(r.t, r.base, "GET", path, key, "")
	if rep.status != 200 {
		r.t.Fatalf("GET %s: %d %s", path, rep.status, rep.body)
	}
	if err := json.Unmarshal(rep.body, v); err != nil {
		r.t.Fatalf("GET %s: %v: %s", path, err, rep.body)
	}
}

// call makes a chat call whose last message is the demo's in-band plan, with
// max_tokens maxTokens: the demo answers as plan says; output costs 0.01 a token.
func (r *renewal) call(plan string, stream bool, maxTokens int) reply {
	r.t.Helper()
	return doURL(r.t, r.base, "POST", "/v1/chat/completions", renewalKey, chatBody("/demo "+plan, stream, maxTokens))
}

// spend makes a call that costs n tokens' worth and checks it was charged.
func (r *renewal) spend(n int) {
	r.t.Helper()
	rep := r.call("text="+strings.Repeat("x", n), false, n)
	if rep.status != 200 {
		r.t.Fatalf("a call costing %d tokens: %d %s", n, rep.status, rep.body)
	}
}

// waitRun polls GET /v1/runs/{id} (an observable state, with a deadline)
// until the run has ended.
func (r *renewal) waitRun(id string) periodRun {
	r.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var run periodRun
		r.getJSON("/v1/runs/"+url.PathEscape(id), renewalKey, &run)
		switch run.Status {
		case "queued", "active", "":
		default:
			return run
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("run %s did not end: %+v", id, run)
		}
		time.Sleep(10 * time.Millisecond) // polling, not guessing: the loop ends on the observed state
	}
}

// hold leaves a run held before the boundary: a stream the demo cuts after
// its first part ends with its usage unknown, keeping its whole reserve of
// maxTokens tokens in the current period.
func (r *renewal) hold(maxTokens int) periodRun {
	r.t.Helper()
	rep := r.call("kind=cut&after=1&parts=part,more", true, maxTokens)
	id := rep.runID()
	if id == "" {
		r.t.Fatalf("cut stream: %d %s, no run id", rep.status, rep.body)
	}
	run := r.waitRun(string(id))
	if run.Usage != "unknown" || run.HeldUnits == 0 || run.ReserveMicros != price.Micros(maxTokens*renewalMicrosPerToken) || run.Period != r.oldPeriod {
		r.t.Fatalf("cut run %+v, want usage unknown holding its reserve of %d micros in %s", run, maxTokens*renewalMicrosPerToken, r.oldPeriod)
	}
	return run
}

// beforeBoundary fails the test when the period already ended: the steps
// meant to happen before it took longer than renewalLead.
func (r *renewal) beforeBoundary(step string) {
	r.t.Helper()
	if b := r.balance(); b.Period != r.oldPeriod {
		r.t.Fatalf("%s: the period %s ended before it was done (balance in %s); the machine is slower than renewalLead %v allows",
			step, r.oldPeriod, b.Period, renewalLead)
	}
}

// waitBoundary polls /v1/balance until it names the next period, and
// returns that balance.
func (r *renewal) waitBoundary() periodBalance {
	r.t.Helper()
	deadline := r.due.Add(30 * time.Second)
	for {
		b := r.balance()
		if b.Period != r.oldPeriod {
			return b
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("balance still in %s at %v (%v past the boundary)", b.Period, time.Now(), time.Since(r.due))
		}
		time.Sleep(50 * time.Millisecond) // polling, not guessing: the loop ends on the observed period
	}
}

// cross waits for the boundary and checks the new period: its label and
// bounds, nothing spent or held, the whole budget admitted, the held run
// still in the old period and its reconcile landing there.
func (r *renewal) cross(held periodRun) {
	r.t.Helper()
	b := r.waitBoundary()
	if b.Period != r.newPeriod || !b.PeriodStart.Equal(r.boundary) || b.SpentMicros != 0 || b.HeldMicros != 0 || b.Available() != renewalBudget {
		r.t.Fatalf("balance after the boundary %+v, want period %s from %v with nothing spent or held and 5.00 available", b, r.newPeriod, r.boundary)
	}
	r.fullBudget(200)
	if b := r.balance(); b.Period != r.newPeriod || b.SpentMicros != renewalMicrosPerToken || b.HeldMicros != 0 {
		r.t.Fatalf("balance after a call costing 0.01 %+v, want 0.01 spent in %s", b, r.newPeriod)
	}
	if run := r.waitRun(held.ID); run.Period != r.oldPeriod || run.HeldUnits != held.HeldUnits {
		r.t.Fatalf("held run after the boundary %+v, want its hold still in %s", run, r.oldPeriod)
	}
	// The operator reconciles it now: the cost is the old period's.
	rec := doURL(r.t, r.base, "POST", "/admin/api/holds/"+url.PathEscape(held.ID)+"/reconcile", renewalAdmin, `{"units":20,"cost":"0.20","evidence":"the provider's bill"}`)
	if rec.status != 200 {
		r.t.Fatalf("reconcile after the boundary: %d %s", rec.status, rec.body)
	}
	if run := r.waitRun(held.ID); run.Period != r.oldPeriod || run.HeldUnits != 0 || run.CostMicros != 200_000 {
		r.t.Fatalf("reconciled run %+v, want cost 0.20 and nothing held, in %s", run, r.oldPeriod)
	}
	if b := r.balance(); b.Period != r.newPeriod || b.SpentMicros != renewalMicrosPerToken || b.HeldMicros != 0 {
		r.t.Fatalf("balance after the reconcile %+v, want %s as it was (0.01 spent)", b, r.newPeriod)
	}
}

// fullBudget makes a call reserving the whole budget (500 tokens, 5.00)
// that costs 0.01, and checks its answer has status want: 200 in a period
// with nothing spent, 402 insufficient_budget otherwise.
func (r *renewal) fullBudget(want int) {
	r.t.Helper()
	rep := r.call("text=x", false, int(renewalBudget)/renewalMicrosPerToken)
	if rep.status != want || (want == 402 && rep.errorCode() != "insufficient_budget") {
		r.t.Fatalf("a call reserving the whole budget: %d %s, want %d", rep.status, rep.body, want)
	}
}

// TestRenewalDayAndWeek: a daily budget renews at midnight in Kathmandu
// (UTC+5:45) and a weekly one from Sunday to Monday in Pago Pago (UTC−11),
// crossed with the clock offset: the new period starts empty and admits its
// whole budget; a run held before the boundary, reconciled after it, stays
// in the old period.
func TestRenewalDayAndWeek(t *testing.T) {
	for _, cal := range []calendar{daily, weekly} {
		t.Run(cal.period, func(t *testing.T) {
			t.Parallel()
			r := startRenewal(t, cal, "")
			r.spend(300) // 3.00
			held := r.hold(150)
			r.fullBudget(402)
			r.beforeBoundary("spending")
			r.cross(held)
		})
	}
}
