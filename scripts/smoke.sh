#!/usr/bin/env bash
# Desktop smoke test: the real window under Xvfb with LANG=zh_CN.UTF-8
# (SMOKE_LANG). Passes when the page inside the webview has called the backend
# (its WebSocket logs Origin wails://wails), has told the backend it painted
# the pushed state in Chinese (lang=zh-CN, from the system locale), and a
# screenshot of the screen is not blank (CJK glyphs rendered, not boxes: the
# colour count is the check, as for the English page). The screenshot and the
# app log are kept in build/smoke/ as test artifacts.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${SMOKE_BIN:-build/bin/quotagate}
out=${SMOKE_OUT:-build/smoke}
min_colours=${SMOKE_MIN_COLOURS:-64}
smoke_lang=${SMOKE_LANG:-zh_CN.UTF-8}
case "$smoke_lang" in zh*) want_lang=zh-CN ;; *) want_lang=en ;; esac
mkdir -p "$out"
rm -f "$out/app.log" "$out/screenshot.png"
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
# The window's "keep serving in the background?" question is answered up
# front (app/prefs.go): the smoke's SIGTERM must quit even if Wails reaches
# BeforeClose before the signal is seen there, with nobody to click.
printf '{"keep_serving":false}\n' >"$data/window.json"
export bin out data min_colours smoke_lang

# Port 0: the window learns the real port through its Connection() binding.
xvfb-run -a -s "-screen 0 1280x1024x24" bash -c '
  LANG="$smoke_lang" LC_ALL= LC_MESSAGES= "$bin" --addr 127.0.0.1:0 --data "$data" >"$out/app.log" 2>&1 & pid=$!
  for _ in $(seq 1 240); do
    grep -Eq "admin ws page rendered the state.* origin=\"?wails://wails" "$out/app.log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  # The page has painted live state; retake until the screen shows more than a blank window.
  for _ in $(seq 1 40); do
    import -window root "$out/screenshot.png" 2>/dev/null || true
    n=$(/usr/bin/convert "$out/screenshot.png" -format "%k" info: 2>/dev/null || echo 0)
    [ "$n" -ge "$min_colours" ] && break
    sleep 0.25
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true'

cat "$out/app.log"
fail() { echo "smoke: FAIL: $*"; echo "smoke: 0 passed, 1 failed"; exit 1; }
grep -Eq 'admin ws connected.* origin="?wails://wails' "$out/app.log" ||
  fail "the window never connected its WebSocket with Origin wails://wails"
grep -Eq 'admin ws page rendered the state.* origin="?wails://wails' "$out/app.log" ||
  fail "the window connected but never painted a pushed state"
grep -Eq "admin ws page rendered the state.* lang=\"?$want_lang" "$out/app.log" ||
  fail "the window did not follow LANG=$smoke_lang (want the page in $want_lang)"
[ -s "$out/screenshot.png" ] || fail "no screenshot"
colours=$(/usr/bin/convert "$out/screenshot.png" -format "%k" info:)
sd=$(/usr/bin/convert "$out/screenshot.png" -colorspace gray -format "%[fx:standard_deviation]" info:)
echo "smoke: screenshot $out/screenshot.png: $colours colours, grey standard deviation $sd"
[ "$colours" -ge "$min_colours" ] || fail "screenshot looks blank ($colours colours < $min_colours)"
echo "smoke: 1 passed"
