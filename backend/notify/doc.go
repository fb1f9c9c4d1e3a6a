// Package notify shows the window's desktop notifications: a hold appears, a
// guarded model is evicted, a tenant passes a share of its budget (the
// dashboard decides which; frontend/src/lib/notify.ts). Wails v2.9.2 has no
// notification API, and the window's WebKitGTK webview denies the page's
// Notification permission: Wails does not connect WebKit's
// permission-request signal, and an unhandled
// WebKitNotificationPermissionRequest "is denied by default" (WebKitGTK
// reference). So the window asks Go to send them; scripts/smoke.sh checks
// that a hold's notification reaches the session's notification server.
//
// On Linux and the BSDs a notification is a call of
// org.freedesktop.Notifications.Notify on the session bus (the freedesktop
// Desktop Notifications spec that GNOME Shell, KDE Plasma, XFCE, dunst and
// mako serve). A notification with the tag of an earlier one replaces it,
// as the browser's Notification API does with its tag.
//
// # What is deliberately absent
//
// Windows and macOS: Send answers ErrUnsupported with the reason, and the
// dashboard falls back to the webview's own Notification API (WebView2 and
// WKWebView handle their permission themselves). No toast library is
// pulled in for a notification the dashboard already shows.
package notify
