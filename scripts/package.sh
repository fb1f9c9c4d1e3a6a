#!/usr/bin/env bash
# `make package`: the three artifacts a user installs, into build/package/:
#   quotagate_<version>_amd64.deb           (dpkg-deb; binaries, menu entry, icons, man page)
#   quotagate-<version>-linux-amd64.tar.gz  (binaries, desktop file, icon, man page, README)
#   quotagate-<version>-windows-amd64.zip   (cross-built GUI .exe with icon and version resource, README)
# The Linux binaries are build/bin/quotagate from `make build` and the
# headless build beside it, quotagate-headless, which the first hands
# `serve` to (the window's libraries cost a headless gateway ~50 MB of RSS);
# both must report the version this script packages, so a stale binary is
# never shipped.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${VERSION:-$(scripts/version.sh)}
out=build/package
bin=build/bin/quotagate
stage=$(mktemp -d)
trap 'rm -rf "$stage" rsrc_windows_amd64.syso' EXIT

for b in "$bin" "$bin-headless"; do
  got=$("$b" --version 2>/dev/null || true)
  [ "$got" = "quotagate $version" ] || {
    echo "package: $b says '${got:-nothing}', want 'quotagate $version' (run make build)"; exit 1; }
done
rm -rf "$out" && mkdir -p "$out"

# The README links its reference pages under docs/; ship them beside it.
install_docs() {
  for f in docs/*.md docs/*.png; do install -Dm644 "$f" "$1/$f"; done
}

# --- .deb -------------------------------------------------------------------
deb=$stage/deb
install -Dm755 "$bin" "$deb/usr/bin/quotagate"
install -Dm755 "$bin-headless" "$deb/usr/bin/quotagate-headless"
install -Dm644 build/linux/quotagate.desktop "$deb/usr/share/applications/quotagate.desktop"
for size in 16 32 48 64 128 256 512; do
  dir=$deb/usr/share/icons/hicolor/${size}x${size}/apps
  mkdir -p "$dir"
  /usr/bin/convert build/appicon.png -resize "${size}x${size}" "PNG32:$dir/quotagate.png"
done
install -Dm644 build/linux/quotagate.1 "$deb/usr/share/man/man1/quotagate.1"
gzip -9n "$deb/usr/share/man/man1/quotagate.1"
install -Dm644 README.md "$deb/usr/share/doc/quotagate/README.md"
install_docs "$deb/usr/share/doc/quotagate"
printf 'quotagate\nCopyright: the quotagate authors\n' >"$deb/usr/share/doc/quotagate/copyright"
mkdir -p "$deb/DEBIAN"
cat >"$deb/DEBIAN/control" <<CONTROL
Package: quotagate
Version: $version
Architecture: amd64
Maintainer: quotagate authors <quotagate@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$deb" | cut -f1)
Depends: libc6, libgtk-3-0 | libgtk-3-0t64, libwebkit2gtk-4.1-0
Section: devel
Priority: optional
Homepage: http://127.0.0.1:8787/
Description: local LLM gateway with budgets, holds and quota guards
 quotagate runs a gateway on 127.0.0.1:8787 for OpenAI chat completions,
 the OpenAI Responses API and the Anthropic Messages API. Every call is
 admitted against a tenant's budget, relayed, and settled on trusted usage
 or held until an operator reconciles it. A desktop window shows balances,
 holds, queues and the quota guard; "quotagate serve" runs headless.
CONTROL
dpkg-deb --root-owner-group -Zxz --build "$deb" "$out/quotagate_${version}_amd64.deb" >/dev/null

# --- Linux tarball ------------------------------------------------------------
tl=$stage/quotagate-$version-linux-amd64
install -Dm755 "$bin" "$tl/quotagate"
install -Dm755 "$bin-headless" "$tl/quotagate-headless"
install -Dm644 build/linux/quotagate.desktop "$tl/quotagate.desktop"
install -Dm644 build/appicon.png "$tl/quotagate.png"
install -Dm644 build/linux/quotagate.1 "$tl/quotagate.1"
install -Dm644 README.md "$tl/README.md"
install_docs "$tl"
tar -C "$stage" --owner=0 --group=0 -czf "$out/quotagate-$version-linux-amd64.tar.gz" "$(basename "$tl")"

# --- Windows zip ----------------------------------------------------------------
# Wails' Windows webview (WebView2) needs no cgo, so this cross-builds here.
go run ./build/windows/winres -version "$version" -icon build/appicon.png -out rsrc_windows_amd64.syso
tw=$stage/quotagate-$version-windows-amd64
mkdir -p "$tw"
GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go build -tags desktop,production \
  -ldflags "-w -s -H windowsgui -X main.version=$version" -o "$tw/quotagate.exe" .
install -Dm644 README.md "$tw/README.md"
install_docs "$tw"
(cd "$stage" && zip -qr9 - "$(basename "$tw")") >"$out/quotagate-$version-windows-amd64.zip"

ls -l "$out"
