"""Open an HTML file in headless chromium: a screenshot, or the DOM as chromium rendered it.

Debian's chromium (``apt-get install chromium``) at /usr/bin/chromium, or CHROMIUM=<path>.
Each run gets a profile directory of its own, so runs neither share state nor wait on a lock
another chromium holds.
"""

import os
import shutil
import subprocess
import tempfile

DEFAULT_CHROMIUM = "/usr/bin/chromium"
# A cold start of chromium on a busy CI machine takes seconds; a minute means it hangs.
TIMEOUT_SECONDS = 60
# --no-sandbox: CI containers run as root, where chromium's sandbox refuses to start.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         "--no-default-browser-check", "--disable-extensions", "--mute-audio"]


class BrowserError(RuntimeError):
    pass


def chromium_path():
    """The chromium executable, or None when it is not installed."""
    wanted = os.environ.get("CHROMIUM") or DEFAULT_CHROMIUM
    if os.path.isfile(wanted) and os.access(wanted, os.X_OK):
        return wanted
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _file_url(html_path):
    path = os.path.abspath(html_path)
    if not os.path.isfile(path):
        raise BrowserError("no HTML file at %s" % path)
    return "file://" + path


def _run_chromium(arguments):
    executable = chromium_path()
    if executable is None:
        raise BrowserError("chromium is not installed (looked for %s and chromium on PATH): "
                           "apt-get install chromium, or set CHROMIUM=<path>"
                           % (os.environ.get("CHROMIUM") or DEFAULT_CHROMIUM))
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        command = [executable] + FLAGS + ["--user-data-dir=%s" % profile] + arguments
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=True)
        except subprocess.TimeoutExpired:
            raise BrowserError("chromium did not finish within %ds: %s" % (TIMEOUT_SECONDS, " ".join(command)))
        except subprocess.CalledProcessError as exc:
            raise BrowserError("chromium exited with %d: %s\n%s" % (exc.returncode, " ".join(command),
                                                                    exc.stderr[-2000:]))


def screenshot(html_path, png_path, width=1400, height=2400):
    """Save a ``width`` x ``height`` screenshot of ``html_path`` to ``png_path``; returns png_path.
    Chromium shoots the window, not the whole page: choose ``height`` to fit what must show."""
    png_path = os.path.abspath(png_path)
    parent = os.path.dirname(png_path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    if os.path.exists(png_path):
        os.remove(png_path)     # so a stale file never passes for a new screenshot
    _run_chromium(["--screenshot=%s" % png_path, "--window-size=%d,%d" % (width, height), _file_url(html_path)])
    if not os.path.isfile(png_path) or os.path.getsize(png_path) == 0:
        raise BrowserError("chromium exited without writing %s" % png_path)
    return png_path


def dump_dom(html_path):
    """The DOM chromium built from ``html_path``, serialised as HTML text."""
    return _run_chromium(["--dump-dom", _file_url(html_path)]).stdout
