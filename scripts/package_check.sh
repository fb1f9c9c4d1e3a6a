#!/usr/bin/env bash
# Checks what `make package` built, as a user would meet it: the .deb's menu
# entry validates, it installs with apt (dependencies resolved), the installed
# binary reports the version and opens its window under Xvfb (the desktop
# smoke test), and it removes cleanly; the tarball and the Windows zip hold
# what they promise, the .exe being a PE32+ GUI program with its version
# resource. Installing needs root (CI is root), else sudo.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${VERSION:-$(scripts/version.sh)}
out=build/package
deb=$out/quotagate_${version}_amd64.deb
tgz=$out/quotagate-$version-linux-amd64.tar.gz
zip=$out/quotagate-$version-windows-amd64.zip
passed=0
pass() { echo "package-check: ok: $*"; passed=$((passed + 1)); }
fail() { echo "package-check: FAIL: $*"; echo "package-check: $passed passed, 1 failed"; exit 1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for f in "$deb" "$tgz" "$zip"; do [ -s "$f" ] || fail "missing $f (run make package)"; done
ls -l "$out"

# .deb contents
dpkg-deb -x "$deb" "$tmp/deb"
desktop-file-validate "$tmp/deb/usr/share/applications/quotagate.desktop" || fail "the .desktop entry does not validate"
pass "desktop entry validates"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "the .deb's Version is not $version"
dpkg-deb -f "$deb" Depends | grep -q 'libwebkit2gtk-4.1-0' || fail "the .deb does not depend on the WebKitGTK 4.1 runtime"
dpkg-deb -f "$deb" Depends | grep -q -- '-dev' && fail "the .deb depends on a -dev package"
for s in 16 48 256; do [ -s "$tmp/deb/usr/share/icons/hicolor/${s}x${s}/apps/quotagate.png" ] || fail "no ${s}px hicolor icon"; done
[ -s "$tmp/deb/usr/share/man/man1/quotagate.1.gz" ] || fail "no man page"
pass "deb control, icons and man page"

# install, run, remove
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "./$deb" >"$tmp/apt.log" 2>&1 ||
  { cat "$tmp/apt.log"; fail "apt could not install $deb"; }
[ "$(/usr/bin/quotagate --version)" = "quotagate $version" ] || fail "/usr/bin/quotagate --version says '$(/usr/bin/quotagate --version)'"
pass "installed; /usr/bin/quotagate --version = $version"
[ "$(/usr/bin/quotagate-headless --version)" = "quotagate $version" ] || fail "/usr/bin/quotagate-headless has the wrong version"
# `quotagate serve` hands itself to the headless build (same pid): the
# window's ~170 libraries are not loaded. Each run sets serve_exe, serve_rss (kB).
serve_once() {
  local port=$((20000 + RANDOM % 20000)) pid
  "$@" serve --data "$tmp/serve-data" --addr "127.0.0.1:$port" >"$tmp/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { cat "$tmp/serve.log"; fail "$* serve did not become healthy"; }
  serve_exe=$(readlink "/proc/$pid/exe")
  serve_rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")
  kill -TERM "$pid"
  wait "$pid" || true
}
serve_once /usr/bin/quotagate
exe=$serve_exe rss=$serve_rss
serve_once env QUOTAGATE_IN_PROCESS=1 /usr/bin/quotagate
exe_in=$serve_exe rss_in=$serve_rss
[ "$exe" = /usr/bin/quotagate-headless ] || fail "quotagate serve ran as $exe, not the headless build"
[ "$exe_in" = /usr/bin/quotagate ] || fail "QUOTAGATE_IN_PROCESS=1 quotagate serve ran as $exe_in"
[ $((rss + 20000)) -lt "$rss_in" ] || fail "serve from the headless build: RSS $rss kB, in process $rss_in kB (want 20 MB less)"
pass "quotagate serve runs from quotagate-headless: RSS $((rss / 1024)) MB idle, $((rss_in / 1024)) MB in the desktop binary"
SMOKE_BIN=/usr/bin/quotagate SMOKE_OUT=build/smoke/installed scripts/smoke.sh >"$tmp/smoke.log" 2>&1 ||
  { cat "$tmp/smoke.log"; fail "the installed binary's window did not pass the desktop smoke test"; }
pass "desktop smoke test from the installed binary (build/smoke/installed/)"
as_root dpkg -r quotagate >"$tmp/rm.log" 2>&1 || { cat "$tmp/rm.log"; fail "dpkg -r failed"; }
[ ! -e /usr/bin/quotagate ] && [ ! -e /usr/bin/quotagate-headless ] && [ ! -e /usr/share/applications/quotagate.desktop ] || fail "files left after removal"
dpkg -s quotagate 2>/dev/null | grep -q '^Status: install ok installed' && fail "still installed after removal"
pass "removed cleanly"

# tarball
tar -C "$tmp" -xzf "$tgz"
td=$tmp/quotagate-$version-linux-amd64
for f in quotagate quotagate-headless quotagate.desktop quotagate.png quotagate.1 README.md docs/api.md docs/configuration.md; do [ -s "$td/$f" ] || fail "tarball lacks $f"; done
for b in quotagate quotagate-headless; do
  [ "$("$td/$b" --version)" = "quotagate $version" ] || fail "the tarball's $b has the wrong version"
done
pass "tarball holds both binaries, desktop file, icon, man page, README and its docs"

# Windows zip
(cd "$tmp" && unzip -q "$OLDPWD/$zip")
exe=$tmp/quotagate-$version-windows-amd64/quotagate.exe
[ -s "$tmp/quotagate-$version-windows-amd64/README.md" ] || fail "zip lacks README.md"
file "$exe" | grep -q 'PE32+ executable (GUI) x86-64' || fail "not a PE32+ GUI executable: $(file "$exe")"
# Read once, then search: `strings | grep -q` under pipefail fails whenever
# grep exits at its match before strings has written its last block (SIGPIPE).
res=$(strings -el "$exe")
grep -qx "$version" <<<"$res" || fail "no version resource naming $version"
grep -qx 'FileVersion' <<<"$res" || fail "no FileVersion in the version resource"
pass "Windows zip: PE32+ GUI executable with version resource $version ($(du -h "$exe" | cut -f1))"

echo "package-check: $passed passed, 0 failed"
