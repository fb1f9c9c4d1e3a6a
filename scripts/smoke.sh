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
# Two windows on two data directories: a second window runs on its own data
# directory beside the first, and each keeps its webview's files (local
# storage: the page's language and theme) in its data directory's webview/,
# none in the user's default one ($HOME/.local/share/quotagate, here an empty
# HOME).
# Without a display, `quotagate` says so and serves from the headless build
# beside it (quotagate-headless), as `quotagate serve` does.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${SMOKE_BIN:-build/bin/quotagate}
out=${SMOKE_OUT:-build/smoke}
min_colours=${SMOKE_MIN_COLOURS:-64}
smoke_lang=${SMOKE_LANG:-zh_CN.UTF-8}
case "$smoke_lang" in zh*) want_lang=zh-CN ;; *) want_lang=en ;; esac
mkdir -p "$out"
rm -f "$out/app.log" "$out/screenshot.png" "$out/notify.log"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
data=$tmp/data data2=$tmp/data2 home=$tmp/home
mkdir -p "$data" "$data2" "$home"
listen="$tmp/notifylisten"
go build -o "$listen" ./backend/internal/notifylisten
cut_body='{"model":"demo-chat","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"smoke"}]}'
case "$want_lang" in zh-CN) want_note='local 有一笔' ;; *) want_note='A hold of' ;; esac
# The window's "keep serving in the background?" question is left unanswered
# (no window.json): the smoke's SIGTERM must quit without asking it, with
# nobody to click (app.QuitOn).
export bin out data data2 home min_colours smoke_lang listen cut_body
rm -f "$out/app2.log" "$out/headless.log"

# Port 0: the window learns the real port through its Connection() binding.
xvfb-run -a -s "-screen 0 1280x1024x24" dbus-run-session -- bash -c '
  "$listen" >"$out/notify.log" 2>&1 & lpid=$!
  for _ in $(seq 1 40); do grep -q "^ready" "$out/notify.log" && break; sleep 0.25; done
  export HOME="$home"; unset XDG_DATA_HOME XDG_CACHE_HOME
  LANG="$smoke_lang" LC_ALL= LC_MESSAGES= "$bin" --addr 127.0.0.1:0 --data "$data" --log-level debug >"$out/app.log" 2>&1 & pid=$!
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
  # A second window, on another data directory, while the first runs.
  LANG=en_US.UTF-8 LC_ALL= LC_MESSAGES= "$bin" --addr 127.0.0.1:0 --data "$data2" --log-level debug >"$out/app2.log" 2>&1 & pid2=$!
  for _ in $(seq 1 240); do
    grep -q "admin ws page rendered the state" "$out/app2.log" && break
    kill -0 "$pid2" 2>/dev/null || break
    sleep 0.25
  done
  for _ in $(seq 1 40); do
    [ -d "$data/webview/quotagate/storage" ] && [ -d "$data2/webview/quotagate/storage" ] && break
    sleep 0.25
  done
  kill "$pid" "$pid2" 2>/dev/null || true
  wait "$pid" "$pid2" 2>/dev/null || true
  kill "$lpid" 2>/dev/null || true
  wait "$lpid" 2>/dev/null || true'

# No display: the launch serves, from the headless build.
headless="$(dirname "$bin")/quotagate-headless"
env -u DISPLAY -u WAYLAND_DISPLAY HOME="$home" "$bin" --addr 127.0.0.1:0 --data "$tmp/data3" >"$out/headless.log" 2>&1 & hpid=$!
for _ in $(seq 1 100); do grep -q "dashboard:" "$out/headless.log" && break; kill -0 "$hpid" 2>/dev/null || break; sleep 0.1; done
hexe=$(readlink "/proc/$hpid/exe" || true)
hrss=$(awk '/^VmRSS:/ {print $2}' "/proc/$hpid/status" 2>/dev/null || echo 0)
kill -TERM "$hpid" 2>/dev/null || true
wait "$hpid" 2>/dev/null || true

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
echo "smoke: the second window's log:"; cat "$out/app2.log"
grep -q "admin ws page rendered the state" "$out/app2.log" || fail "the second window (another data directory) never painted"
for d in "$data" "$data2"; do
  [ -d "$d/webview/quotagate/storage" ] || fail "the window on $d kept no local storage in $d/webview/"
done
leaked=$(find "$home" -mindepth 1 \( -name hsts-storage.sqlite -o -name storage -o -name mediakeys -o -name WebKitCache \) | head -3)
[ -z "$leaked" ] || fail "the windows wrote webview files outside their data directories: $leaked"
echo "smoke: two windows kept their webview files in their own data directories"
cat "$out/headless.log"
grep -q "running \`quotagate serve\` instead" "$out/headless.log" || fail "without a display the launch did not say it serves instead"
[ "$hexe" -ef "$headless" ] || fail "without a display the launch served from $hexe, not $headless"
echo "smoke: without a display the launch served from $(basename "$hexe"): RSS $((hrss / 1024)) MB"
echo "smoke: 1 passed"
