package period_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/period"
)

func TestParseKind(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  period.Kind
	}{{"", period.None}, {"none", period.None}, {"day", period.Day}, {"week", period.Week}, {"month", period.Month}} {
		if got, err := period.ParseKind("budget_period", tc.value); err != nil || got != tc.want {
			t.Errorf("ParseKind(%q) = %q, %v; want %q", tc.value, got, err, tc.want)
		}
	}
}

func TestParseWeekday(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  time.Weekday
	}{{"", time.Monday}, {"monday", time.Monday}, {"sunday", time.Sunday}, {"Saturday", time.Saturday}, {"WEDNESDAY", time.Wednesday}} {
		if got, err := period.ParseWeekday("week_starts", tc.value); err != nil || got != tc.want {
			t.Errorf("ParseWeekday(%q) = %v, %v; want %v", tc.value, got, err, tc.want)
		}
	}
}

func TestLoadZone(t *testing.T) {
	berlin, err := period.LoadZone("timezone", "Europe/Berlin")
	if err != nil || berlin.String() != "Europe/Berlin" {
		t.Fatalf("Europe/Berlin: %v, %v", berlin, err)
	}
	unset, err := period.LoadZone("timezone", "")
	if err != nil || unset != nil {
		t.Fatalf("unset zone: %v, %v; want nil", unset, err)
	}
	if got := period.PickZone(unset, berlin); got != berlin {
		t.Fatalf("PickZone(nil, berlin) = %v", got)
	}
	if got := period.PickZone(nil, nil); got != time.Local {
		t.Fatalf("PickZone(nil, nil) = %v, want Local", got)
	}
}

func TestConfigRefusesNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parse func(field, value string) error
		field string
		value string
		says  string
	}{
		{"Monthly", kind, "tenants[2].budget_period", "monthly", "unknown period"},
		{"Year", kind, "tenants[0].budget_period", "year", "want none, day, week or month"},
		{"KindCase", kind, "tenants[0].budget_period", "Month", "unknown period"},
		{"Abbreviation", weekday, "tenants[1].week_starts", "mon", "unknown weekday"},
		{"Number", weekday, "tenants[1].week_starts", "1", "unknown weekday"},
		{"Misspelt", zoneOf, "tenants[3].timezone", "Europe/Berln", "unknown time zone"},
		{"Offset", zoneOf, "timezone", "+02:00", "IANA"},
		{"Traversal", zoneOf, "timezone", "../../etc/passwd", "unknown time zone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.parse(tc.field, tc.value)
			if err == nil {
				t.Fatalf("%s: %q accepted", tc.field, tc.value)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tc.field+": ") || !strings.Contains(msg, tc.says) || !strings.Contains(msg, tc.value) {
				t.Fatalf("error %q must start with %q, quote %q and say %q", msg, tc.field, tc.value, tc.says)
			}
		})
	}
}

func kind(field, value string) error    { _, err := period.ParseKind(field, value); return err }
func weekday(field, value string) error { _, err := period.ParseWeekday(field, value); return err }
func zoneOf(field, value string) error  { _, err := period.LoadZone(field, value); return err }
