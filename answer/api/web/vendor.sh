#!/usr/bin/env bash
# Vendor Vega, Vega-Lite and vega-embed (pinned in package-lock.json) into the chat page's static folder:
# the page loads them from /vendor/, never from a CDN. Idempotent; run by `make install` and the browser test.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
out=../static/vendor
mkdir -p "$out"
cp node_modules/vega/build/vega.min.js "$out/vega.min.js"
cp node_modules/vega-lite/build/vega-lite.min.js "$out/vega-lite.min.js"
cp node_modules/vega-embed/build/vega-embed.min.js "$out/vega-embed.min.js"
version() { node -p "JSON.parse(require('fs').readFileSync('node_modules/$1/package.json','utf8')).version"; }
echo "vendored vega $(version vega), vega-lite $(version vega-lite), vega-embed $(version vega-embed) into answer/api/static/vendor/"
