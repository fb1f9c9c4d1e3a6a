package quota_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/quota"
)

// FuzzNeverLooserThanV6: from any same-day readings and usage, quotagate's
// limit is within [0, cap], never above B0 − buffer, and never above v6's
// limit from the latest reading (v6 adds the unsettled usage L; we do not).
func FuzzNeverLooserThanV6(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add([]byte("seed 002: 1,726,526 at 11:22 with usage 665,268"))
	f.Fuzz(func(t *testing.T, data []byte) {
		o := quota.DefaultOptions()
		day := "2026-08-13"
		start := at(day, "08:00:00")
		s := &quota.Series{}
		var snaps []ledger.Snapshot
		bal := ledger.Units(3_000_000)
		for i := 0; i+4 <= len(data) && i < 400; i += 4 {
			v := binary.LittleEndian.Uint32(data[i:])
			m := start.Add(time.Duration(i/4) * time.Minute)
			u := ledger.Units(v % 60_000)
			s.Add(m, u)
			if v%7 == 0 { // a reading now, of some earlier balance
				bal -= ledger.Units(v % 90_000)
				if v%49 == 0 {
					bal += 500_000 // a refund
				}
				bal = max(bal, 0)
				at := m.Add(time.Minute)
				snaps = append(snaps, ledger.Snapshot{Day: day, At: at, BalanceUnits: bal,
					UsageAtSync: quota.UsageToday(s, o.DayStart(at), at), Source: "fuzz"})
			}
		}
		if len(snaps) == 0 {
			return
		}
		now := snaps[len(snaps)-1].At
		a := quota.Assess(o, now, snaps, s)
		if a.Limit < 0 || a.Limit > o.DailyCap || (a.B0.Known && a.Limit > max(a.B0.Units-o.SmallBuffer, 0)) {
			t.Fatalf("limit %d outside [0, min(cap, B0 %d − buffer)]", a.Limit, a.B0.Units)
		}
		if a.Lag < o.MinLag || a.Lag > o.MaxLag {
			t.Fatalf("lag %s outside its bounds", a.Lag)
		}
		if a.Limit > a.LimitV6 {
			t.Fatalf("limit %d looser than v6's %d", a.Limit, a.LimitV6)
		}
	})
}
