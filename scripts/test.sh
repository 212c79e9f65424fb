#!/usr/bin/env bash
# The README's test command (`npm test`): sets up what the tests need on this machine, as .ci/run
# does, then builds and runs every test. Missing Debian packages are installed when it can (root, or
# sudo without a password); when it cannot, it names them and stops before running anything.
# PostgreSQL: a throwaway cluster is started (and stopped at the end) unless RXS_TEST_POSTGRES_URL
# is set. Arguments go to vitest (`npm test -- packages/exchange`).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
# Packages of the web app's form editor (@carbon) start IBM's telemetry collector unless told not to.
export IBM_TELEMETRY_DISABLED=true

missing=$(bash scripts/test-needs.sh)
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then install=(); elif sudo -n true 2>/dev/null; then install=(sudo); else install=(none); fi
  if [ "${install[0]:-}" = none ]; then
    cat >&2 <<MESSAGE
npm test: these Debian packages are missing, and installing them needs root:
  $missing
Install them, then run npm test again:
  sudo apt-get update && sudo apt-get install --no-install-recommends $missing
Nothing was run.
MESSAGE
    exit 1
  fi
  echo "npm test: installing $missing" >&2
  "${install[@]}" apt-get update -qq
  # shellcheck disable=SC2086
  "${install[@]}" apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

[ -d node_modules/vitest ] || npm ci --no-audit --no-fund

if [ -z "${RXS_TEST_POSTGRES_URL:-}" ]; then
  eval "$(scripts/pg-test-cluster.sh)"
  stop_postgres() {
    local bin
    bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
    if [ "$(id -u)" = 0 ]; then
      su postgres -s /bin/sh -c "'$bin/pg_ctl' -D '$RXS_TEST_POSTGRES_DIR/data' stop -m fast" >/dev/null 2>&1 || true
    else
      "$bin/pg_ctl" -D "$RXS_TEST_POSTGRES_DIR/data" stop -m fast >/dev/null 2>&1 || true
    fi
    rm -rf "$RXS_TEST_POSTGRES_DIR"
  }
  trap stop_postgres EXIT
fi

npm run build
npx vitest run "$@"
