// Package pgtest runs a throwaway PostgreSQL cluster for tests: initdb into a
// temporary directory, pg_ctl start on a loopback port and a Unix socket,
// an ordinary (non-superuser) role, and one fresh database per caller owned
// by that role. One cluster serves a whole test binary (Main starts it on
// first use and stops it after the tests).
//
// The server is Debian's `postgresql` package (scripts/deps.sh installs it).
// PostgreSQL refuses to run as root, and CI runs as root: the cluster then
// runs as the `postgres` system user the package creates, the test binary
// dropping privileges for initdb and pg_ctl only.
//
// Without a server a test is skipped, unless E2E_REQUIRED=1 (as `make test`
// sets), where a missing server fails the test.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Role and Password are the ordinary role that owns every database the
// cluster hands out.
const (
	Role     = "quotagate"
	Password = "quotagate-test"
	Database = "quotagate" // owned by Role; DSN hands out schemas in it
)

// Server is one running cluster.
type Server struct {
	Dir    string // data directory (also holds the Unix socket)
	Host   string // 127.0.0.1
	Port   int
	binDir string
	opts   string              // the server's options, for Restart
	cred   *syscall.Credential // nil when the test does not run as root
	dbs    atomic.Int64

	mu    sync.Mutex
	conns map[string]*pgx.Conn // the harness's superuser connections, per database
}

var (
	mu       sync.Mutex
	shared   *Server
	startErr error
	started  bool
)

// Main runs the tests of a package that uses the shared cluster and stops
// the cluster afterwards: func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }.
func Main(m *testing.M) int {
	code := m.Run()
	mu.Lock()
	defer mu.Unlock()
	if shared != nil {
		if err := shared.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
		shared = nil
	}
	return code
}

// Shared returns the binary's cluster, starting it on first use; a test
// without PostgreSQL is skipped (failed under E2E_REQUIRED=1).
func Shared(tb testing.TB) *Server {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if !started {
		started = true
		shared, startErr = Start()
	}
	if startErr != nil {
		if errors.Is(startErr, ErrNoServer) && os.Getenv("E2E_REQUIRED") != "1" {
			tb.Skipf("pgtest: %v (set E2E_REQUIRED=1 to fail instead)", startErr)
		}
		tb.Fatalf("pgtest: %v", startErr)
	}
	return shared
}

// DSN creates a fresh schema owned by Role in the shared cluster's database
// Database and returns a URL DSN (TCP on loopback) whose search_path is that
// schema: a new, empty ledger for one test, far cheaper than a database.
func DSN(tb testing.TB) string {
	tb.Helper()
	s := Shared(tb)
	schema := fmt.Sprintf("t%d", s.dbs.Add(1))
	if err := s.exec(context.Background(), Database, `CREATE SCHEMA `+schema+` AUTHORIZATION `+Role); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return s.URL(Database) + "&search_path=" + schema
}

// NewDatabase creates a fresh database owned by Role and returns its URL DSN:
// for tests of several processes sharing one ledger (LISTEN/NOTIFY and
// advisory locks are per database).
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	s := Shared(tb)
	name, err := s.CreateDatabase(context.Background())
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return s.URL(name)
}

// ErrNoServer says PostgreSQL's server binaries are not installed.
var ErrNoServer = errors.New("PostgreSQL server not installed (Debian package postgresql; scripts/deps.sh installs it)")

// binDir finds initdb: on PATH, else Debian's versioned directory.
func findBinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		return filepath.Dir(p), nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) == 0 {
		return "", ErrNoServer
	}
	// The highest version sorts last only up to 9 → 10; compare numerically.
	best, bestV := "", -1
	for _, m := range matches {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(m))))
		if v > bestV {
			best, bestV = m, v
		}
	}
	return filepath.Dir(best), nil
}

