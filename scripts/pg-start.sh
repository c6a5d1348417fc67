#!/usr/bin/env bash
# pg-start.sh starts a throwaway PostgreSQL 15 cluster for the tests and
# prints, on stdout, the line that points them at it:
#
#   eval "$(scripts/pg-start.sh)"   # sets PHONEPILOT_TEST_POSTGRES
#   go test ./storage/postgres/ ./api/...
#
# It is idempotent: run again, it reuses the running cluster. The cluster
# lives in $PHONEPILOT_PG_DIR (default /tmp/phonepilot-pg), trusts local
# connections, listens on a free loopback port only, and is stopped with
#   scripts/pg-start.sh stop
# PostgreSQL refuses to run as root, so as root the server runs as the
# "postgres" user (runuser) in a directory that user owns.
set -euo pipefail

BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
DIR=${PHONEPILOT_PG_DIR:-/tmp/phonepilot-pg}
DATA=$DIR/data
DB=phonepilot_test

if [[ ! -x $BIN/pg_ctl ]]; then
	echo "pg-start: no PostgreSQL at $BIN (Debian: apt-get install postgresql-15, or set PG_BIN)" >&2
	exit 1
fi

as_pg() {
	if [[ $(id -u) == 0 ]]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

if [[ ${1:-} == stop ]]; then
	if [[ -d $DATA ]]; then as_pg "$BIN/pg_ctl" -D "$DATA" -m fast stop >&2 || true; fi
	exit 0
fi

mkdir -p "$DIR"
if [[ $(id -u) == 0 ]]; then chown postgres: "$DIR"; fi
chmod 700 "$DIR"

if [[ ! -f $DATA/PG_VERSION ]]; then
	as_pg "$BIN/initdb" -D "$DATA" --auth=trust --username=postgres --encoding=UTF8 --no-locale >"$DIR/initdb.log" 2>&1 ||
		{ cat "$DIR/initdb.log" >&2; exit 1; }
fi

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if ! as_pg "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
	port=${PHONEPILOT_PG_PORT:-}
	if [[ -z $port ]]; then
		for p in $(seq 55432 55532); do
			if port_free "$p"; then port=$p; break; fi
		done
	fi
	[[ -n $port ]] || { echo "pg-start: no free port in 55432..55532" >&2; exit 1; }
	echo "$port" >"$DIR/port"
	as_pg "$BIN/pg_ctl" -D "$DATA" -l "$DIR/server.log" -w -t 30 \
		-o "-p $port -k $DIR -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >&2 ||
		{ cat "$DIR/server.log" >&2; exit 1; }
fi
port=$(cat "$DIR/port")

for _ in $(seq 1 50); do
	if "$BIN/pg_isready" -q -h 127.0.0.1 -p "$port"; then break; fi
	sleep 0.2
done
if ! "$BIN/psql" -h 127.0.0.1 -p "$port" -U postgres -Atqc "SELECT 1 FROM pg_database WHERE datname='$DB'" postgres | grep -q 1; then
	"$BIN/createdb" -h 127.0.0.1 -p "$port" -U postgres "$DB" >&2
fi
echo "export PHONEPILOT_TEST_POSTGRES=postgres://postgres@127.0.0.1:$port/$DB?sslmode=disable"
