#!/usr/bin/env bash
# Make sure PostgreSQL's server binaries (initdb, pg_ctl, postgres) are available for the test suite.
#
# The tests run their own throwaway cluster (tests/server/_postgres.py); this script only provides the binaries.
#   - found on PATH or in /usr/lib/postgresql/*/bin  -> nothing to do;
#   - otherwise, as root with apt-get                -> install Debian's `postgresql` package quietly, without
#                                                       starting its service;
#   - otherwise, or if installing fails              -> print one line and exit 0: the PostgreSQL tests skip.
# It never fails the build.
#
# Only shell builtins are used until apt-get is invoked, so the script also behaves with an empty PATH.
# Overrides (used by tests/server/test_postgres_harness.py):
#   PRIVNOISE_PG_BINDIRS       glob of version directories to search   (default /usr/lib/postgresql/*/bin)
#   PRIVNOISE_PG_POLICY_RC_D   policy-rc.d used to keep the service down (default /usr/sbin/policy-rc.d)
#   PRIVNOISE_PG_APT_LOG       where apt-get's output goes              (default a file under ${TMPDIR:-/tmp})

set -u

bindirs_glob="${PRIVNOISE_PG_BINDIRS:-/usr/lib/postgresql/*/bin}"
policy_rc_d="${PRIVNOISE_PG_POLICY_RC_D:-/usr/sbin/policy-rc.d}"
apt_log="${PRIVNOISE_PG_APT_LOG:-${TMPDIR:-/tmp}/privnoise-ensure-postgres.log}"

unavailable() {
    echo "PostgreSQL unavailable: $1; PostgreSQL tests will be skipped"
    exit 0
}

# Prints the directory holding initdb, pg_ctl and postgres, or returns 1.
find_bindir() {
    local initdb dir
    if initdb="$(command -v initdb 2>/dev/null)" && command -v pg_ctl >/dev/null 2>&1; then
        echo "${initdb%/*}"
        return 0
    fi
    shopt -s nullglob
    # shellcheck disable=SC2206  # the glob is meant to expand
    local candidates=($bindirs_glob)
    shopt -u nullglob
    for dir in "${candidates[@]}"; do
        if [[ -x "$dir/initdb" && -x "$dir/pg_ctl" && -x "$dir/postgres" ]]; then
            echo "$dir"
            return 0
        fi
    done
    return 1
}

if bindir="$(find_bindir)"; then
    echo "PostgreSQL found in $bindir"
    exit 0
fi

[[ "$EUID" -eq 0 ]] || unavailable "initdb/pg_ctl not found and not running as root, so cannot install with apt-get"
command -v apt-get >/dev/null 2>&1 || unavailable "initdb/pg_ctl not found and apt-get is not available"

# Keep the package's service down while it is installed: its maintainer scripts ask invoke-rc.d, which obeys
# policy-rc.d (exit 101 = action forbidden). An existing policy-rc.d is left as it is.
created_policy=""
if [[ ! -e "$policy_rc_d" ]]; then
    if printf '#!/bin/sh\nexit 101\n' >"$policy_rc_d" 2>/dev/null; then
        created_policy="$policy_rc_d"
        chmod 0755 "$policy_rc_d" 2>/dev/null || true
    fi
fi
cleanup() {
    if [[ -n "$created_policy" ]]; then rm -f "$created_policy"; fi
}
trap cleanup EXIT

echo "PostgreSQL not found; installing Debian's postgresql package with apt-get (log: $apt_log)"
export DEBIAN_FRONTEND=noninteractive
apt_options=(-q -o Acquire::Retries=2 -o Acquire::http::Timeout=30 -o Dpkg::Use-Pty=0)

last_log_line() {
    local line="" last=""
    if [[ -r "$apt_log" ]]; then
        while IFS= read -r line || [[ -n "$line" ]]; do
            [[ -n "$line" ]] && last="$line"
        done <"$apt_log"
    fi
    echo "${last:-no output}"
}

update_note=""
if ! apt-get "${apt_options[@]}" update >"$apt_log" 2>&1; then
    # Stale package lists may still do; the failure is reported if the install fails too.
    update_note="; apt-get update had failed: $(last_log_line)"
fi
if ! apt-get "${apt_options[@]}" install -y --no-install-recommends postgresql >>"$apt_log" 2>&1; then
    # A maintainer script may fail (for instance creating Debian's default cluster) after the binaries are
    # unpacked; the tests need only the binaries.
    if bindir="$(find_bindir)"; then
        echo "PostgreSQL installed in $bindir (apt-get reported an error, see $apt_log: $(last_log_line))"
        exit 0
    fi
    unavailable "apt-get install postgresql failed ($(last_log_line))$update_note"
fi

if bindir="$(find_bindir)"; then
    echo "PostgreSQL installed in $bindir"
    exit 0
fi
unavailable "the postgresql package was installed but no initdb/pg_ctl/postgres was found in $bindirs_glob"
