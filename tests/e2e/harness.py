"""Start the real app and a real Chromium for end-to-end tests.

Chromium comes from Debian (``/usr/bin/chromium``): ``playwright install``
cannot download browsers here. Without it the tests skip, unless
``BORDE_REQUIRE_BROWSER=1`` (CI) turns the skip into a failure.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "vet" / "examples"  # the vet photos the app ships
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str:
    """The browser to drive, or a skip (a failure in CI) with the reason."""
    path = os.environ.get("BORDE_CHROMIUM", "/usr/bin/chromium")
    found = path if Path(path).exists() else shutil.which("chromium")
    reason = None
    if not found:
        reason = f"Chromium not found at {path}: apt-get install -y chromium"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            reason = "the playwright package is missing: pip install -r requirements-dev.txt"
    if reason:
        if os.environ.get("BORDE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser test required (BORDE_REQUIRE_BROWSER=1) but {reason}")
        pytest.skip(reason)
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_app(env: dict[str, str] | None = None, timeout: float = 120) -> Iterator[str]:
    """``python app.py`` on a free port; yields its URL and stops it afterwards."""
    port = free_port()
    full_env = {
        **os.environ,
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        **(env or {}),
    }
    full_env.pop("SPACES_ZERO_GPU", None)
    url = f"http://127.0.0.1:{port}/"
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            [sys.executable, "app.py"], cwd=ROOT, env=full_env, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            _wait_until_up(proc, url, log, timeout)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def _wait_until_up(proc: subprocess.Popen, url: str, log, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"app exited early:\n{log.read().decode()[-3000:]}")
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"app did not answer on {url} in {timeout}s") from None
            time.sleep(0.5)


@contextlib.contextmanager
def browser(user_data_dir: Path, locale: str = "en-US",
            viewport: tuple[int, int] = (1280, 900)) -> Iterator[object]:
    """A headless Chromium with a fresh, empty profile, in ``locale`` at ``viewport``."""
    from playwright.sync_api import sync_playwright

    exe = chromium_path()
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(user_data_dir),
            executable_path=exe,
            headless=True,
            args=CHROMIUM_FLAGS,
            locale=locale,
            viewport={"width": viewport[0], "height": viewport[1]},
        )
        try:
            yield context
        finally:
            context.close()


def shots_dir(tmp_path: Path) -> Path:
    """Where screenshots go: ``BORDE_SHOTS`` to keep them for a person to look at."""
    keep = os.environ.get("BORDE_SHOTS")
    folder = Path(keep) if keep else tmp_path / "shots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def switch_language(page, name: str = "Español", tries: int = 4) -> None:
    """Gradio's own Settings -> Language, as a user does it.

    A click on the footer's Settings before the page is hydrated opens nothing (seen once
    on a busy machine: no Language box after 30 s), so a user's second click is made too.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    box = page.get_by_role("combobox", name=re.compile(r"^(Language|Idioma)$"))
    # the footer's own button, in either language (a label may say "settings" too)
    settings = page.locator("footer button",
                            has_text=re.compile(r"^\s*(Settings|Configuración)\s*$"))
    for attempt in range(tries):
        if not page.locator("[role=dialog]").first.is_visible():  # else it is opening
            settings.first.click()
        try:
            box.wait_for(timeout=10_000)
            break
        except PlaywrightTimeout:
            if attempt == tries - 1:
                raise
    box.click()
    page.get_by_role("option", name=name).click()
    page.locator("[role=dialog] button").first.click()  # the panel's close (x) button


def page_text(page) -> str:
    """What a reader sees: the visible text, the fields' values and their placeholders."""
    return page.evaluate("""() => {
        const parts = [document.body.innerText];
        for (const el of document.querySelectorAll('input, textarea')) {
            if (el.offsetParent === null) continue;
            if (el.value) parts.push(el.value);
            if (el.placeholder) parts.push(el.placeholder);
        }
        return parts.join('\\n');
    }""")


def build_in_tab(ctx, url: str, pdf: Path, upload_ms: int = 60_000, build_ms: int = 120_000):
    """Open the Archive tab, upload ``pdf``, build, and wait for the summary."""
    page = ctx.new_page()
    page.goto(url)
    page.get_by_role("tab", name="Archive → Dataset").click()
    page.locator("#archive-upload input[type=file]").set_input_files(str(pdf))
    page.get_by_label(pdf.name).first.wait_for(timeout=upload_ms)
    page.get_by_role("button", name="Build dataset").click()
    page.locator("#archive-status .borde-done").wait_for(timeout=build_ms)
    return page
