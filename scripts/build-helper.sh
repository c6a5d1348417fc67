#!/usr/bin/env bash
# Builds phonepilot's on-device helper: Java 7 sources compiled by the JDK
# against our own signature stubs of the android.* classes, then turned into
# dex by dx 1.11, which Debian ships inside libgradle-android-plugin-java.
# The build is deterministic; the committed dex is what this prints.
#
#   scripts/build-helper.sh [OUT.dex]     (default: device/adb/helper/phonepilot-helper.dex)
#
# Needs: javac/java (a JDK that still has --release 7, e.g. Debian's 17),
# guava (/usr/share/java/guava.jar, package libguava-java), and the dx jar:
# $PHONEPILOT_DX_JAR, or the installed package, or the package's .deb
# fetched with `apt-get download` and unpacked (no install) into a cache.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/device/adb/helper/phonepilot-helper.dex}"
java_dir="$root/device/adb/helper/java"

dx_jar="${PHONEPILOT_DX_JAR:-}"
if [ -z "$dx_jar" ]; then
	for j in /usr/share/java/com.android.tools.build.builder.jar "${XDG_CACHE_HOME:-$HOME/.cache}/phonepilot/dx/usr/share/java/com.android.tools.build.builder.jar"; do
		if [ -f "$j" ]; then dx_jar="$j"; break; fi
	done
fi
if [ -z "$dx_jar" ]; then
	cache="${XDG_CACHE_HOME:-$HOME/.cache}/phonepilot/dx"
	mkdir -p "$cache"
	(cd "$cache" && apt-get download -qq libgradle-android-plugin-java >/dev/null 2>&1 && dpkg -x libgradle-android-plugin-java_*.deb .)
	dx_jar="$cache/usr/share/java/com.android.tools.build.builder.jar"
	[ -f "$dx_jar" ] || { echo "build-helper: dx not found; apt-get download libgradle-android-plugin-java failed" >&2; exit 1; }
fi
guava=/usr/share/java/guava.jar
[ -f "$guava" ] || { echo "build-helper: $guava missing (apt-get install libguava-java)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/stubs" "$work/classes"
# The stubs are only compiled against, never dexed: on the phone the real framework answers.
find "$java_dir/stubs" -name '*.java' | LC_ALL=C sort >"$work/stubs.list"
javac -nowarn -Xlint:-options --release 7 -encoding UTF-8 -d "$work/stubs" @"$work/stubs.list"
find "$java_dir/src" -name '*.java' | LC_ALL=C sort >"$work/src.list"
javac -Xlint:-options --release 7 -encoding UTF-8 -g:source,lines -cp "$work/stubs" -d "$work/classes" @"$work/src.list"
(cd "$work/classes" && find . -name '*.class' | LC_ALL=C sort | sed 's|^\./||' >"$work/classes.list")
(cd "$work/classes" && java -cp "$dx_jar:$guava" com.android.dx.command.Main --dex --output="$work/helper.dex" $(cat "$work/classes.list"))
mkdir -p "$(dirname "$out")"
cp "$work/helper.dex" "$out"
echo "built $out ($(wc -c <"$out") bytes, sha256 $(sha256sum "$out" | cut -c1-16))"
