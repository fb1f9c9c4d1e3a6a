// Package e2e holds end-to-end tests: the assembled server (server.Open, as
// `quotagate serve` runs it) with the real embedded dashboard, driven by
// headless Chromium through chromedp, plus the localhost-hardening checks on
// the assembled handler. Without Chromium or a built dashboard the browser
// test skips, unless E2E_REQUIRED=1 (as in `make test`), where it fails.
package e2e
