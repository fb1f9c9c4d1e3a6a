// Package app holds the Wails bindings: only what a browser cannot do. The
// dashboard talks to the backend over the same admin HTTP API and WebSocket in
// the window and in a browser; these methods tell it where that is, and add
// the native save dialog, the file manager, start-at-login and the window's
// life beside a gateway that keeps serving.
package app

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync/atomic"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/notify"
)

// Backend is the gateway the window shows: the one it started (a
// *server.Server), or one already running on the same data directory that
// the window attached to (Remote).
type Backend interface {
	URL() string
	AdminToken() string
	DataDir() string
	Close() error
}

// presenting is a Backend that a second launch can ask to show this window.
type presenting interface {
	SetPresenter(show func() bool)
}

// Connection is where the dashboard finds the backend.
type Connection struct {
	URL   string `json:"url"`   // e.g. http://127.0.0.1:8787
	Token string `json:"token"` // the admin token
}

// App is the one bound struct: window.go.app.App.* in the frontend.
type App struct {
	open  func(ctx context.Context) (Backend, error)
	ctx   context.Context
	srv   Backend
	err   error
	ready chan struct{}
	// quitting: the process was told to stop (a signal); closing then
	// asks nothing.
	quitting atomic.Bool
	signals  chan os.Signal
	sigs     []os.Signal
	notes    *notify.Notifier // the session's notification server (notify.go)
}

// New returns an App that starts (or attaches to) the backend with open when
// the window starts.
func New(open func(ctx context.Context) (Backend, error)) *App {
	return &App{open: open, ready: make(chan struct{}), notes: notify.New("")}
}

// Startup is passed as OnStartup, which Wails exempts from binding. The
// server starts here, not before wails.Run: a build that generates bindings
// runs main() up to wails.Run and must not listen.
func (a *App) Startup(ctx context.Context) {
	a.ctx = ctx
	a.srv, a.err = a.open(ctx)
	close(a.ready)
	if a.err != nil {
		_, _ = runtime.MessageDialog(ctx, runtime.MessageDialogOptions{
			Type: runtime.ErrorDialog, Title: "quotagate could not start", Message: a.err.Error(),
		})
		runtime.Quit(ctx)
		return
	}
	if p, ok := a.srv.(presenting); ok {
		p.SetPresenter(a.show)
	}
}

// Shutdown is passed as OnShutdown: it stops the backend (an attached
// window leaves the running gateway alone).
func (a *App) Shutdown(context.Context) {
	_ = a.notes.Close()
	if a.srv != nil {
		_ = a.srv.Close()
	}
}

// QuitOn makes a signal on signals (Ctrl+C, SIGTERM; signal.Notify'd for
// sigs) close the window without asking whether to keep serving. Wails
// quits on those signals by itself, through BeforeClose, having heard them
// on its own channel; os/signal fills every channel under one lock, so
// BeforeClose takes that lock (Notify again, a no-op) before it looks: the
// signal that woke Wails is then in signals for certain.
// A function, not a method: every method of App becomes a JS binding.
func QuitOn(a *App, signals chan os.Signal, sigs ...os.Signal) {
	a.signals, a.sigs = signals, sigs
}

// signalled reports whether the process was told to stop.
func (a *App) signalled() bool {
	if a.signals == nil {
		return a.quitting.Load()
	}
	if len(a.sigs) > 0 { // Notify with none would relay every signal
		signal.Notify(a.signals, a.sigs...) // waits out a delivery in progress
	}
	select {
	case <-a.signals:
		a.quitting.Store(true)
	default:
	}
	return a.quitting.Load()
}

// StartError returns the backend's start error, if any, once Startup has
// run. A function, not a method: every method of App becomes a JS binding.
func StartError(a *App) error {
	select {
	case <-a.ready:
		return a.err
	default:
		return nil
	}
}

func (a *App) server() (Backend, error) {
	<-a.ready
	if a.err != nil {
		return nil, errors.New("the backend did not start: " + a.err.Error())
	}
	return a.srv, nil
}

// Connection returns the backend's URL and admin token.
func (a *App) Connection() (Connection, error) {
	srv, err := a.server()
	if err != nil {
		return Connection{}, err
	}
	return Connection{URL: srv.URL(), Token: srv.AdminToken()}, nil
}

// message turns an error into a person's sentence (never SQL or a secret).
func message(what string, err error) error {
	return errors.New(what + ": " + ledger.ErrorMessage(err))
}
