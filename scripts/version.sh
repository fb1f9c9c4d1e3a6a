#!/usr/bin/env bash
# Prints quotagate's version from `git describe`, as one string that is valid
# semver and a valid Debian version, so --version, the window's header, the
# .deb, the tarball and the Windows resource all say the same thing:
#   on tag v1.2.3          → 1.2.3
#   4 commits after it     → 1.2.3+4.gabc1234
#   no tag yet             → 0.0.0+209.gabc1234   (209 commits in all)
#   uncommitted changes    → ….dirty
set -euo pipefail
cd "$(dirname "$0")/.."
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "0.0.0+unknown"; exit 0
fi
dirty=""
git diff --quiet HEAD -- 2>/dev/null || dirty="dirty"
if d=$(git describe --tags --long --match 'v[0-9]*' 2>/dev/null); then
  # v1.2.3-4-gabc1234
  base=${d%-*-g*}; rest=${d#"$base"-}; n=${rest%%-*}; hash=${rest#*-}
  base=${base#v}
  if [ "$n" = 0 ]; then v=$base; meta=""; else v=$base; meta="$n.$hash"; fi
else
  v=0.0.0; meta="$(git rev-list --count HEAD).g$(git rev-parse --short=7 HEAD)"
fi
[ -n "$dirty" ] && meta=${meta:+$meta.}$dirty
echo "$v${meta:++$meta}"
