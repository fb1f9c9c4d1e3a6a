#!/usr/bin/env bash
# Desktop smoke test: the real window under Xvfb with LANG=zh_CN.UTF-8
# (SMOKE_LANG). Passes when the page inside the webview has called the backend
# (its WebSocket logs Origin wails://wails), has told the backend it painted
# the pushed state in Chinese (lang=zh-CN, from the system locale), and a
# screenshot of the screen is not blank (CJK glyphs rendered, not boxes: the
# colour count is the check, as for the English page). The screenshot and the
# app log are kept in build/smoke/ as test artifacts.
# Desktop notifications: the window runs on a private session bus
# (dbus-run-session) with a recording notification server
# (backend/internal/notifylisten); after the page painted, a stream cut by
# the demo upstream makes a hold appear, and the smoke passes only when that
# hold's notification, in the page's language, reached the server through
# the window's Notify binding (build/smoke/notify.log).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${SMOKE_BIN:-build/bin/quotagate}
out=${SMOKE_OUT:-build/smoke}
min_colours=${SMOKE_MIN_COLOURS:-64}
smoke_lang=${SMOKE_LANG:-zh_CN.UTF-8}
case "$smoke_lang" in zh*) want_lang=zh-CN ;; *) want_lang=en ;; esac
mkdir -p "$out"
rm -f "$out/app.log" "$out/screenshot.png" "$out/notify.log"
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
listen="$data/notifylisten"
go build -o "$listen" ./backend/internal/notifylisten
cut_body='{"model":"demo-chat","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"smoke"}]}'
case "$want_lang" in zh-CN) want_note='local 有一笔' ;; *) want_note='A hold of' ;; esac
# The window's "keep serving in the background?" question is left unanswered
# (no window.json): the smoke's SIGTERM must quit without asking it, with
# nobody to click (app.QuitOn).
export bin out data min_colours smoke_lang listen cut_body

# Port 0: the window learns the real port through its Connection() binding.
xvfb-run -a -s "-screen 0 1280x1024x24" dbus-run-session -- bash -c '
  "$listen" >"$out/notify.log" 2>&1 & lpid=$!
  for _ in $(seq 1 40); do grep -q "^ready" "$out/notify.log" && break; sleep 0.25; done
  LANG="$smoke_lang" LC_ALL= LC_MESSAGES= "$bin" --addr 127.0.0.1:0 --data "$data" >"$out/app.log" 2>&1 & pid=$!
  for _ in $(seq 1 240); do
    grep -Eq "admin ws page rendered the state.* origin=\"?wails://wails" "$out/app.log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  # A stream the demo upstream cuts: its hold appears on the painted page,
  # which notifies through the window.
  url=$(grep -o "url=http://[^ ]*" "$out/app.log" | head -1 | cut -d= -f2)
  if [ -n "$url" ] && [ -s "$data/keys/local.key" ]; then
    curl -s -o /dev/null -H "Authorization: Bearer $(cat "$data/keys/local.key")" -H "Content-Type: application/json" \
      -H "X-Demo-Plan: kind=cut&after=1" -d "$cut_body" "$url/v1/chat/completions" || true
    for _ in $(seq 1 40); do grep -q "\"summary\"" "$out/notify.log" && break; sleep 0.25; done
  fi
  # The page has painted live state; retake until the screen shows more than a blank window.
  for _ in $(seq 1 40); do
    import -window root "$out/screenshot.png" 2>/dev/null || true
    n=$(/usr/bin/convert "$out/screenshot.png" -format "%k" info: 2>/dev/null || echo 0)
    [ "$n" -ge "$min_colours" ] && break
    sleep 0.25
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  kill "$lpid" 2>/dev/null || true
  wait "$lpid" 2>/dev/null || true'

cat "$out/app.log"
fail() { echo "smoke: FAIL: $*"; echo "smoke: 0 passed, 1 failed"; exit 1; }
grep -Eq 'admin ws connected.* origin="?wails://wails' "$out/app.log" ||
  fail "the window never connected its WebSocket with Origin wails://wails"
grep -Eq 'admin ws page rendered the state.* origin="?wails://wails' "$out/app.log" ||
  fail "the window connected but never painted a pushed state"
grep -Eq "admin ws page rendered the state.* lang=\"?$want_lang" "$out/app.log" ||
  fail "the window did not follow LANG=$smoke_lang (want the page in $want_lang)"
echo "smoke: notifications received:"; cat "$out/notify.log"
grep -q "\"summary\":\"$want_note" "$out/notify.log" ||
  fail "the hold's desktop notification (\"$want_note…\") never reached the session's notification server"
[ -s "$out/screenshot.png" ] || fail "no screenshot"
colours=$(/usr/bin/convert "$out/screenshot.png" -format "%k" info:)
sd=$(/usr/bin/convert "$out/screenshot.png" -colorspace gray -format "%[fx:standard_deviation]" info:)
echo "smoke: screenshot $out/screenshot.png: $colours colours, grey standard deviation $sd"
[ "$colours" -ge "$min_colours" ] || fail "screenshot looks blank ($colours colours < $min_colours)"
echo "smoke: 1 passed"
