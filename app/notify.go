package app

import (
	"context"
	"time"

	"github.com/quotagate/quotagate/backend/notify"
)

// Notify shows a desktop notification; the dashboard decides when (a new
// hold, an eviction, a tenant past its budget share, each with an off
// switch). A later one with the same tag replaces it. A rejected promise
// (no notification server, Windows) makes the page try the webview's own
// Notification API.
func (a *App) Notify(title, body, tag string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := a.notes.Send(ctx, notify.Notification{Title: title, Body: body, Tag: tag})
	return err
}
