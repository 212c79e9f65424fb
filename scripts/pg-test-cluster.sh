#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster on a free loopback port, as the unprivileged `postgres` user,
# and prints its URL. Usage: eval "$(scripts/pg-test-cluster.sh)"  (sets RXS_TEST_POSTGRES_URL).
# Stop it with: pg_ctl -D "$RXS_TEST_POSTGRES_DIR/data" stop
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$bin" ]; then
  echo "scripts/pg-test-cluster.sh: PostgreSQL is not installed (apt-get install postgresql)." >&2
  exit 1
fi
dir=$(mktemp -d /tmp/rxs-pg.XXXXXX)
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
as_pg() {
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$1"; else sh -c "$1"; fi
}
[ "$(id -u)" = 0 ] && chown postgres "$dir"
as_pg "'$bin/initdb' -D '$dir/data' -A trust -U postgres --no-sync -E UTF8 --locale=C.UTF-8 >'$dir/initdb.log' 2>&1"
as_pg "'$bin/pg_ctl' -D '$dir/data' -l '$dir/server.log' -w -o \"-p $port -k '$dir' -c listen_addresses=127.0.0.1 -c max_connections=200\" start >/dev/null"
echo "export RXS_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$port/postgres"
echo "export RXS_TEST_POSTGRES_DIR=$dir"
