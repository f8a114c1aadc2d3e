#!/usr/bin/env bash
# A throwaway PostgreSQL server for the Postgres CDC tests (issue 16).
#
#   scripts/postgres.sh start DIR   install the server from Debian's packages if it is missing,
#                                   create a cluster in DIR (wal_level = logical, a password
#                                   user), start it on 127.0.0.1 and print the connection line
#                                   the tests read from DTEMPORAL_POSTGRES
#   scripts/postgres.sh stop DIR    stop it (DIR can then be removed)
#   scripts/postgres.sh installed   print the server's binary directory; exit 1 when the server
#                                   is not installed (the tests start their own server only then)
#
# The port is PGTEST_PORT (default 54329). The user is `dtemporal`, password `dtemporal`,
# database `postgres`; only TCP on 127.0.0.1 is listened on, with scram-sha-256 passwords.
# Run as root, the server runs as the `postgres` user (created if missing): it refuses root.
set -euo pipefail
cmd=${1:?usage: postgres.sh start|stop DIR, or postgres.sh installed}

# The server's binary directory: the newest Debian install, or the PATH's.
bindir() {
    local d
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
    done
    command -v pg_ctl >/dev/null && dirname "$(command -v pg_ctl)"
}

if [ "$cmd" = installed ]; then
    bindir
    exit
fi
dir=${2:?usage: postgres.sh start|stop DIR}
port=${PGTEST_PORT:-54329}

as_server=()
if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    as_server=(runuser -u postgres --)
fi

case "$cmd" in
start)
    bin=$(bindir || true)
    if [ -z "$bin" ]; then
        echo "postgres.sh: installing the PostgreSQL server (Debian's postgresql package)" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null && apt-get install -y -qq postgresql >/dev/null
        bin=$(bindir)
    fi
    mkdir -p "$dir"
    chmod 755 "$dir"
    if [ ${#as_server[@]} -gt 0 ]; then
        chown postgres "$dir"
        "${as_server[@]}" test -x "$dir" || {
            echo "postgres.sh: the postgres user cannot reach $dir (use a directory under /tmp)" >&2
            exit 1
        }
    fi
    echo dtemporal > "$dir/password"
    chmod 644 "$dir/password"
    "${as_server[@]}" "$bin/initdb" -D "$dir/data" -U dtemporal --pwfile="$dir/password" \
        --auth=scram-sha-256 -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    "${as_server[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o \
        "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c wal_level=logical -c max_replication_slots=32 -c max_wal_senders=32" \
        start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    echo "host=127.0.0.1 port=$port user=dtemporal password=dtemporal dbname=postgres"
    ;;
stop)
    bin=$(bindir)
    "${as_server[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null
    ;;
*)
    echo "usage: postgres.sh start|stop DIR, or postgres.sh installed" >&2
    exit 2
    ;;
esac
