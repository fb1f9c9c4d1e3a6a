package config

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Ledger drivers.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// Ledger chooses where the books are kept: the embedded SQLite file in the
// data dir (the default), or a PostgreSQL database shared by several
// gateways.
type Ledger struct {
	Driver string `yaml:"driver"` // sqlite (default) or postgres
	// DSN names the PostgreSQL database: a URL (postgres://user:pw@host:5432/db),
	// a keyword DSN (host=… port=… user=… dbname=…), or a keyword DSN whose
	// host is a Unix socket directory (host=/var/run/postgresql …).
	DSN string `yaml:"dsn"`
	// Instance names this gateway among those sharing the database; ""
	// means host:port (the machine's name and the listen port).
	Instance string `yaml:"instance"`
	// Version orders the definitions of tenants and upstreams that several
	// gateways bring to one database: a gateway applies its own only when
	// they match what is there or its version is higher; otherwise it
	// refuses to start, naming both.
	Version int64 `yaml:"version"`
	// Heartbeat is how often a gateway on PostgreSQL renews its lease;
	// LeaseExpiry is how long another waits, after the last renewal, before
	// it ends the silent gateway's runs interrupted (slots freed, money
	// held). Zero is ledger.DefaultHeartbeat and ledger.DefaultLeaseExpiry.
	Heartbeat   time.Duration `yaml:"heartbeat"`
	LeaseExpiry time.Duration `yaml:"lease_expiry"`
}

func (l Ledger) validate() error {
	switch l.Driver {
	case DriverSQLite:
		if l.DSN != "" {
			return fmt.Errorf("ledger.dsn: only the postgres driver takes a DSN; the sqlite ledger is <data>/ledger.db")
		}
	case DriverPostgres:
		if strings.TrimSpace(l.DSN) == "" {
			return fmt.Errorf("ledger.dsn: the postgres driver needs a DSN, e.g. dsn: ${QUOTAGATE_PG_DSN}")
		}
		if _, err := pgconn.ParseConfig(l.DSN); err != nil {
			return fmt.Errorf("ledger.dsn: not a PostgreSQL URL or keyword DSN (%s)", RedactDSNError(err))
		}
	default:
		return fmt.Errorf("ledger.driver %q: want %s or %s", l.Driver, DriverSQLite, DriverPostgres)
	}
	// Zero is the lease's default, which the postgres store applies.
	if hb, exp := cmp.Or(l.Heartbeat, ledger.DefaultHeartbeat), cmp.Or(l.LeaseExpiry, ledger.DefaultLeaseExpiry); hb < 0 || exp < 2*hb {
		return fmt.Errorf("ledger.lease_expiry %v: at least twice ledger.heartbeat (%v), so that one late heartbeat does not end a live gateway's runs", exp, hb)
	}
	if l.Version < 0 {
		return fmt.Errorf("ledger.version %d: must not be negative", l.Version)
	}
	if strings.ContainsAny(l.Instance, " \t\n") || len(l.Instance) > 128 {
		return fmt.Errorf("ledger.instance %q: up to 128 characters without spaces", l.Instance)
	}
	return nil
}

// RedactDSNError says what is wrong with a DSN without repeating it (it may
// carry a password).
func RedactDSNError(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "cannot parse `"); i >= 0 {
		rest := msg[i+len("cannot parse `"):]
		if j := strings.Index(rest, "`"); j >= 0 {
			msg = msg[:i] + "cannot parse the DSN" + rest[j+1:]
		}
	}
	if u, perr := url.Parse(msg); perr == nil && u.User != nil {
		return "invalid DSN"
	}
	return msg
}

// Fingerprint is a digest of what several gateways sharing one ledger must
// agree on: the tenants (ids, budgets, limits, models, key hashes) and the
// upstreams (names, URLs, models, gates, quotas — never their secrets), as
// c holds them. The server hashes a copy whose keys left out hold their
// packages' defaults, so that an absent key and its default agree.
func (c *Config) Fingerprint() string {
	type upstream struct {
		Name, Kind, BaseURL     string
		Models, ReasoningModels []string
		MaxConcurrent           int
		Queue                   Queue
		Quota                   *Quota
		Protocols               []string `json:",omitempty"`
		// A route's order and names must agree too (absent: as before).
		Priority Priority          `json:",omitempty"`
		Renamed  map[string]string `json:",omitempty"`
	}
	ups := make([]upstream, 0, len(c.Upstreams))
	for _, u := range c.Upstreams {
		var q *Quota
		if u.Quota != nil {
			qc := *u.Quota
			qc.Balance = Balance{Kind: qc.Balance.Kind, URL: qc.Balance.URL, Field: qc.Balance.Field}
			q = &qc
		}
		ups = append(ups, upstream{Name: u.Name, Kind: u.Kind, BaseURL: u.BaseURL, Models: u.Models,
			ReasoningModels: u.ReasoningModels, MaxConcurrent: u.MaxConcurrent, Queue: u.Queue, Quota: q,
			Priority: u.Priority, Renamed: u.Renamed()})
	}
	b, _ := json.Marshal(struct {
		Tenants   any
		Upstreams any
	}{c.LedgerTenants(), ups})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// RedactDSN removes dsn's password from msg (an error that may echo it).
func RedactDSN(msg, dsn string) string {
	if c, err := pgconn.ParseConfig(dsn); err == nil && c.Password != "" {
		msg = strings.ReplaceAll(msg, c.Password, "xxxxx")
		msg = strings.ReplaceAll(msg, url.QueryEscape(c.Password), "xxxxx")
	}
	return msg
}
