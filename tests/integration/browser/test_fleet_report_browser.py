"""The HTML fleet report in a real headless browser (Debian's chromium, driven over the DevTools protocol).

A three-night, three-host report made from real Harbor jobs (test_fleet_report.build_multi_night) is
opened from disk: no console errors or exceptions, no request other than the page's own file (it is
self-contained), and the task matrix and the pass@1 trend chart are on the page with a size. The
screenshot is kept; AISBENCH_WRITE_DOCS=1 copies it to docs/images/fleet-report.png.
"""

import base64
import json
import os
import shutil
import struct

import pytest
from headless_chromium import Chromium
from test_fleet_report import build_multi_night, report_dir  # report_dir is a fixture  # noqa: F401  # pylint: disable=unused-import

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
DOCS_SCREENSHOT = os.path.join(ROOT, "docs", "images", "fleet-report.png")

PAGE_CHECKS = r"""
(() => {
  const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect(); return {w: r.width, h: r.height}; };
  const matrix = document.querySelector("table.fleet-matrix");
  const trend = document.querySelector("svg.trend-chart");
  return JSON.stringify({
    title: document.title,
    matrices: document.querySelectorAll("table.fleet-matrix").length,
    matrixCells: document.querySelectorAll("table.fleet-matrix td.cell").length,
    errorCells: Array.from(document.querySelectorAll("table.fleet-matrix td.cell.error")).map(td => td.textContent),
    matrixBox: box(matrix),
    trendCharts: document.querySelectorAll("svg.trend-chart").length,
    trendLines: document.querySelectorAll("svg.trend-chart polyline.trend-line").length,
    trendBox: box(trend),
    trendColour: trend ? getComputedStyle(trend.querySelector("polyline.trend-line")).stroke : null,
    taskChanges: Array.from(document.querySelectorAll("table.task-changes td")).map(td => td.textContent),
    scripts: document.scripts.length,
    images: document.images.length,
    stylesheets: Array.from(document.styleSheets).filter(s => s.href).length,
  });
})()
"""


def _png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


# Skipped without chromium, as README says; in CI (CI=true) that skip fails (tests/ci_skip_policy.py).
@pytest.mark.skipif(shutil.which("chromium") is None,
                    reason="no chromium here (Debian package chromium; tests/host/prepare.sh installs it)")
def test_report_in_headless_chromium(capsys, report_dir, tmp_path):  # noqa: F811
    result = build_multi_night(capsys, report_dir)
    page_url = "file://" + result["files"]["html"]
    browser = Chromium()
    try:
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.call(domain + ".enable")
        browser.call("Emulation.setDeviceMetricsOverride", width=1280, height=1800, deviceScaleFactor=1, mobile=False)
        browser.call("Page.navigate", url=page_url)
        browser.wait_for("Page.loadEventFired")
        checks = json.loads(browser.call("Runtime.evaluate", expression=PAGE_CHECKS, returnByValue=True)["result"]["value"])
        shot = base64.b64decode(browser.call("Page.captureScreenshot", format="png")["data"])
        events = list(browser.events)
    finally:
        browser.close()

    problems = [e for e in events if e.get("method") == "Runtime.exceptionThrown"
                or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert"))
                or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]
    assert problems == []
    requests = [e["params"]["request"]["url"] for e in events if e.get("method") == "Network.requestWillBeSent"]
    assert requests == [page_url]        # self-contained: nothing but the page itself is loaded
    assert checks["title"] == "Fleet report 2026-12-01"
    assert (checks["scripts"], checks["images"], checks["stylesheets"]) == (0, 0, 0)
    # The fleet task matrix: one table per benchmark, visible, with the errored trial's exception type.
    assert checks["matrices"] == 6 and checks["matrixCells"] >= 15
    assert checks["matrixBox"]["w"] > 100 and checks["matrixBox"]["h"] > 20
    assert "error: RewardFileNotFoundError" in checks["errorCells"]
    # The pass@1 trend: one chart per (benchmark, agent, model) of the three nights (broken/oracle ran the first
    # two only), drawn with a line where there are two nights or more (slow/oracle ran tonight only: a dot).
    assert checks["trendCharts"] == len(result["fleet"]) + 1 and checks["trendLines"] == checks["trendCharts"] - 1
    assert checks["trendBox"] == {"w": 300, "h": 120}
    assert checks["trendColour"] == "rgb(31, 78, 121)"
    assert "failed on 2026-11-30, passed tonight" in checks["taskChanges"]
    assert _png_size(shot) == (1280, 1800)
    with open(str(tmp_path / "fleet-report.png"), "wb") as handle:
        handle.write(shot)
    if os.environ.get("AISBENCH_WRITE_DOCS") == "1":
        os.makedirs(os.path.dirname(DOCS_SCREENSHOT), exist_ok=True)
        shutil.copyfile(str(tmp_path / "fleet-report.png"), DOCS_SCREENSHOT)
    assert os.path.exists(DOCS_SCREENSHOT), "AISBENCH_WRITE_DOCS=1 pytest tests/integration/browser/test_fleet_report_browser.py"


pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")
