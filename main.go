// Command quotagate runs the local LLM gateway: in a window (Wails), or
// headless with `quotagate serve`. Both serve the same dashboard.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/quotagate/quotagate/backend/clock"
	"github.com/quotagate/quotagate/backend/config"
	"github.com/quotagate/quotagate/backend/postgres"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/frontend"
)

// version is set at build time: -ldflags "-X main.version=…".
var version = "dev"

const usage = `quotagate — a local, OpenAI-compatible LLM gateway with budgets, holds and quota guards.

Usage:
  quotagate [command] [flags]

Commands:
  (none)     open the window (without a display: says so and runs serve)
  serve      run without a window; print the dashboard URL and the local key
  verify     recompute every balance from the ledger; exit 1 on any difference
             (the configured one: <data>/ledger.db, or ledger.dsn on PostgreSQL);
             it replays the audit rows after the last clean verify's
             checkpoint and leaves a new one; --full replays everything
  archive --before 2026-01-01 [--to DIR|FILE]
             move the runs that ended before that first of a month (UTC) —
             none held — with their audit rows into one file per month
             (default <data>/archive/), leaving a summary per tenant and
             month that verify proves the balances from; the month leaves
             in parts, one transaction each, and a rerun resumes it
  archive restore FILE
             put an archived month back exactly; verify --archive FILE
             re-checks a file against its summary, naming an altered row
  migrate    copy a desktop ledger into an empty shared one, then verify it:
             quotagate migrate --from sqlite:PATH --to postgres:DSN
  prices update --from FILE
             replace the price table (USD per 1M tokens; the built-in one is
             from models.dev) with FILE, checked whole first, from the next
             start: <data>/prices.json; delete that file to go back
  service install|uninstall
             start the gateway headless at login (systemd user unit on Linux,
             the per-user Run key on Windows), or stop doing so
  version    print the version
  help       print this text

Flags:
  --addr ADDR     listen address, loopback only (default 127.0.0.1:8787)
  --data DIR      data directory: ledger and secrets
                  (default $XDG_DATA_HOME/quotagate, else ~/.local/share/quotagate)
  --config FILE   YAML config (default: built in — tenant "local", the demo upstream)
  --from, --to    migrate's source (sqlite:PATH) and target (postgres:DSN);
                  --from is also prices update's FILE, --to archive's DIR|FILE
  --before DATE   archive: the first of a month; runs that ended before it
  --archive FILE  verify: check an archive file instead of the ledger
  --full          verify: replay the whole history, not from the checkpoint
  --log-level L   what the terminal shows: debug, info (default), warn or error;
                  debug adds routine events such as each dashboard connecting
  --pprof ADDR    serve: also serve Go's profiler (net/http/pprof) on ADDR,
                  loopback only, e.g. 127.0.0.1:6060 (off by default)
  --version       print the version
  --help          print this text

Point a tool at http://127.0.0.1:8787/v1 with the printed key as its API key.
`

// cli is the parsed command line.
type cli struct {
	command, action, addr, data, config string
	from, to                            string // migrate
	pprof                               string // serve: profiler address, "" = off
	logLevel                            string // --log-level: debug, info, warn or error; "" = info
	full                                bool   // verify: replay the whole history, not from the checkpoint
	archive                             string // verify --archive FILE
	before                              string // archive --before DATE
	file                                string // archive restore FILE
}

// logLevels are --log-level's values (unset: info, slog's zero Level). The
// start-up lines and warnings are at info and above; routine events (a
// dashboard connecting or leaving) at debug, so the terminal stays quiet
// unless asked.
var logLevels = map[string]slog.Level{
	"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError,
}

// logger writes to w at the --log-level.
func (c cli) logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: logLevels[c.logLevel]}))
}

// headlessBinary is the build without the window installed beside the
// desktop one; the desktop binary hands `serve` to it (execHeadless).
const headlessBinary = "quotagate-headless"

func main() {
	execHeadless(os.Args[1:])
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line; ctx ends `serve`.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "quotagate: %v\n\n%s", err, usage)
		return 2
	}
	log := c.logger(stderr)
	switch c.command {
	case "version":
		fmt.Fprintln(stdout, "quotagate", version)
		return 0
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "serve":
		return serve(ctx, c, stdout, stderr, log)
	case "verify":
		if c.archive != "" {
			return verifyArchive(ctx, c, stdout, stderr)
		}
		return verify(ctx, c, stdout, stderr)
	case "archive":
		return archive(ctx, c, stdout, stderr)
	case "migrate":
		return migrate(ctx, c, stdout, stderr)
	case "service":
		return service(c, stdout, stderr)
	case "prices":
		return prices(c, stdout, stderr)
	case "":
		return launch(ctx, c, args, stdout, stderr, log)
	}
	fmt.Fprintf(stderr, "quotagate: unknown command %q\n\n%s", c.command, usage)
	return 2
}

