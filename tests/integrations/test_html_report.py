"""The HTML report: self-contained, escaped, and correct in a real headless Chromium."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from programs import BUGGY_PROGRAM, PYTHON, artifact_path, line_of

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)


def write_report(tmp_path, directory_name: str = "project") -> tuple[str, str]:
    directory = tmp_path / directory_name
    directory.mkdir()
    script = directory / "buggy.py"
    script.write_text(BUGGY_PROGRAM)
    report = tmp_path / "report.html"
    result = subprocess.run([PYTHON, "-m", "autograd_doctor", "run", "--html", str(report), str(script)],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "HTML report written to" in result.stderr
    return str(report), report.read_text(encoding="utf-8")


def test_report_is_one_self_contained_file(tmp_path):
    _, page = write_report(tmp_path)
    assert page.startswith("<!DOCTYPE html>")
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "<script" not in page
    write = line_of(BUGGY_PROGRAM, "WRITE")
    assert f'<tr class="primary" data-line="{write}"' in page
    assert f'data-line="{line_of(BUGGY_PROGRAM, "SAVE")}" data-role="saved"' in page
    assert 'data-code="AD101"' in page and "help:" in page
    assert "<svg" in page or '<pre class="dot">' in page


def test_user_text_is_escaped(tmp_path):
    odd = 'odd "dir" <b>bold & \\x'
    _, page = write_report(tmp_path, odd)
    assert "<b>bold" not in page
    assert html.escape(odd, quote=True) in page


def test_without_graphviz_the_graph_is_dot_text(tmp_path):
    from autograd_doctor.report import html as html_report

    import torch
    import autograd_doctor

    x = torch.randn(3, requires_grad=True)
    with autograd_doctor.watch():
        y = torch.sigmoid(x)
        y[0] = 1.0
        with pytest.raises(RuntimeError) as caught:
            y.sum().backward()
    diagnosis = autograd_doctor.diagnoses_of(caught.value)[0]
    old_path = os.environ["PATH"]
    os.environ["PATH"] = tempfile.gettempdir()
    os.environ["AUTOGRAD_DOCTOR_GRAPHVIZ"] = "dot"  # not the pygraphviz wheel either
    try:
        section = html_report.render_diagnosis_html(diagnosis)
    finally:
        os.environ["PATH"] = old_path
        del os.environ["AUTOGRAD_DOCTOR_GRAPHVIZ"]
    assert '<pre class="dot">digraph autograd_doctor' in section
    assert "No picture: Graphviz `dot` is not installed" in section


@pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                    reason="Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)")
def test_report_in_headless_chromium(tmp_path):
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    path, _ = write_report(tmp_path)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-quic", "--window-size=1200,1600", f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.set_page_load_timeout(60)
        driver.get("file://" + path)
        assert driver.title == "autograd-doctor report"
        primary = driver.find_element(By.CSS_SELECTOR, "tr.primary")
        assert primary.is_displayed()
        assert "scores[1] = 2.0" in primary.text
        assert primary.get_attribute("data-line") == str(line_of(BUGGY_PROGRAM, "WRITE"))
        mark = primary.find_element(By.CSS_SELECTOR, "mark.primary")
        assert mark.value_of_css_property("background-color") != "rgba(0, 0, 0, 0)"
        assert "error[AD101]" in driver.find_element(By.CSS_SELECTOR, "section.diagnosis h2").text
        if shutil.which("dot"):
            failing = [node for node in driver.find_elements(By.CSS_SELECTOR, "figure.graph svg g.node")
                       if "SigmoidBackward0" in node.text]
            assert failing and failing[0].is_displayed()
            stale = [node for node in driver.find_elements(By.CSS_SELECTOR, "figure.graph svg g.node")
                     if "STALE" in node.text]
            assert stale and stale[0].is_displayed()
            outline = stale[0].find_element(By.CSS_SELECTOR, "polygon")
            assert outline.get_attribute("stroke") == "#d62728"
        driver.save_screenshot(artifact_path("html-report.png"))
        errors = [entry for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
        assert errors == []
    finally:
        driver.quit()
