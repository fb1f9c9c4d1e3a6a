package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/quotagate/quotagate/backend/server"
)

// archive is `quotagate archive --before DATE [--to DIR|FILE]` and
// `quotagate archive restore FILE`.
func archive(ctx context.Context, c cli, stdout, stderr io.Writer) int {
	o, err := c.options(slog.New(slog.DiscardHandler))
	if err != nil {
		return fail(stderr, err)
	}
	switch {
	case c.action == "restore" && c.file != "" && c.before == "":
		res, err := server.RestoreArchive(ctx, o, c.file)
		if err != nil {
			return fail(stderr, err)
		}
		fmt.Fprintf(stdout, "archive: restored %s: %d runs, %d audit rows from %s\n", res.Month, res.Runs, res.Rows, res.File)
		return 0
	case c.action == "" && c.before != "":
	default:
		fmt.Fprintln(stderr, "quotagate: archive needs: archive --before 2026-01-01 [--to DIR|FILE], or archive restore FILE")
		return 2
	}
	rep, err := server.Archive(ctx, o, c.before, c.to)
	if err != nil {
		fmt.Fprintf(stderr, "quotagate: archive: %v\n", err)
		return 1
	}
	var runs int64
	for _, m := range rep.Months {
		runs += m.Runs
		fmt.Fprintf(stdout, "archive: %s: %d runs, %d audit rows, %d summaries → %s\n",
			m.Month, m.Runs, m.Rows, len(m.Summaries), m.File)
	}
	if len(rep.Months) == 0 {
		fmt.Fprintf(stdout, "archive: no run ended before %s that may be archived (held runs stay)\n", c.before)
		return 0
	}
	fmt.Fprintf(stdout, "archive: %d months, %d runs; %d bytes of the ledger file freed for new rows (%d free)\n",
		len(rep.Months), runs, rep.Freed, rep.FreeBytes)
	return 0
}

// verifyArchive is `quotagate verify --archive FILE`.
func verifyArchive(ctx context.Context, c cli, stdout, stderr io.Writer) int {
	o, err := c.options(slog.New(slog.DiscardHandler))
	if err != nil {
		return fail(stderr, err)
	}
	diffs, err := server.VerifyArchive(ctx, o, c.archive)
	if err != nil {
		return fail(stderr, err)
	}
	for _, d := range diffs {
		fmt.Fprintln(stdout, d)
	}
	if len(diffs) > 0 {
		fmt.Fprintf(stdout, "verify: %s: %d differences\n", c.archive, len(diffs))
		return 1
	}
	fmt.Fprintf(stdout, "verify: %s matches the ledger's summary\n", c.archive)
	return 0
}
