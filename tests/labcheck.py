"""A chapter run in JupyterLab as a reader runs it: ``make lab`` started headless on a book's
folder, Chromium (Playwright, as the book's own check: ``srlib.book.browsercheck``) opening a
notebook, clearing it, running every cell through JupyterLab's own command, and reading back
what the page shows: each code cell's outputs (errors among them), the rendered markdown (MyST,
through jupyterlab-myst) and the progress bars drawn as widgets."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_READ = r"""() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = panel.content.widgets.map(cell => {
    const out = {type: cell.model.type, text: cell.node.innerText};
    if (cell.model.type === "code") {
      const outputs = [];
      for (let i = 0; i < cell.model.outputs.length; i++) {
        const o = cell.model.outputs.get(i);
        const json = o.toJSON();
        outputs.push({type: o.type, mime: Object.keys(json.data ?? {}),
                      html: json.data?.["text/html"] ?? "",
                      error: o.type === "error" ? `${json.ename}: ${json.evalue}` : ""});
      }
      out.count = cell.model.executionCount;
      out.outputs = outputs;
    }
    return out;
  });
  return {
    cells,
    kernel: panel.sessionContext.session?.kernel?.status ?? "none",
    busy: panel.content.widgets.some(c => c.model.type === "code" &&
      c.node.querySelector(".jp-InputArea-prompt")?.innerText.includes("*")),
    boxes: panel.node.querySelectorAll(
      ".jp-MarkdownCell .myst-admonition, .jp-MarkdownCell .myst-exercise").length,
    widgets: panel.node.querySelectorAll(".jp-OutputArea-output .jupyter-widgets").length,
    answers: Array.from(panel.node.querySelectorAll(
      ".jp-OutputArea-output.jp-RenderedMySTMarkdown, .jp-OutputArea-output.jp-RenderedMarkdown"))
      .map(n => n.innerText),
  };
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SETTINGS = {
    ("notebook-extension", "tracker"): {"windowingMode": "none"},
    ("docmanager-extension", "plugin"): {"autosave": False},
}
"""The test's JupyterLab settings, in a user-settings folder of its own (the reader's untouched):
every cell drawn, not only those scrolled into view, so the page can be read whole; and nothing
saved, so the book's executed notebook keeps the book's outputs."""


@contextlib.contextmanager
def lab(root: Path, log: Path):
    """``make lab`` serving ``root`` headless (the project's Makefile, kernel and settings); its
    base URL and token while it runs."""
    port, token = _free_port(), secrets.token_hex(8)
    settings = log.parent / "lab-user-settings"
    for (extension, plugin), values in SETTINGS.items():
        file = settings / "@jupyterlab" / extension / f"{plugin}.jupyterlab-settings"
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps(values))
    own = {"JUPYTERLAB_SETTINGS_DIR": str(settings),
           "JUPYTERLAB_WORKSPACES_DIR": str(log.parent / "lab-workspaces")}  # fmt: skip
    args = (
        f"--no-browser --port={port} --IdentityProvider.token={token} "
        "--LabApp.expose_app_in_browser=True"
    )
    with log.open("w") as out:
        server = subprocess.Popen(
            [
                "make",
                "-C",
                str(ROOT),
                "--no-print-directory",
                "-o",
                ".venv/.srlib-installed",
                "lab",
                f"LAB_DIR={root}",
                f"LAB_ARGS={args}",
            ],  # fmt: skip
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **own},
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("JupyterLab did not start:\n" + log.read_text()) from None
                time.sleep(0.5)
        yield base, token
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def run_all(
    base: str, token: str, notebook: str, executable: str, shot: Path, timeout: float = 300
) -> dict:
    """Open ``notebook`` (a path under the served root) in JupyterLab, clear its outputs, run
    every cell with JupyterLab's "Run All Cells", wait until each has run; what the page shows
    (``_READ``), the page's JavaScript errors, and the requests it made beyond the server
    (refused). A screenshot of the page goes to ``shot``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        tab = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        tab.on("pageerror", lambda e: errors.append(str(e)))
        outside: list[str] = []  # JupyterLab must not reach beyond this machine
        tab.route(
            lambda url: not url.startswith(base),
            lambda route: (outside.append(route.request.url), route.abort()),
        )
        tab.goto(f"{base}/lab/tree/{notebook}?token={token}")
        tab.wait_for_function(
            "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel"
            "?.status === 'idle'",
            timeout=120_000,
        )
        tab.evaluate(  # started, not awaited: the deadline below holds for a hung cell
            "async () => { const c = window.jupyterapp.commands;"
            " await c.execute('notebook:clear-all-cell-outputs');"
            " void c.execute('notebook:run-all-cells'); }"
        )
        deadline = time.monotonic() + timeout
        while True:
            state = tab.evaluate(_READ)
            code = [c for c in state["cells"] if c["type"] == "code"]
            done = all(c["count"] for c in code) and not state["busy"]
            if done and state["kernel"] == "idle":
                break
            if any(o["type"] == "error" for c in code for o in c["outputs"]):
                break  # "Run All" stops at an error
            if time.monotonic() > deadline:
                raise TimeoutError(f"{notebook} did not finish in JupyterLab within {timeout} s")
            time.sleep(1)
        tab.screenshot(path=str(shot))
        browser.close()
    state["page_errors"] = errors
    state["outside"] = outside
    return state
