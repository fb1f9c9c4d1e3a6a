// Package admin serves the dashboard's API: /admin/api/* and the /admin/ws
// WebSocket.
//
// # Security
//
// Every request carries the admin token (Authorization: Bearer, or ?token= on
// the WebSocket, since browsers cannot set headers there), compared in
// constant time. A request with an Origin header must come from the
// dashboard itself — the served page's origin or the Wails webview's
// wails://wails — and is refused with 403 otherwise, even with a valid token
// (cross-site WebSocket hijacking, CSRF). A request with no Origin is a
// script or a tool and needs only the token. DNS rebinding is stopped one
// layer out, by the server's Host check: a rebound page is same-origin.
//
// # Live state
//
// The WebSocket sends {"type":"state","state":…} on connect, then again after
// changes published on the live hub, coalesced to at most one snapshot per
// Coalesce interval, plus a periodic refresh. A client the hub drops as slow
// is closed with 1013 and re-fetches. Pings go out every Idle/2, and a socket
// that answers nothing for Idle (a peer gone without a close) is closed. The
// page sends {"type":"rendered"} once it has painted a pushed state; it is
// logged once per connection for the desktop smoke test.
package admin
