"""A real headless Chromium driven over the Chrome DevTools protocol (aiohttp's websocket client, which
MLflow already depends on): open a page, wait until its text shows what the test waits for, screenshot it.

`Chromium.start()` raises `BrowserUnavailable` with a one-line reason when /usr/bin/chromium is missing or
does not start (tests skip with it). The flags are the ones a root, offline container needs.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("RUNNER_CHROMIUM", "/usr/bin/chromium")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1920,1080", "--remote-debugging-port=0")  # fmt: skip


class BrowserUnavailable(RuntimeError):
    """Chromium is not installed or did not start; the message says why in one line."""


class Chromium:
    """One headless Chromium process with a fresh profile and one page (a CDP session over a websocket)."""

    def __init__(self) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="chromium-profile-"))
        self.process: subprocess.Popen | None = None
        self._loop = asyncio.new_event_loop()
        self._session: Any = None
        self._ws: Any = None
        self._ids = 0

    def start(self, timeout_s: float = 30.0) -> Chromium:
        """Start the browser and attach to its page."""
        if not Path(CHROMIUM).is_file():
            raise BrowserUnavailable(f"{CHROMIUM} is not installed (apt-get install -y chromium)")
        self.process = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout_s
        while not (port_file.is_file() and port_file.read_text().strip()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                err = (self.process.stderr.read().decode(errors="replace") if self.process.poll() is not None
                       else "no DevToolsActivePort within the timeout")  # fmt: skip
                self.close()
                raise BrowserUnavailable(f"chromium did not start: {err.strip().splitlines()[-1:] or err}")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        self._run(self._attach(port, deadline))
        self.send("Page.enable")
        self.send("Runtime.enable")
        return self

    async def _attach(self, port: int, deadline: float) -> None:
        import aiohttp

        self._session = aiohttp.ClientSession()
        while True:
            try:
                async with self._session.get(f"http://127.0.0.1:{port}/json/list") as response:
                    pages = [t for t in await response.json() if t.get("type") == "page"]
                if pages:
                    break
            except aiohttp.ClientError:
                pass
            if time.monotonic() > deadline:
                raise BrowserUnavailable("chromium started but shows no page to attach to")
            await asyncio.sleep(0.1)
        self._ws = await self._session.ws_connect(pages[0]["webSocketDebuggerUrl"], max_msg_size=0)

    def _run(self, coroutine: Any) -> Any:
        return self._loop.run_until_complete(coroutine)

    def send(self, method: str, **params: Any) -> dict:
        """One CDP command; its result (events that arrive meanwhile are dropped)."""
        self._ids += 1
        ident = self._ids

        async def call() -> dict:
            await self._ws.send_str(json.dumps({"id": ident, "method": method, "params": params}))
            while True:
                message = json.loads((await self._ws.receive()).data)
                if message.get("id") == ident:
                    if "error" in message:
                        raise RuntimeError(f"CDP {method}: {message['error']}")
                    return message.get("result", {})

        return self._run(asyncio.wait_for(call(), 60))

    def open(self, url: str) -> None:
        """Navigate the page to `url`."""
        self.send("Page.navigate", url=url)

    def text(self) -> str:
        """The page's visible text now."""
        result = self.send("Runtime.evaluate", expression="document.body ? document.body.innerText : ''")
        return result.get("result", {}).get("value", "")

    def wait_for(self, *needles: str, pattern: str = "", timeout_s: float = 90.0) -> str:
        """Wait until the page's text contains every one of `needles` (and matches the regex `pattern`);
        the text. AssertionError on timeout, naming what is missing and showing the text the page showed."""
        deadline = time.monotonic() + timeout_s
        while True:
            text = self.text()
            missing = [n for n in needles if n not in text] + (
                [pattern] if pattern and not re.search(pattern, text) else []
            )
            if not missing:
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"page never showed {missing}; it shows:\n{text[:3000]}")
            time.sleep(0.5)

    def click(self, label: str) -> bool:
        """Click the first button, link or tab whose visible text or aria-label is `label`; whether one was."""
        script = f"""(() => {{
            const want = {json.dumps(label)};
            const all = [...document.querySelectorAll('button, a, [role=tab], [role=button], [role=menuitem]')];
            const hit = all.find(e => (e.innerText || '').trim() === want || e.getAttribute('aria-label') === want);
            if (hit) hit.click();
            return !!hit;
        }})()"""
        return bool(self.send("Runtime.evaluate", expression=script).get("result", {}).get("value"))

    def screenshot(self, path: Path) -> Path:
        """Save a PNG of the page to `path`."""
        data = self.send("Page.captureScreenshot", format="png")["data"]
        Path(path).write_bytes(base64.b64decode(data))
        return Path(path)

    def close(self) -> None:
        """Stop the browser and remove its profile."""
        if self._ws is not None:
            self._run(self._ws.close())
        if self._session is not None:
            self._run(self._session.close())
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._loop.close()
        shutil.rmtree(self.profile, ignore_errors=True)
