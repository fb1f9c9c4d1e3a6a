package postgres_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/postgres/pgtest"
)

// TestOpenUnreachable: a database nobody answers for is tried again with
// a line per attempt for the bounded wait, then the error names the host.
func TestOpenUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	var logs lockedBuffer
	start := time.Now()
	_, err = postgres.Open(context.Background(), "postgres://quotagate:secret-pw@"+addr+"/quotagate?sslmode=disable",
		postgres.Options{Instance: "t", ConnectWait: 1500 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "cannot reach PostgreSQL") {
		t.Fatalf("open: %v; want cannot reach PostgreSQL naming %s", err, addr)
	}
	if took < time.Second || took > 15*time.Second {
		t.Errorf("gave up after %s; want about the 1.5 s wait", took)
	}
	if n := strings.Count(logs.String(), "cannot reach the PostgreSQL ledger yet"); n < 2 {
		t.Errorf("%d lines for the attempts; want one per attempt:\n%s", n, logs.String())
	}
	if strings.Contains(err.Error()+logs.String(), "secret-pw") {
		t.Error("the password was printed")
	}
}

// TestOpenWrongPassword: a wrong password is said at once, not printed.
func TestOpenWrongPassword(t *testing.T) {
	dsn := strings.Replace(pgtest.DSN(t), ":"+pgtest.Password+"@", ":not-the-password-42@", 1)
	start := time.Now()
	_, err := postgres.Open(context.Background(), dsn, postgres.Options{Instance: "t"})
	if err == nil || !strings.Contains(err.Error(), "password") || strings.Contains(err.Error(), "not-the-password-42") {
		t.Fatalf("open: %v; want a wrong password said without printing it", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a refused password was retried for %s", took)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
