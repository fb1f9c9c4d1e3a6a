package notify

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// Notification is one desktop notification.
type Notification struct {
	Title string // the summary line
	Body  string
	// Tag names what the notification is about ("hold:run_…"); a later
	// notification with the same tag replaces the earlier one.
	Tag string
}

// ErrUnsupported is the error of Send where this build has no way to show a
// desktop notification.
var ErrUnsupported = errors.New("desktop notifications from the window are not available on this system")

// AppName is the application name notifications carry.
const AppName = "quotagate"

// maxText bounds the summary and body: a notification server shows a few
// lines, and a sentence from the dashboard is never longer.
const maxText = 1000

func clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= maxText {
		return s
	}
	cut := maxText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
