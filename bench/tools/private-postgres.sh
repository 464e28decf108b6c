#!/bin/sh
# Runs a command against a PostgreSQL 15 cluster of its own, made for it and removed after
# it (also on Ctrl-C): the machine's cluster and its configuration stay as they are. The
# million-chunk memory benchmark needs a buffer cache that holds its HNSW index (about
# 1.1 GB at 1M chunks of 384 dimensions), which the machine's cluster (shared_buffers
# 128 MB) does not have; shared_buffers needs a restart, which would cut off everything
# else using that cluster. See bench/README.md, "A million chunks".
#   bench/tools/private-postgres.sh npm run bench -- --memory --chunks 1000000
# Settings: PRIVATE_PG_PORT (5433), PRIVATE_PG_SHARED_BUFFERS (4GB), PRIVATE_PG_MAX_WAL_SIZE (8GB).
set -eu
BIN=/usr/lib/postgresql/15/bin
PORT=${PRIVATE_PG_PORT:-5433}
DIR=$(mktemp -d /var/tmp/memsvc-private-pg.XXXXXX)
chown postgres:postgres "$DIR"
stop() {
  su postgres -c "$BIN/pg_ctl -D $DIR/data -m fast stop" >/dev/null 2>&1 || true
  rm -rf "$DIR"
}
trap stop EXIT INT TERM
su postgres -c "$BIN/initdb -D $DIR/data -A trust -U postgres" >/dev/null
# autovacuum off as on the machine's cluster (memsvc analyses and vacuums what it needs itself).
su postgres -c "$BIN/pg_ctl -D $DIR/data -l $DIR/log -w -o \"-p $PORT -k $DIR -c listen_addresses=127.0.0.1 \
  -c shared_buffers=${PRIVATE_PG_SHARED_BUFFERS:-4GB} -c max_wal_size=${PRIVATE_PG_MAX_WAL_SIZE:-8GB} \
  -c autovacuum=off -c max_connections=100\" start" >/dev/null
echo "private PostgreSQL on 127.0.0.1:$PORT ($DIR): shared_buffers ${PRIVATE_PG_SHARED_BUFFERS:-4GB}, max_wal_size ${PRIVATE_PG_MAX_WAL_SIZE:-8GB}"
MEMSVC_BENCH_POSTGRES_URL="postgres://postgres@127.0.0.1:$PORT/postgres" "$@"