// parse accepts flags before and after the command.
func parse(args []string, stderr io.Writer) (cli, error) {
	var c cli
	var showVersion bool
	fs := flag.NewFlagSet("quotagate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.addr, "addr", "", "")
	fs.StringVar(&c.data, "data", "", "")
	fs.StringVar(&c.config, "config", "", "")
	fs.StringVar(&c.from, "from", "", "")
	fs.StringVar(&c.to, "to", "", "")
	fs.StringVar(&c.pprof, "pprof", "", "")
	fs.StringVar(&c.logLevel, "log-level", "", "")
	fs.BoolVar(&showVersion, "version", false, "")
	fs.BoolVar(&c.full, "full", false, "")
	fs.StringVar(&c.archive, "archive", "", "")
	fs.StringVar(&c.before, "before", "", "")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		c.command = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return c, err
		}
		if (c.command == "service" || c.command == "prices" || c.command == "archive") && fs.NArg() > 0 {
			c.action = fs.Arg(0)
			if err := fs.Parse(fs.Args()[1:]); err != nil {
				return c, err
			}
		}
		if c.command == "archive" && c.action == "restore" && fs.NArg() > 0 {
			c.file = fs.Arg(0)
			if err := fs.Parse(fs.Args()[1:]); err != nil {
				return c, err
			}
		}
		if fs.NArg() > 0 {
			return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
		}
	}
	if showVersion {
		c.command = "version"
	}
	if _, ok := logLevels[c.logLevel]; !ok && c.logLevel != "" {
		return c, fmt.Errorf("--log-level is debug, info, warn or error, not %q", c.logLevel)
	}
	if c.pprof != "" {
		if err := loopbackOnly(c.pprof); err != nil {
			return c, err
		}
	}
	if c.data == "" {
		c.data = defaultDataDir()
	}
	return c, nil
}

// defaultDataDir follows the XDG base directory spec.
func defaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "quotagate")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "quotagate")
	}
	return "quotagate-data"
}

func (c cli) options(log *slog.Logger) (server.Options, error) {
	cfg := config.Default()
	if c.config != "" {
		var err error
		if cfg, err = config.Load(c.config); err != nil {
			return server.Options{}, err
		}
	}
	path := c.config
	if abs, err := filepath.Abs(path); path != "" && err == nil {
		path = abs
	}
	// A test or a demo shifts the gateway's clock from outside the process;
	// a value that is not a duration refuses the start rather than run on
	// real time unnoticed.
	clk, err := clock.FromEnv(os.LookupEnv)
	if err != nil {
		return server.Options{}, err
	}
	return server.Options{Config: cfg, ConfigPath: path, DataDir: c.data, Addr: c.addr, Version: version,
		Frontend: frontend.FS(), Logger: log, Clock: clk}, nil
}

func serve(ctx context.Context, c cli, stdout, stderr io.Writer, log *slog.Logger) int {
	o, err := c.options(log)
	if err != nil {
		return fail(stderr, err)
	}
	srv, err := server.Open(ctx, o)
	if err != nil {
		return fail(stderr, err)
	}
	var pprofAt string
	if c.pprof != "" {
		stop, bound, err := startPprof(c.pprof)
		if err != nil {
			srv.Close()
			return fail(stderr, err)
		}
		defer stop()
		pprofAt = bound
	}
	fmt.Fprintf(stdout, "quotagate %s is running (Ctrl+C stops it)\n", version)
	if pprofAt != "" {
		fmt.Fprintf(stdout, "  pprof:     http://%s/debug/pprof/\n", pprofAt)
	}
	fmt.Fprintf(stdout, "  dashboard: %s\n", srv.DashboardURL())
	fmt.Fprintf(stdout, "  base URL:  %s/v1\n", srv.URL())
	keys := srv.GeneratedKeys()
	ids := make([]string, 0, len(keys))
	for id := range keys {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(stdout, "  %s key: %s\n", id, keys[id])
	}
	if o.Clock.Shifted() {
		fmt.Fprintf(stdout, "  clock:     %s (%s), now %s\n", o.Clock, clock.EnvOffset, o.Clock.Now().UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(stdout, "  data:      %s\n", srv.DataDir())
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		return fail(stderr, err)
	}
	return 0
}

// fail says err on stderr and is the exit status of a command that failed.
func fail(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "quotagate: %v\n", err)
	return 1
}

func verify(ctx context.Context, c cli, stdout, stderr io.Writer) int {
	o, err := c.options(slog.New(slog.DiscardHandler))
	if err != nil {
		return fail(stderr, err)
	}
	diffs, err := server.VerifyWith(ctx, o, server.VerifyOptions{Full: c.full, Checkpoint: true})
	if err != nil {
		return fail(stderr, err)
	}
	for _, d := range diffs {
		fmt.Fprintln(stdout, d)
	}
	if len(diffs) > 0 {
		fmt.Fprintf(stdout, "verify: %d differences\n", len(diffs))
		return 1
	}
	fmt.Fprintln(stdout, "verify: ledger consistent")
	return 0
}

// migrate is `quotagate migrate --from sqlite:PATH --to postgres:DSN`.
func migrate(ctx context.Context, c cli, stdout, stderr io.Writer) int {
	from, okFrom := strings.CutPrefix(c.from, "sqlite:")
	to, okTo := strings.CutPrefix(c.to, "postgres:")
	if !okFrom || !okTo || from == "" || to == "" {
		fmt.Fprintln(stderr, "quotagate: migrate needs --from sqlite:PATH (a desktop ledger, its gateway stopped) and --to postgres:DSN (an empty shared ledger)")
		return 2
	}
	res, err := postgres.MigrateSQLite(ctx, from, to)
	if err != nil {
		fmt.Fprintf(stderr, "quotagate: %s\n", config.RedactDSN(err.Error(), to))
		return 1
	}
	tables := make([]string, 0, len(res.Rows))
	for t := range res.Rows {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		fmt.Fprintf(stdout, "  %-14s %d rows\n", t, res.Rows[t])
	}
	if res.Interrupted > 0 {
		fmt.Fprintf(stdout, "  %d runs left open by the desktop gateway were ended interrupted first (holds kept)\n", res.Interrupted)
	}
	for _, p := range res.Problems {
		fmt.Fprintln(stdout, p)
	}
	if len(res.Problems) > 0 {
		fmt.Fprintf(stdout, "migrate: copied, but verify found %d differences\n", len(res.Problems))
		return 1
	}
	fmt.Fprintln(stdout, "migrate: copied and verified; point every gateway at it with ledger: {driver: postgres, dsn: …}")
	return 0
}
