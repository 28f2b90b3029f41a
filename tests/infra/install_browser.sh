#!/usr/bin/env bash
# Debian's Chromium + ChromeDriver and a CJK font for the browser tests (Playwright drives /usr/bin/chromium;
# Playwright's own browser download cannot work offline; without a CJK font Chinese labels render as boxes).
# Idempotent; needs root (CI runs as root) only when something is missing.
set -euo pipefail
has_cjk_font() { command -v fc-list >/dev/null && [ -n "$(fc-list :lang=zh family 2>/dev/null)" ]; }
if [ -x /usr/bin/chromium ] && has_cjk_font; then exit 0; fi
if [ "$(id -u)" != "0" ]; then
  echo "install_browser.sh: chromium or a CJK font is missing and not root: run" \
       "'sudo apt-get install -y chromium chromium-driver fonts-wqy-zenhei'" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium chromium-driver fonts-wqy-zenhei fontconfig >/dev/null
fc-cache -f >/dev/null