// Start creates and starts a new cluster; Stop ends it and removes its files.
func Start() (*Server, error) {
	bin, err := findBinDir()
	if err != nil {
		return nil, err
	}
	s := &Server{Host: "127.0.0.1", binDir: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root needs the postgres system user (the postgresql package creates it): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	}
	// Short path: a Unix socket path must fit in 107 bytes. As root, /tmp
	// rather than $TMPDIR, which the postgres user may not be able to reach.
	parent := ""
	if s.cred != nil {
		parent = "/tmp"
	}
	s.Dir, err = os.MkdirTemp(parent, "pgtest-")
	if err != nil {
		return nil, err
	}
	if err := s.chown(s.Dir); err != nil {
		os.RemoveAll(s.Dir)
		return nil, err
	}
	data := filepath.Join(s.Dir, "data")
	pwfile := filepath.Join(s.Dir, "pw")
	if err := os.WriteFile(pwfile, []byte("postgres-test\n"), 0o600); err != nil {
		os.RemoveAll(s.Dir)
		return nil, err
	}
	if err := s.chown(pwfile); err != nil {
		os.RemoveAll(s.Dir)
		return nil, err
	}
	if out, err := s.run("initdb", "-D", data, "-U", "postgres", "--pwfile", pwfile, "-E", "UTF8",
		"--locale=C", "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync"); err != nil {
		os.RemoveAll(s.Dir)
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	for attempt := 0; ; attempt++ {
		s.Port, err = freePort()
		if err != nil {
			os.RemoveAll(s.Dir)
			return nil, err
		}
		// Durability is not what these tests test (the SQLite crash test
		// does): fsync off keeps a cluster per test binary cheap.
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "+
			"-c full_page_writes=off -c max_connections=300 -c shared_buffers=32MB", s.Port, s.Dir)
		s.opts = opts
		out, err := s.run("pg_ctl", "start", "-w", "-t", "60", "-D", data, "-l", filepath.Join(s.Dir, "log"), "-o", opts)
		if err == nil {
			break
		}
		if attempt >= 2 {
			log, _ := os.ReadFile(filepath.Join(s.Dir, "log"))
			os.RemoveAll(s.Dir)
			return nil, fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, log)
		}
	}
	if err := s.exec(context.Background(), "postgres",
		fmt.Sprintf(`CREATE ROLE %s LOGIN PASSWORD '%s' NOSUPERUSER NOCREATEDB NOCREATEROLE`, Role, Password)); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.exec(context.Background(), "postgres", `CREATE DATABASE `+Database+` OWNER `+Role); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) chown(path string) error {
	if s.cred == nil {
		return nil
	}
	return os.Chown(path, int(s.cred.Uid), int(s.cred.Gid))
}

// run runs one of the server's programs as the unprivileged user.
func (s *Server) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(s.binDir, name), args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGTZ=UTC")
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
		cmd.Env = append(cmd.Env, "HOME="+s.Dir, "USER=postgres", "LOGNAME=postgres")
	}
	// pg_ctl's postmaster inherits stdout/stderr; a file keeps the test's
	// pipes from staying open after pg_ctl returns.
	f, err := os.CreateTemp(s.Dir, name+"-*.out")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Run()
	out, _ := os.ReadFile(f.Name())
	return out, err
}

// Stop stops the cluster (fast shutdown) and removes its directory.
func (s *Server) Stop() error {
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close(context.Background())
	}
	s.conns = nil
	s.mu.Unlock()
	out, err := s.run("pg_ctl", "stop", "-w", "-m", "fast", "-D", filepath.Join(s.Dir, "data"))
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %w\n%s", err, out)
	}
	return os.RemoveAll(s.Dir)
}

// Restart stops the server as an operator's `pg_ctl restart -m fast` does
// (every session is ended), keeps it down for down, and starts it again on
// the same port, as a database restarted for an upgrade or failed over is.
func (s *Server) Restart(down time.Duration) error {
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close(context.Background())
	}
	s.conns = nil
	s.mu.Unlock()
	data := filepath.Join(s.Dir, "data")
	if out, err := s.run("pg_ctl", "stop", "-w", "-m", "fast", "-D", data); err != nil {
		return fmt.Errorf("pg_ctl stop: %w\n%s", err, out)
	}
	time.Sleep(down) // the outage being simulated
	if out, err := s.run("pg_ctl", "start", "-w", "-t", "60", "-D", data, "-l", filepath.Join(s.Dir, "log"), "-o", s.opts); err != nil {
		return fmt.Errorf("pg_ctl start: %w\n%s", err, out)
	}
	return nil
}

// SuperDSN is a keyword DSN of the superuser over the Unix socket: for the
// harness only, never for quotagate.
func (s *Server) SuperDSN(db string) string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable", s.Dir, s.Port, db)
}

// URL is the URL DSN of Role on database db over TCP.
func (s *Server) URL(db string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(Role, Password),
		Host: net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// Keyword is the keyword DSN of Role on database db over TCP.
func (s *Server) Keyword(db string) string {
	return fmt.Sprintf("host=%s port=%d user=%s password=%s dbname=%s sslmode=disable", s.Host, s.Port, Role, Password, db)
}

// Socket is the keyword DSN of Role on database db over the Unix socket.
func (s *Server) Socket(db string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s", s.Dir, s.Port, Role, db)
}

// CreateDatabase creates a new, empty database owned by Role and returns its name.
func (s *Server) CreateDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("qg_%d_%d", os.Getpid(), s.dbs.Add(1))
	if err := s.exec(ctx, "postgres", `CREATE DATABASE `+name+` OWNER `+Role); err != nil {
		return "", err
	}
	// PostgreSQL 15 no longer lets every role create in public; the owner
	// of the database should own its public schema too.
	if err := s.exec(ctx, name, `ALTER SCHEMA public OWNER TO `+Role); err != nil {
		return "", err
	}
	return name, nil
}

// exec runs sql as the superuser on database db, on a connection kept per
// database.
func (s *Server) exec(ctx context.Context, db, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	conn := s.conns[db]
	if conn == nil {
		var err error
		conn, err = pgx.Connect(ctx, s.SuperDSN(db))
		if err != nil {
			return fmt.Errorf("connect as superuser: %w", err)
		}
		if s.conns == nil {
			s.conns = map[string]*pgx.Conn{}
		}
		s.conns[db] = conn
	}
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", strings.Fields(sql)[0]+" "+strings.Fields(sql)[1], err)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
