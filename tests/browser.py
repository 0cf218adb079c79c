"""Headless Chromium for the browser tests (Debian package ``chromium``; ``.ci/run``
installs it and sets ``MATHIR_BROWSER_TESTS=required``, so that there they fail rather
than skip when it is missing)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

#: flags that keep headless Chromium off the network and out of the user's profile
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


def chromium_or_skip() -> str:
    """The Chromium binary; skips (fails where MATHIR_BROWSER_TESTS=required, as in CI)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = ("Chromium is not installed (Debian package 'chromium'; .ci/run installs "
                   "it); the HTML structure is checked with lxml")
        if os.environ.get("MATHIR_BROWSER_TESTS") == "required":
            pytest.fail(message)
        pytest.skip(message)
    return found


def run_chromium(url: str, profile, screenshot=None, size: str = "1400,1000") -> str:
    """The DOM after the page's scripts ran (``--dump-dom``), and a screenshot, in one launch."""
    args = [chromium_or_skip(), *FLAGS, f"--user-data-dir={profile}", f"--window-size={size}",
            "--dump-dom"]
    if screenshot is not None:
        args.append(f"--screenshot={screenshot}")
    done = subprocess.run([*args, url], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
