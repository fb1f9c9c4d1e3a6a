package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/quotagate/quotagate/backend/autostart"
	"github.com/quotagate/quotagate/backend/instance"
)

// launch is `quotagate` with no command: one gateway per data directory.
// When another quotagate holds the data dir, it is asked to show its
// dashboard (its window comes forward), or — a headless serve — a window is
// opened onto it; no second gateway starts and the ledger is not touched.
// args is the command line c was parsed from (flags only).
func launch(ctx context.Context, c cli, args []string, stdout, stderr io.Writer, log *slog.Logger) int {
	o, err := c.options(log)
	if err != nil {
		fmt.Fprintf(stderr, "quotagate: %v\n", err)
		return 1
	}
	running, held, err := instance.Handover(ctx, c.data, o.Config.AdminToken)
	if err != nil {
		fmt.Fprintf(stderr, "quotagate: %v\n", err)
		return 1
	}
	if !held {
		return window(ctx, c, args, stdout, stderr, log)
	}
	if running.Window {
		fmt.Fprintf(stdout, "quotagate is already running (pid %d, %s); brought its window forward\n", running.PID, running.URL)
		return 0
	}
	return attach(ctx, running, stdout, stderr, log)
}

// serveArgs is the command line that serves what launch's args would have
// opened a window on: the same flags after `serve`.
func serveArgs(launchArgs []string) []string {
	return append([]string{"serve"}, launchArgs...)
}

// service installs or removes the start-at-login registration.
func service(c cli, stdout, stderr io.Writer) int {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		fmt.Fprintf(stderr, "quotagate: find this program's path: %v\n", err)
		return 1
	}
	data, err := filepath.Abs(c.data)
	if err != nil {
		fmt.Fprintf(stderr, "quotagate: %v\n", err)
		return 1
	}
	switch c.action {
	case "install":
		path, err := autostart.InstallUnit(autostart.Serve(exe, data))
		if err != nil {
			fmt.Fprintf(stderr, "quotagate: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "installed %s: quotagate serve --data %s starts at login\n", path, data)
		fmt.Fprint(stdout, autostart.EnableHint)
		return 0
	case "uninstall":
		path, err := autostart.UninstallUnit()
		if err != nil {
			fmt.Fprintf(stderr, "quotagate: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "removed %s: quotagate no longer starts at login\n", path)
		return 0
	}
	fmt.Fprintf(stderr, "quotagate: service needs install or uninstall, not %q\n\n%s", c.action, usage)
	return 2
}
