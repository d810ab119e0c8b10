#!/usr/bin/env bash
# Make sure a Chromium browser is available for the web console's browser tests (tests/server/console).
#
# The tests drive Debian's chromium headless through Playwright (`executable_path`); a browser download at run
# time is never attempted.
#   - chromium found on PATH (or at PRIVNOISE_CHROMIUM)  -> nothing to do;
#   - otherwise, as root with apt-get                    -> install Debian's `chromium` package quietly;
#   - otherwise, or if installing fails                  -> print one line and exit 0: the browser tests skip,
#                                                           saying why.
# It never fails the build.
#
# Overrides:
#   PRIVNOISE_CHROMIUM          the browser's path                         (default: chromium on PATH)
#   PRIVNOISE_CHROMIUM_APT_LOG  where apt-get's output goes                (default a file under ${TMPDIR:-/tmp})

set -u

apt_log="${PRIVNOISE_CHROMIUM_APT_LOG:-${TMPDIR:-/tmp}/privnoise-ensure-chromium.log}"

unavailable() {
    echo "Chromium unavailable: $1; the console's browser tests will be skipped"
    exit 0
}

find_browser() {
    if [[ -n "${PRIVNOISE_CHROMIUM:-}" ]]; then
        [[ -x "$PRIVNOISE_CHROMIUM" ]] && echo "$PRIVNOISE_CHROMIUM" && return 0
        return 1
    fi
    command -v chromium 2>/dev/null
}

if browser="$(find_browser)"; then
    echo "Chromium found: $browser"
    exit 0
fi

[[ "$EUID" -eq 0 ]] || unavailable "chromium not found and not running as root, so cannot install with apt-get"
command -v apt-get >/dev/null 2>&1 || unavailable "chromium not found and apt-get is not available"

echo "Chromium not found; installing Debian's chromium package with apt-get (log: $apt_log)"
export DEBIAN_FRONTEND=noninteractive
apt_options=(-q -o Acquire::Retries=2 -o Acquire::http::Timeout=30 -o Dpkg::Use-Pty=0)
update_note=""
if ! apt-get "${apt_options[@]}" update >"$apt_log" 2>&1; then
    update_note="; apt-get update had failed: $(tail -n 1 "$apt_log" 2>/dev/null)"
fi
if ! apt-get "${apt_options[@]}" install -y --no-install-recommends chromium fonts-dejavu-core >>"$apt_log" 2>&1; then
    unavailable "apt-get install chromium failed ($(tail -n 1 "$apt_log" 2>/dev/null))$update_note"
fi
if browser="$(find_browser)"; then
    echo "Chromium installed: $browser"
    exit 0
fi
unavailable "the chromium package was installed but no chromium is on PATH"
