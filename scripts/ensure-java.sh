#!/usr/bin/env bash
# Make sure a Java runtime (17 or later) is available for the Spark tests (tests/spark) and the Spark guide.
#
# PySpark starts a JVM: `java` on PATH (or under JAVA_HOME) must be version 17 or later.
#   - a java of version >= 17 found                  -> nothing to do;
#   - otherwise, as root with apt-get                -> install Debian's `openjdk-17-jre-headless` quietly;
#   - otherwise, or if installing fails              -> print one line and exit 0: the Spark tests skip, saying why.
# It never fails the build.
#
# Overrides:
#   JAVA_HOME                  the Java installation to use             (default: java on PATH)
#   PRIVNOISE_JAVA_APT_LOG     where apt-get's output goes              (default a file under ${TMPDIR:-/tmp})

set -u

apt_log="${PRIVNOISE_JAVA_APT_LOG:-${TMPDIR:-/tmp}/privnoise-ensure-java.log}"
package="openjdk-17-jre-headless"

unavailable() {
    echo "Java 17 unavailable: $1; the Spark tests will be skipped"
    exit 0
}

find_java() {
    if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
        echo "$JAVA_HOME/bin/java"
        return 0
    fi
    command -v java 2>/dev/null
}

# The major version of a java binary: "17.0.15" -> 17, "1.8.0_392" -> 8.
major_version() {
    local version
    version="$("$1" -version 2>&1 | awk -F '"' '/version/ {print $2; exit}')"
    [[ -n "$version" ]] || return 1
    if [[ "$version" == 1.* ]]; then
        version="${version#1.}"
    fi
    echo "${version%%[.+_-]*}"
}

recent_java() {
    local java major
    java="$(find_java)" || return 1
    major="$(major_version "$java")" || return 1
    [[ "$major" =~ ^[0-9]+$ && "$major" -ge 17 ]] || return 1
    echo "$java (Java $major)"
}

if found="$(recent_java)"; then
    echo "Java found: $found"
    exit 0
fi

[[ "$EUID" -eq 0 ]] || unavailable "no java >= 17 found and not running as root, so cannot install with apt-get"
command -v apt-get >/dev/null 2>&1 || unavailable "no java >= 17 found and apt-get is not available"

echo "No java >= 17 found; installing Debian's $package with apt-get (log: $apt_log)"
export DEBIAN_FRONTEND=noninteractive
apt_options=(-q -o Acquire::Retries=2 -o Acquire::http::Timeout=30 -o Dpkg::Use-Pty=0)
update_note=""
if ! apt-get "${apt_options[@]}" update >"$apt_log" 2>&1; then
    update_note="; apt-get update had failed: $(tail -n 1 "$apt_log" 2>/dev/null)"
fi
# The package's post-installation script expects the manual pages' directory (absent from slim images).
mkdir -p /usr/share/man/man1
if ! apt-get "${apt_options[@]}" install -y --no-install-recommends "$package" >>"$apt_log" 2>&1; then
    unavailable "apt-get install $package failed ($(tail -n 1 "$apt_log" 2>/dev/null))$update_note"
fi
if found="$(recent_java)"; then
    echo "Java installed: $found"
    exit 0
fi
unavailable "the $package package was installed but no java >= 17 is on PATH"
