//go:build desktop

package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"

	"github.com/quotagate/quotagate/app"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/frontend"
)

//go:embed build/appicon.png
var icon []byte

// window opens the Wails window. Without a display (GTK would panic) it says
// so in one line and serves headless instead.
func window(ctx context.Context, c cli, stdout, stderr io.Writer, log *slog.Logger) int {
	if (runtime.GOOS == "linux" || runtime.GOOS == "freebsd") && os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		fmt.Fprintln(stdout, "quotagate: no display (DISPLAY and WAYLAND_DISPLAY are unset), running `quotagate serve` instead")
		return serve(ctx, c, stdout, stderr, log)
	}
	o, err := c.options(log)
	if err != nil {
		fmt.Fprintf(stderr, "quotagate: %v\n", err)
		return 1
	}
	a := app.New(func(ctx context.Context) (*server.Server, error) { return server.Open(ctx, o) })
	err = wails.Run(&options.App{
		Title:            "quotagate",
		Width:            1280,
		Height:           860,
		MinWidth:         800,
		MinHeight:        560,
		AssetServer:      &assetserver.Options{Assets: frontend.FS()},
		BackgroundColour: &options.RGBA{R: 250, G: 250, B: 250, A: 255},
		OnStartup:        a.Startup,
		OnShutdown:       a.Shutdown,
		Bind:             []any{a},
		Linux:            &linux.Options{Icon: icon, ProgramName: "quotagate", WebviewGpuPolicy: linux.WebviewGpuPolicyNever},
	})
	if err == nil {
		err = app.StartError(a)
	}
	if err != nil {
		fmt.Fprintf(stderr, "quotagate: %v\n", err)
		return 1
	}
	return 0
}
