"""A headless Chromium driven over the DevTools protocol (a websocket, with the `websockets`
package the project already has): open a page, run JavaScript, press keys, take screenshots.
Only what the browser tests need; Debian's `chromium` package is the browser. One process
serves many tests, each in a browser context of its own."""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

BINARIES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
KEY_CODES = {"ArrowRight": 39, "ArrowLeft": 37, "ArrowUp": 38, "ArrowDown": 40, "Home": 36,
             "End": 35, "PageDown": 34, "PageUp": 33}


def find_chromium() -> str | None:
    for name in BINARIES:
        path = shutil.which(name)
        if path:
            return path
    return None


class Chromium:
    """One headless Chromium process; each :meth:`page` is a tab in a browser context of its
    own (cookies, storage and cache not shared), so tests can share the process (its start
    is the slow part) and still see a fresh browser each."""

    def __init__(self, binary: str, profile: Path, width: int = 1400, height: int = 1000) -> None:
        profile.mkdir(parents=True, exist_ok=True)
        self.width, self.height = width, height
        self.proc = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-dev-shm-usage", "--remote-debugging-port=0",
             "--disable-background-networking", f"--user-data-dir={profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            port_file = profile / "DevToolsActivePort"
            deadline = time.monotonic() + 60
            while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("chromium did not start its DevTools endpoint")
                time.sleep(0.05)
            self.port = int(port_file.read_text().split()[0])
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/version",
                                        timeout=10) as r:
                endpoint = json.load(r)["webSocketDebuggerUrl"]
            self._stack = contextlib.ExitStack()
            self.target = _Connection(
                self._stack.enter_context(connect(endpoint, max_size=None, open_timeout=10)))
        except BaseException:
            self._stop()
            raise

    def page(self) -> Browser:
        """A new tab in a new browser context (as a fresh incognito window)."""
        context = self.target.call("Target.createBrowserContext")["browserContextId"]
        target = self.target.call("Target.createTarget", url="about:blank",
                                  browserContextId=context)["targetId"]
        return Browser(self, f"ws://127.0.0.1:{self.port}/devtools/page/{target}", context)

    def close(self) -> None:
        try:
            self._stack.close()
        finally:
            self._stop()

    def _stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


class _Connection:
    """One DevTools websocket: calls by id; the events that come meanwhile are kept."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        ident = next(self._ids)
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=30))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)


class Browser:
    """One tab of a :class:`Chromium`, in its own browser context: open a page, run
    JavaScript, press keys, take screenshots."""

    def __init__(self, chromium: Chromium, endpoint: str, context: str) -> None:
        self.chromium, self.context = chromium, context
        self._stack = contextlib.ExitStack()
        self._connection = _Connection(self._stack.enter_context(
            connect(endpoint, max_size=None, open_timeout=10)))
        self.events = self._connection.events
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=chromium.width,
                  height=chromium.height, deviceScaleFactor=1, mobile=False)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        return self._connection.call(method, **params)

    def navigate(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + 30
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            assert time.monotonic() < deadline, f"{url} did not load"
            self.evaluate("1")  # reads the events that came meanwhile

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 15.0) -> Any:
        """``expression``'s value once it is true. An evaluation the page's navigation cut
        (a click that leaves the page: Chromium answers "Inspected target navigated or
        closed" when the old document goes while it runs) is asked again on the new page,
        not a failure: on a loaded machine the click's navigation took that long."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.evaluate(expression)
            except RuntimeError as exc:
                if "navigated or closed" not in str(exc) or time.monotonic() >= deadline:
                    raise
                value = None
            if value:
                return value
            assert time.monotonic() < deadline, f"never true: {expression}"
            time.sleep(0.05)

    def key(self, key: str) -> None:
        code = KEY_CODES[key]
        for kind in ("rawKeyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key=key, code=key,
                      windowsVirtualKeyCode=code, nativeVirtualKeyCode=code)

    def wait_event(self, method: str, timeout: float = 15.0) -> dict[str, Any]:
        """The parameters of the next ``method`` event (one seen already counts)."""
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if event.get("method") == method:
                    self.events.remove(event)
                    return event.get("params", {})
            assert time.monotonic() < deadline, f"no {method} event"
            self.evaluate("1")  # reads the events that came meanwhile
            time.sleep(0.05)

    def hold_requests(self, pattern: str) -> None:
        """Requests whose URL matches ``pattern`` (``*`` wildcards) wait until released
        (:meth:`release_request`): what the page shows meanwhile can be checked."""
        self.call("Fetch.enable", patterns=[{"urlPattern": pattern}])

    def release_request(self, request_id: str) -> None:
        self.call("Fetch.continueRequest", requestId=request_id)
        self.call("Fetch.disable")

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def console_errors(self) -> list[str]:
        return [str(e["params"]) for e in self.events
                if e.get("method") == "Runtime.exceptionThrown"
                or (e.get("method") == "Runtime.consoleAPICalled"
                    and e["params"].get("type") == "error")]

    def close(self) -> None:
        """The tab and its browser context go; the Chromium process stays."""
        try:
            self._stack.close()
        finally:
            self.chromium.target.call("Target.disposeBrowserContext",
                                      browserContextId=self.context)
