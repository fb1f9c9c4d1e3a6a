package admin

import (
	"net/http"
	"os"
)

// Presenter is the desktop window of the process that serves this API, if
// it has one. A second launch of quotagate on the same data directory asks
// it, through POST /admin/api/show, to come to the front instead of starting
// a second gateway.
type Presenter interface {
	// Show brings the window forward (un-hiding it if it was closed to the
	// background) and reports whether there is a window at all.
	Show() bool
}

// ShowAnswer is the body of POST /admin/api/show.
type ShowAnswer struct {
	Window bool `json:"window"` // false: a headless `serve`; the caller opens its own window onto it
	PID    int  `json:"pid"`
}

func (h *Handler) show(w http.ResponseWriter, r *http.Request) error {
	shown := h.o.Presenter != nil && h.o.Presenter.Show()
	h.log.Info("a second launch asked for the dashboard", "window", shown)
	writeJSON(w, http.StatusOK, ShowAnswer{Window: shown, PID: os.Getpid()})
	return nil
}
