#!/usr/bin/env bash
# Installs the apt packages quotagate needs to build the window and run every
# test layer, only those missing; through sudo when not root, or prints the
# exact command when sudo is not there. Also checks Go and npm are on PATH.
# postgresql: the server that backend/postgres's tests start (initdb + pg_ctl
# into a temporary directory, as the postgres system user when run as root).
set -euo pipefail
pkgs=(
  build-essential pkg-config libgtk-3-dev libwebkit2gtk-4.1-dev   # the window
  xvfb xauth imagemagick xdotool                                  # desktop smoke test
  chromium                                                        # dashboard e2e
  fonts-dejavu-core
  fonts-wqy-microhei                                              # CJK glyphs: the zh-CN dashboard, Chinese evidence
  postgresql                                                      # backend/postgres tests
  sqlite3                                                         # e2e: another program holding the ledger's write lock
  dbus-daemon curl                                                # notifications: a private session bus (backend/notify tests, smoke)
  desktop-file-utils zip unzip file binutils                      # make package and its check
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then
    echo "deps: installing ${missing[*]}"
    bash -c "$cmd"
  elif command -v sudo >/dev/null; then
    echo "deps: installing ${missing[*]} (sudo)"
    sudo bash -c "$cmd"
  else
    echo "deps: missing ${missing[*]}; run as root:"
    echo "  $cmd"
    exit 1
  fi
fi
for tool in go npm; do
  command -v "$tool" >/dev/null || { echo "deps: $tool is not on PATH (quotagate needs Go ≥ 1.26 and Node 20 with npm)"; exit 1; }
done
