//go:build !desktop

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
)

// window: a build without the desktop tag (plain `go build`, tests) has no
// window, so it serves headless.
func window(ctx context.Context, c cli, stdout, stderr io.Writer, log *slog.Logger) int {
	fmt.Fprintln(stdout, "quotagate: this build has no window (built without -tags desktop), running `quotagate serve` instead")
	return serve(ctx, c, stdout, stderr, log)
}
