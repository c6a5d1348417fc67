#!/usr/bin/env bash
# Runs every test phonepilot has, on a fresh Debian machine as on a developer's:
# installs what the integration suites need (adb, PostgreSQL, Chromium, CJK fonts,
# node and npm for the TypeScript MCP client, a JDK, dexdump and enjarify for the
# on-device helper),
# starts a throwaway PostgreSQL, then go vet and go test with the integration
# suites switched from "skip when a tool is missing" to "fail".
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v adb >/dev/null 2>&1 || need+=(adb)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ -x /usr/lib/postgresql/15/bin/initdb ] || need+=(postgresql)
[ -f /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc ] || need+=(fonts-noto-cjk)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
# The on-device helper's checks (device/adb/helper): a JDK with --release 7,
# guava for dx (dx itself comes from libgradle-android-plugin-java, which
# scripts/build-helper.sh downloads and unpacks without installing), ART's
# dex verifier, and enjarify to run the shipped dex on the JVM.
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
[ -f /usr/share/java/guava.jar ] || need+=(libguava-java)
command -v dexdump >/dev/null 2>&1 || need+=(dexdump)
command -v enjarify >/dev/null 2>&1 || need+=(enjarify)
if [ ${#need[@]} -gt 0 ]; then
	echo "installing: ${need[*]}"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO="sudo"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# A private PostgreSQL for the storage conformance suite; pg-start.sh prints the export line.
if [ -z "${PHONEPILOT_TEST_POSTGRES:-}" ]; then
	eval "$(./scripts/pg-start.sh)"
fi
export PHONEPILOT_TEST_POSTGRES

export PHONEPILOT_INTEGRATION=1
go vet ./...
go test -count=1 -timeout 30m "$@" ./...
