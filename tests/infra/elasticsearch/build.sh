#!/usr/bin/env bash
# Builds the Elasticsearch test launcher (target/classes + target/lib/*.jar).
# Idempotent: does nothing when target/ is up to date with pom.xml and the Java source.
# Needs: a JDK >= 17 and Maven 3 (`mvn`); downloads from Maven Central into ~/.m2 on first run.
set -euo pipefail
cd "$(dirname "$0")"

SRC=src/main/java/org/elasticsearch/node/CubesageEsLauncher.java
STAMP=target/.build-stamp
want="$(cat pom.xml "$SRC" build.sh | sha256sum | cut -d' ' -f1)"

if [[ "${1:-}" != "--force" && -f "$STAMP" && "$(cat "$STAMP")" == "$want" \
      && -f target/classes/org/elasticsearch/node/CubesageEsLauncher.class \
      && -f target/lib/elasticsearch-8.19.21.jar ]]; then
  exit 0
fi

if [[ -z "${JAVA_HOME:-}" ]]; then
  for j in /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64; do
    if [[ -x "$j/bin/javac" ]]; then export JAVA_HOME="$j"; break; fi
  done
fi

if ! command -v mvn >/dev/null 2>&1; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "mvn not found: installing Debian's maven" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 && apt-get install -y -qq maven >&2
  else
    echo "mvn (Maven 3) is required to build the Elasticsearch launcher" >&2
    exit 1
  fi
fi

rm -rf target/lib target/classes
mvn -B -q -Dstyle.color=never -DskipTests package >&2
echo "$want" > "$STAMP"
echo "built: $(ls target/lib | wc -l) jars in target/lib" >&2
