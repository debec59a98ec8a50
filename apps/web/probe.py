"""Drive ``play.py --web`` from a real headless browser: the test (tests/apps/test_web_viewer.py) and the measurement
(``python -m tools.experiments.web_viewer_bench``) share this.

The browser is Debian's ``chromium`` package (``/usr/bin/chromium``) rendering WebGL in software (SwiftShader),
driven by Playwright's Python package over its own protocol (Playwright's browser download is not needed).
Every wait has a time limit; the server is a child process in its own session, stopped with SIGINT (as Ctrl-C
would) and killed if it does not exit.
"""

from __future__ import annotations

import contextlib
import io
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

CHROMIUM = "/usr/bin/chromium"
"""Debian's chromium package (``apt-get install -y chromium``)."""
FLAGS = ("--no-sandbox", "--use-gl=swiftshader", "--enable-unsafe-swiftshader", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync")
"""Chromium flags that render WebGL on a machine without a GPU or display (Playwright adds ``--headless``)."""
VIEWPORT = {"width": 960, "height": 600}
"""Page size (a software renderer's frame time grows with it)."""
SCENE_CLIP = {"x": 200, "y": 160, "width": 400, "height": 400}
"""The part of the page between the notification corner and the control panel, around the followed robot."""
URL_LINE = re.compile(r"web viewer: (http://\S+)")


def browser_missing() -> str | None:
    """Why the browser test cannot run here (None: it can)."""
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} is absent (apt-get install -y chromium)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "the playwright package is absent (pip install -e '.[dev]')"
    return None


class Server:
    """``play.py ARGS --web`` as a child process; its output is collected line by line."""

    def __init__(self, args: list[str], cwd: Path):
        self.proc = subprocess.Popen([sys.executable, "play.py", *args, "--web"], cwd=cwd, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.lines: list[str] = []
        self._queue: queue.SimpleQueue[str] = queue.SimpleQueue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip())
            self._queue.put(line)

    def wait_url(self, timeout: float) -> tuple[str, float]:
        """The page's URL and ``time.perf_counter()`` when the server printed it."""
        end = time.perf_counter() + timeout
        while time.perf_counter() < end:
            try:
                line = self._queue.get(timeout=0.2)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            if m := URL_LINE.search(line):
                return m.group(1), time.perf_counter()
        raise AssertionError(f"no URL from play.py --web within {timeout} s; output: {self.output()}")

    def output(self) -> str:
        return "\n".join(self.lines[-30:])

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server so far (s)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def interrupt(self, timeout: float = 20.0) -> int:
        """Ctrl-C: SIGINT, then wait for the exit (killed after ``timeout`` s); returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                return self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                raise AssertionError(f"play.py --web did not exit {timeout} s after SIGINT") from None
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


@contextlib.contextmanager
def serving(args: list[str], cwd: Path) -> Iterator[Server]:
    server = Server(args, cwd)
    try:
        yield server
    finally:
        server.kill()


@contextlib.contextmanager
def page(timeout_ms: float = 30_000) -> Iterator[Any]:
    """A fresh page of a headless Chromium (closed on the way out)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(FLAGS), timeout=60_000)
        try:
            pg = browser.new_page(viewport=VIEWPORT)  # type: ignore[arg-type]
            pg.set_default_timeout(timeout_ms)
            yield pg
        finally:
            browser.close()


# ------------------------------------------------------------------------------------ reading the page
def followed_pixels(png: bytes) -> int:
    """Pixels of the followed robot's colour (orange: red well above green and blue) in a screenshot."""
    from PIL import Image

    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    return int(((r - b > 70) & (r - g > 30)).sum())


def scene_shot(pg: Any) -> bytes:
    return pg.screenshot(clip=SCENE_CLIP)


def wait_for(check: Callable[[], Any], timeout: float, what: str, every: float = 0.2) -> Any:
    """Poll ``check()`` until it returns a true value; AssertionError naming ``what`` after ``timeout`` s."""
    end = time.perf_counter() + timeout
    last: Any = None
    while time.perf_counter() < end:
        last = check()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")


def _label(pg: Any, label: str) -> Any:
    return pg.locator("label").filter(has_text=re.compile(f"^{re.escape(label)}$")).first


def field(pg: Any, label: str) -> Any:
    """The input of the control labelled ``label`` (a slider's number box, a number, a text, a dropdown)."""
    target = _label(pg, label).get_attribute("for")
    own = pg.locator(f"[id='{target}']")
    if own.count() and own.first.evaluate("e => e.tagName") == "INPUT":
        return own.first
    return pg.locator(f"xpath=//label[normalize-space()='{label}']/following::input[starts-with(@id,'mantine')][1]")


def number(pg: Any, label: str) -> float | None:
    """The value shown by the number field ``label`` (None while it is not a number)."""
    try:
        return float(field(pg, label).input_value())
    except ValueError:
        return None


def text(pg: Any, label: str) -> str:
    return str(field(pg, label).input_value())


def set_slider(pg: Any, label: str, value: float) -> None:
    """Type ``value`` into the slider's number box, as a user would."""
    box = field(pg, label)
    box.fill(str(value))
    box.press("Enter")


def toggle(pg: Any, label: str) -> None:
    _label(pg, label).click()


def choose(pg: Any, label: str, option: str) -> None:
    """Pick ``option`` in the dropdown ``label``."""
    field(pg, label).click()
    pg.get_by_role("option", name=option, exact=True).click()


def dismiss_notifications(pg: Any) -> None:
    """Close the toasts (the software-rendering warning sits over the scene's corner)."""
    pg.evaluate("() => document.querySelectorAll('.mantine-Notification-closeButton').forEach(b => b.click())")
