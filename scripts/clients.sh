#!/usr/bin/env bash
# Installs the real clients the end-to-end tests drive (the openai and
# @anthropic-ai SDKs, the Vercel AI SDK (ai + @ai-sdk/openai), LangChain
# (@langchain/openai + @langchain/core), Codex CLI, Claude Code, Gemini CLI
# and the Google Gen AI SDK (@google/genai): pinned in e2e/clients/) with
# `npm ci` into a cache outside the repo, only when the lock file changed, and
# prints that directory on stdout (progress goes to stderr). The native
# binaries of Codex and Claude Code come inside their npm packages (optional
# platform dependencies) and Gemini CLI is JavaScript, so nothing is downloaded at test time and both run
# offline. QUOTAGATE_CLIENTS_DIR overrides the cache directory.
set -euo pipefail
src="$(cd "$(dirname "$0")/../e2e/clients" && pwd)"
dir=${QUOTAGATE_CLIENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/quotagate/clients}
want=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)
stamp="$dir/.installed"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || [ ! -d "$dir/node_modules" ]; then
  echo "clients: npm ci into $dir" >&2
  mkdir -p "$dir"
  rm -f "$stamp"
  cp "$src/package.json" "$src/package-lock.json" "$dir/"
  npm --prefix "$dir" ci --no-audit --no-fund --loglevel=error >&2
  # Both CLIs must run from the cache alone; a broken native binary fails here
  # rather than as a confusing test failure.
  "$dir/node_modules/.bin/codex" --version >&2
  "$dir/node_modules/.bin/claude" --version >&2
  "$dir/node_modules/.bin/gemini" --version >&2
  # ai 7 and @langchain/openai 1.6 declare node >= 22 but run on Node 20:
  # loading them here fails the install, not a test, if that ever changes.
  NODE_PATH="$dir/node_modules" node -e 'require("ai"); require("@ai-sdk/openai"); require("@langchain/openai")' >&2
  echo "$want" >"$stamp"
fi
echo "$dir"
