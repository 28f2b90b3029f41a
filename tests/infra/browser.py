"""Debian's Chromium for Playwright (its own browser download cannot work offline) and the vendored
Vega-Lite the pages load: shared by the browser tests and the README screenshot script."""

from __future__ import annotations

import subprocess
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
STATIC = Path(__file__).resolve().parents[2] / "answer" / "api" / "static"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def vendor() -> None:
    """Vendor Vega, Vega-Lite and vega-embed into the static folder when they are missing."""
    if not (STATIC / "vendor" / "vega-embed.min.js").exists():
        subprocess.run(["bash", str(STATIC.parent / "web" / "vendor.sh")], check=True, stdin=subprocess.DEVNULL)
