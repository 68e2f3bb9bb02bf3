"""The headless Chromium the browser tests drive (Playwright), and how it is started.

``/usr/bin/chromium`` comes from Debian's package (``make setup`` installs it). The flags keep
it off this machine's closed network and let audio play without a user gesture, muted.
"""

from __future__ import annotations

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
    "--autoplay-policy=no-user-gesture-required", "--mute-audio",
]
