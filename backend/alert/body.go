package alert

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// Kind says what an alert is about; the hold, evict and restore kinds are
// spelled as the audit rows that record the same events.
type Kind string

const (
	KindThreshold Kind = "threshold" // a tenant's use crossed a threshold of its budget
	KindHold      Kind = "hold"      // a run ended held: its usage is unknown
	KindEvict     Kind = "evict"     // the quota guard evicted a model
	KindRestore   Kind = "restore"   // the quota guard restored it
)

// Alert is one alert as the webhook receives it. Fields that do not apply
// to its kind are left zero and sent as null.
type Alert struct {
	Kind      Kind
	Tenant    string
	Threshold Threshold // KindThreshold only
	Period    string    // the period's label; "" for a budget that never renews
	// Used and Budget are exact decimal strings, written by the caller: whole
	// units ("80000"), or money in Currency ("4.000001", price.Micros.String).
	Used, Budget string
	Currency     string // ISO 4217 for a money budget; "" for units
	At           time.Time
	Run          string // the run that crossed or ended held
}

// atLayout is RFC 3339 in UTC to the millisecond: fixed width and as
// precise as the stores keep a time, so a body rendered again from a
// stored alert is the same.
const atLayout = "2006-01-02T15:04:05.000Z07:00"

// Body renders a as the webhook's JSON: the contract's keys in its order,
// {"kind","tenant","threshold","period","used","budget","currency","at","run"},
// no spaces, absent values null. Equal alerts render equal bytes.
func (a Alert) Body() []byte {
	var b bytes.Buffer
	b.WriteString(`{"kind":`)
	writeString(&b, string(a.Kind))
	writeField(&b, "tenant", a.Tenant)
	b.WriteString(`,"threshold":`)
	if a.Threshold == 0 {
		b.WriteString("null")
	} else {
		b.WriteString(strconv.Itoa(int(a.Threshold)))
	}
	writeField(&b, "period", a.Period)
	writeField(&b, "used", a.Used)
	writeField(&b, "budget", a.Budget)
	writeField(&b, "currency", a.Currency)
	b.WriteString(`,"at":`)
	writeString(&b, a.At.UTC().Format(atLayout))
	writeField(&b, "run", a.Run)
	b.WriteByte('}')
	return b.Bytes()
}

// writeField writes ,"key":value with "" as null.
func writeField(b *bytes.Buffer, key, value string) {
	b.WriteString(`,"` + key + `":`)
	if value == "" {
		b.WriteString("null")
		return
	}
	writeString(b, value)
}

func writeString(b *bytes.Buffer, s string) {
	quoted, _ := json.Marshal(s) // a string always marshals; invalid UTF-8 becomes U+FFFD
	b.Write(quoted)
}
