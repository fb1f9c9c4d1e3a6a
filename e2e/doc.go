// Package e2e holds end-to-end tests of the assembled server (server.Open, as
// `quotagate serve` runs it, on real SQLite in a temp dir and real loopback
// HTTP):
//
//   - the dashboard test drives the real embedded dashboard through headless
//     Chromium (chromedp); without Chromium or a built dashboard it skips,
//     unless E2E_REQUIRED=1 (as in `make test`), where it fails;
//   - the localhost-hardening checks run against the assembled handler;
//   - the reliability_* tests are the checks of shared/RELIABILITY.md, in
//     front of a demo upstream each test owns (the rig), or of a child
//     quotagate process that a test can SIGKILL or starve of disk space.
//     docs/RELIABILITY-MATRIX.md maps each check to its test.
package e2e
