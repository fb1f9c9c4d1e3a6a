//go:build desktop

package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	"github.com/wailsapp/wails/v2/pkg/options/windows"

	"github.com/quotagate/quotagate/app"
	"github.com/quotagate/quotagate/backend/instance"
	"github.com/quotagate/quotagate/backend/server"
	"github.com/quotagate/quotagate/frontend"
)

//go:embed build/appicon.png
var icon []byte

// noDisplay: GTK would panic without one.
func noDisplay() bool {
	return (runtime.GOOS == "linux" || runtime.GOOS == "freebsd") && os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == ""
}

// window opens the Wails window on a gateway of its own. Without a display it
// says so in one line and serves headless instead — from the headless build
// when there is one, as `quotagate serve` does (execHeadless).
func window(ctx context.Context, c cli, args []string, stdout, stderr io.Writer, log *slog.Logger) int {
	if noDisplay() {
		fmt.Fprintln(stdout, "quotagate: no display (DISPLAY and WAYLAND_DISPLAY are unset), running `quotagate serve` instead")
		execHeadlessServe(serveArgs(args))
		return serve(ctx, c, stdout, stderr, log)
	}
	o, err := c.options(log)
	if err != nil {
		fmt.Fprintf(stderr, "quotagate: %v\n", err)
		return 1
	}
	return runWindow(stderr, c.data, func(ctx context.Context) (app.Backend, error) {
		srv, err := server.Open(ctx, o)
		if err != nil {
			return nil, err
		}
		return srv, nil
	})
}

// attach opens a window onto the headless gateway already running on this
// data directory; closing it leaves that gateway serving.
func attach(ctx context.Context, r instance.Running, stdout, stderr io.Writer, log *slog.Logger) int {
	if noDisplay() {
		fmt.Fprintf(stdout, "quotagate is already running headless (pid %d); its dashboard: %s/#token=%s\n", r.PID, r.URL, r.Token)
		return 0
	}
	fmt.Fprintf(stdout, "quotagate is already running headless (pid %d, %s); opening a window onto it\n", r.PID, r.URL)
	return runWindow(stderr, r.Dir, func(context.Context) (app.Backend, error) {
		return app.Remote{BaseURL: r.URL, Token: r.Token, Dir: r.Dir}, nil
	})
}

// webviewDir is where, inside the data directory, the window's webview keeps
// its own files: the page's remembered language and theme belong to one
// gateway, not to every one on the machine.
const webviewDir = "webview"

// runWindow runs the window on the gateway of dataDir until it closes;
// Ctrl+C or SIGTERM quits it without the keep-serving question.
func runWindow(stderr io.Writer, dataDir string, open func(context.Context) (app.Backend, error)) int {
	webview, err := filepath.Abs(filepath.Join(dataDir, webviewDir))
	if err == nil {
		err = keepWebviewDataIn(webview)
	}
	if err != nil {
		fmt.Fprintf(stderr, "quotagate: %v\n", err)
		return 1
	}
	a := app.New(open)
	signals, sigs := make(chan os.Signal, 1), []os.Signal{os.Interrupt, syscall.SIGTERM}
	signal.Notify(signals, sigs...)
	defer signal.Stop(signals)
	app.QuitOn(a, signals, sigs...)
	err = wails.Run(&options.App{
		Title:            "quotagate",
		Width:            1280,
		Height:           860,
		MinWidth:         800,
		MinHeight:        560,
		AssetServer:      &assetserver.Options{Assets: frontend.FS()},
		BackgroundColour: &options.RGBA{R: 250, G: 250, B: 250, A: 255},
		OnStartup:        a.Startup,
		OnBeforeClose:    a.BeforeClose,
		OnShutdown:       a.Shutdown,
		Bind:             []any{a},
		Linux:            &linux.Options{Icon: icon, ProgramName: "quotagate", WebviewGpuPolicy: linux.WebviewGpuPolicyNever},
		Windows:          &windows.Options{WebviewUserDataPath: webview},
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
