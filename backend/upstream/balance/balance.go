// Package balance reads a provider's free balance for a guarded model. It is
// the only place that calls provider billing APIs. Every source implements
// Source; the quota guard consumes it as quota.BalanceSource.
package balance

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Source reads the free balance (in units) of one model.
type Source interface {
	Balance(ctx context.Context, model string) (ledger.Units, error)
}

// Kinds of source, as spelled in the config.
const (
	KindVolcengine = "volcengine"
	KindHTTPJSON   = "http-json"
	KindManual     = "manual"
)

// Config is one upstream's `quota.balance` block (DESIGN.md).
type Config struct {
	Kind string
	// volcengine
	AccessKey, SecretKey string
	BaseURL              string // default https://open.volcengineapi.com
	Region               string // default cn-beijing
	Product              string // package product code filter; empty: all products
	ResourceType         string // default Package
	ModelField           string // package field naming the model; empty: any of the usual ones
	// http-json
	URL   string // may contain {model}
	Field string // dotted path of the number, e.g. data.available
	Token string // optional bearer token
}

// DefaultTimeout bounds one balance reading.
const DefaultTimeout = 20 * time.Second

// New builds the source cfg names. client may be nil (a client with
// DefaultTimeout is used).
func New(cfg Config, client *http.Client) (Source, error) {
	if client == nil {
		client = &http.Client{Timeout: DefaultTimeout}
	}
	switch cfg.Kind {
	case KindVolcengine:
		return NewVolcengine(cfg, client)
	case KindHTTPJSON:
		return NewHTTPJSON(cfg.URL, cfg.Field, cfg.Token, client)
	case KindManual, "":
		return Manual{}, nil
	}
	return nil, ledger.Errorf(ledger.CodeInvalidRequest, "unknown balance source kind %q (volcengine, http-json or manual)", cfg.Kind)
}

// Manual is the source of an operator: it has no automatic reading; the
// admin API enters balances and B0s through the quota guard instead.
type Manual struct{}

// Balance always fails: there is nothing to read.
func (Manual) Balance(context.Context, string) (ledger.Units, error) {
	return 0, ledger.Errorf(ledger.CodeInvalidRequest, "a manual balance source has no automatic reading; enter a balance or B0")
}

// Kind names the source in snapshots.
func (Manual) Kind() string { return KindManual }

// Manual tells the quota guard not to poll this source.
func (Manual) Manual() bool { return true }

// ParseUnits reads a provider amount ("1726526", "1726526.000000", 1.7e6)
// as whole units, rounding a fraction down: a reading that errs low can
// only make the guard stricter.
func ParseUnits(s string) (ledger.Units, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty amount")
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	if isDigits(whole) && (!hasFrac || isDigits(frac) || frac == "") && len(whole) <= 16 {
		var u ledger.Units
		for _, c := range whole {
			u = u*10 + ledger.Units(c-'0')
		}
		if err := ledger.CheckUnits("balance", u); err != nil {
			return 0, err
		}
		return u, nil
	}
	var f float64
	if _, err := fmt.Sscan(s, &f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("amount %q is not a number", s)
	}
	if f < 0 || f > float64(ledger.MaxUnits) {
		return 0, fmt.Errorf("amount %q is out of range", s)
	}
	return ledger.Units(math.Floor(f)), nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
