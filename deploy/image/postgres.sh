#!/bin/sh
# The Postgres of `npm run start:containers`: Debian's server on 127.0.0.1:$PGPORT with its data in $PGDATA (a
# volume), trusting its own host's loopback as the embedded one of `npm start` does, and a database $POSTGRES_DB.
set -eu
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  "$bin/initdb" --pgdata="$PGDATA" --username=postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  "$bin/pg_ctl" --pgdata="$PGDATA" --options="-c listen_addresses= -k /tmp" --wait --silent start
  "$bin/createdb" --host=/tmp --username=postgres "$POSTGRES_DB"
  "$bin/pg_ctl" --pgdata="$PGDATA" --wait --silent stop
fi
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses=127.0.0.1 -c unix_socket_directories=/tmp -p "$PGPORT"
