package alert_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/alert"
)

var at = time.Date(2026, 12, 14, 10, 30, 0, 123_456_789, time.FixedZone("CET", 3600))

func TestBody(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   alert.Alert
		want string
	}{
		{"MoneyThreshold", alert.Alert{Kind: alert.KindThreshold, Tenant: "acme", Threshold: 80, Period: "2026-12",
			Used: "4.000000", Budget: "5.00", Currency: "USD", At: at, Run: "run_01"},
			`{"kind":"threshold","tenant":"acme","threshold":80,"period":"2026-12","used":"4.000000","budget":"5.00","currency":"USD","at":"2026-12-14T09:30:00.123Z","run":"run_01"}`},
		{"UnitsThresholdNoPeriod", alert.Alert{Kind: alert.KindThreshold, Tenant: "ci", Threshold: 50, Used: "50000", Budget: "100000", At: at},
			`{"kind":"threshold","tenant":"ci","threshold":50,"period":null,"used":"50000","budget":"100000","currency":null,"at":"2026-12-14T09:30:00.123Z","run":null}`},
		{"Hold", alert.Alert{Kind: alert.KindHold, Tenant: "acme", Period: "2026-W50", Used: "1200", Budget: "5000", At: at, Run: "run_02"},
			`{"kind":"hold","tenant":"acme","threshold":null,"period":"2026-W50","used":"1200","budget":"5000","currency":null,"at":"2026-12-14T09:30:00.123Z","run":"run_02"}`},
		{"Evict", alert.Alert{Kind: alert.KindEvict, At: at},
			`{"kind":"evict","tenant":null,"threshold":null,"period":null,"used":null,"budget":null,"currency":null,"at":"2026-12-14T09:30:00.123Z","run":null}`},
		{"Escaped", alert.Alert{Kind: alert.KindThreshold, Tenant: "a\"<b>\n", Threshold: 95, At: at},
			`{"kind":"threshold","tenant":"a\"\u003cb\u003e\n","threshold":95,"period":null,"used":null,"budget":null,"currency":null,"at":"2026-12-14T09:30:00.123Z","run":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.Body()
			if string(got) != tc.want {
				t.Fatalf("body\n got %s\nwant %s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Fatalf("not JSON: %s", got)
			}
		})
	}
}

func TestBodyRepeatsByteForByte(t *testing.T) {
	a := alert.Alert{Kind: alert.KindThreshold, Tenant: "acme", Threshold: 80, Period: "2026-12", Used: "4.00", Budget: "5.00", Currency: "USD", At: at, Run: "r"}
	first := a.Body()
	// The same alert read back from a store that keeps milliseconds, in another zone.
	again := a
	again.At = at.Truncate(time.Millisecond).In(time.UTC)
	if !bytes.Equal(first, again.Body()) || !bytes.Equal(first, a.Body()) {
		t.Fatalf("a repeat differs:\n%s\n%s", first, again.Body())
	}
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(first))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	if got := fmtKeys(keys); got != "kind,tenant,threshold,period,used,budget,currency,at,run" {
		t.Fatalf("keys %s, want the contract's order", got)
	}
}

func fmtKeys(keys []string) string {
	var b bytes.Buffer
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
	}
	return b.String()
}
