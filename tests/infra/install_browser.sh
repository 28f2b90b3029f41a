#!/usr/bin/env bash
# Debian's Chromium + ChromeDriver for the chat-page browser test (Playwright drives /usr/bin/chromium;
# Playwright's own browser download cannot work offline). Idempotent; needs root (CI runs as root).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" != "0" ]; then
  echo "install_browser.sh: /usr/bin/chromium missing and not root: run 'sudo apt-get install -y chromium chromium-driver'" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium chromium-driver >/dev/null
