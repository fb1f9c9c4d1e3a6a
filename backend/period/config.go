package period

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // a tenant's zone must load on machines without a zoneinfo database (Windows desktops)
)

// ParseKind reads budget_period; "" is None. field names the key in errors
// ("tenants[2].budget_period").
func ParseKind(field, value string) (Kind, error) {
	switch k := Kind(value); k {
	case "":
		return None, nil
	case None, Day, Week, Month:
		return k, nil
	}
	return "", fmt.Errorf("%s: unknown period %q: want none, day, week or month", field, value)
}

// ParseWeekday reads week_starts, an English day name in any case; "" is
// Monday, ISO 8601's first day.
func ParseWeekday(field, value string) (time.Weekday, error) {
	if value == "" {
		return time.Monday, nil
	}
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(value, d.String()) {
			return d, nil
		}
	}
	return 0, fmt.Errorf("%s: unknown weekday %q: want monday, tuesday, wednesday, thursday, friday, saturday or sunday", field, value)
}

// LoadZone reads a timezone key, an IANA name ("Europe/Berlin"); "" is
// unset and answers nil, for PickZone to fall back past.
func LoadZone(field, name string) (*time.Location, error) {
	if name == "" {
		return nil, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%s: unknown time zone %q: want an IANA name such as Europe/Berlin or America/New_York", field, name)
	}
	return loc, nil
}

// PickZone returns the first zone set — the tenant's, then the gateway's —
// else the machine's.
func PickZone(zones ...*time.Location) *time.Location {
	for _, z := range zones {
		if z != nil {
			return z
		}
	}
	return time.Local
}
