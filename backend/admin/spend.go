package admin

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/price"
)

// SpendSource is a store that keeps the spend rollup (ledger.SpendHour);
// both of quotagate's stores do.
type SpendSource interface {
	SpendHours(ctx context.Context, from, to time.Time) ([]ledger.SpendHour, error)
}

// SpendDay is what one tenant's runs on one model, admitted on one day of
// the gateway's zone, have spent.
type SpendDay struct {
	Day        string       `json:"day"` // YYYY-MM-DD in the gateway's zone
	Tenant     string       `json:"tenant"`
	Upstream   string       `json:"upstream"`
	Model      string       `json:"model"`
	SpentUnits ledger.Units `json:"spent_units"`
	CostMicros price.Micros `json:"cost_micros"`
}

// SpendPage is GET /admin/api/spend's answer: the days asked for, oldest
// first, and their rows (none for a day, tenant and model that spent
// nothing).
type SpendPage struct {
	Days []string   `json:"days"`
	Rows []SpendDay `json:"rows"`
}

// MaxSpendDays bounds GET /admin/api/spend's days.
const MaxSpendDays = 92

// spend serves GET /admin/api/spend?days=N (1–92, default 30): spend per
// day of admission in the gateway's zone, tenant and model, summed from the
// rollup's hours (a month is 720 of them per tenant and model, whatever
// the runs), so that a chart reads what it draws.
func (h *Handler) spend(w http.ResponseWriter, r *http.Request) error {
	days := 30
	if s := r.URL.Query().Get("days"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxSpendDays {
			return ledger.Errorf(ledger.CodeInvalidRequest, "days must be 1 … %d", MaxSpendDays)
		}
		days = n
	}
	src, ok := h.o.Store.(SpendSource)
	if !ok {
		return ledger.Errorf(codeNotFound, "this ledger keeps no spend by day")
	}
	now := time.Now()
	y, m, d := now.Date()
	from := time.Date(y, m, d-days+1, 0, 0, 0, 0, now.Location())
	hours, err := src.SpendHours(r.Context(), from, now.Add(time.Hour))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, SpendByDay(hours, from, days))
	return nil
}

// SpendByDay sums hours into days days from from's (a local midnight's)
// day, in from's zone.
func SpendByDay(hours []ledger.SpendHour, from time.Time, days int) SpendPage {
	p := SpendPage{Days: make([]string, 0, days), Rows: []SpendDay{}}
	for i := range days {
		p.Days = append(p.Days, from.AddDate(0, 0, i).Format(time.DateOnly))
	}
	at := map[SpendDay]int{}
	for _, h := range hours {
		k := SpendDay{Day: h.Hour.In(from.Location()).Format(time.DateOnly), Tenant: h.TenantID, Upstream: h.Upstream, Model: h.Model}
		i, seen := at[k]
		if !seen {
			i = len(p.Rows)
			at[k] = i
			p.Rows = append(p.Rows, k)
		}
		p.Rows[i].SpentUnits += h.SpentUnits
		p.Rows[i].CostMicros += h.CostMicros
	}
	return p
}
