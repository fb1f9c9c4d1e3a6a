//go:build !desktop

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/quotagate/quotagate/backend/instance"
)

// window: a build without the desktop tag (plain `go build`, tests) has no
// window, so it serves headless.
func window(ctx context.Context, c cli, _ []string, stdout, stderr io.Writer, log *slog.Logger) int {
	fmt.Fprintln(stdout, "quotagate: this build has no window (built without -tags desktop), running `quotagate serve` instead")
	return serve(ctx, c, stdout, stderr, log)
}

// attach: with no window to open, point at the running gateway's dashboard.
func attach(_ context.Context, r instance.Running, stdout, _ io.Writer, _ *slog.Logger) int {
	fmt.Fprintf(stdout, "quotagate is already running headless (pid %d); its dashboard: %s/#token=%s\n", r.PID, r.URL, r.Token)
	return 0
}
