"""Every example in README.md and docs/*.md that shows output is run, and shows what runs.

The marker convention is described in doc_examples.py. All commands run at once, in
parallel, when the first example needs them; each example is then one test.
`python -m pytest tests/docs --update-docs` rewrites the blocks that differ.
"""

from __future__ import annotations

import doctest
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import pytest

from doc_examples import REPO, examples_in, matches, normalise, pages, rewrite, select, updated

EXAMPLES = [example for page in pages() for example in examples_in(page)]
RUN = [example for example in EXAMPLES if example.kind == "run"]
DOCTESTS = [example for example in EXAMPLES if example.kind == "doctest"]
LINKED = ("examples", "tests", "scripts", "benchmarks", "src")
PARALLEL = 4
DEFAULT_TIMEOUT_S = 300


def _scratch_for(page: str, root: str) -> str:
    """A folder per page: the repository's folders linked in, the page's `file=` blocks written."""
    folder = os.path.join(root, page.replace("/", "_"))
    os.makedirs(folder, exist_ok=True)
    for name in LINKED:
        os.symlink(os.path.join(REPO, name), os.path.join(folder, name))
    for example in examples_in(page):
        if example.kind == "file":
            with open(os.path.join(folder, example.options["file"]), "w", encoding="utf-8") as stream:
                stream.write("\n".join(example.lines) + "\n")
    return folder


def _environment() -> dict:
    environment = dict(os.environ)
    environment["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), environment.get("PATH", "")])
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(REPO, "src"),
                                                              environment.get("PYTHONPATH")]))
    environment.pop("AUTOGRAD_DOCTOR_DEBUG", None)  # the tests' conftest sets it; users do not
    environment.update(COLUMNS="80", PYTHONHASHSEED="0", OMP_NUM_THREADS="1", NO_COLOR="1")
    return environment


def _run(command: str, cwd: str, timeout: float) -> str:
    try:
        result = subprocess.run(command, shell=True, cwd=cwd, env=_environment(), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, text=True)
    except subprocess.TimeoutExpired as expired:
        return f"(timed out after {timeout:.0f} s)\n{expired.output or ''}"
    return result.stdout


@pytest.fixture(scope="session")
def outputs(request):
    """{(cwd, command): output} for every command the examples show, run in parallel."""
    root = tempfile.mkdtemp(prefix="autograd-doctor-docs-")
    folders = {page: _scratch_for(page, root) for page in pages()}
    selected = [item.callspec.params["example"] for item in request.session.items
                if getattr(item, "callspec", None) is not None and "example" in item.callspec.params]
    jobs, serial = {}, set()
    for example in [example for example in RUN if example in selected]:  # only what `-k` selected
        cwd = os.path.join(REPO, example.options["cwd"]) if example.options.get("cwd") else folders[example.page]
        jobs[(cwd, example.command)] = float(example.options.get("timeout", DEFAULT_TIMEOUT_S))
        if example.options.get("serial"):
            serial.add((cwd, example.command))
    # `serial`: output that depends on the time taken (a re-run bounded by the first run's
    # time) runs first, alone, not next to the other examples.
    results = {key: _run(key[1], key[0], jobs[key]) for key in serial}
    with ThreadPoolExecutor(PARALLEL) as pool:
        futures = {key: pool.submit(_run, key[1], key[0], timeout) for key, timeout in jobs.items() if key not in serial}
        results.update({key: future.result() for key, future in futures.items()})
    results["roots"] = (root, REPO, *folders.values())
    replacements: dict[str, dict[int, list[str]]] = {}
    results["replacements"] = replacements
    yield results
    for page, blocks in replacements.items():
        rewrite(page, blocks)


def _update_requested(config) -> bool:
    return bool(config.getoption("--update-docs", default=False) or os.environ.get("AUTOGRAD_DOCTOR_UPDATE_DOCS"))


@pytest.mark.parametrize("example", RUN, ids=[example.id for example in RUN])
def test_example_output_is_what_runs(example, outputs, request):
    cwd = os.path.join(REPO, example.options["cwd"]) if example.options.get("cwd") else None
    key = next(k for k in outputs if isinstance(k, tuple) and k[1] == example.command
               and (cwd is None or k[0] == cwd))
    roots = outputs["roots"]
    actual = select(normalise(outputs[key], roots), example.options)
    expected = normalise("\n".join(example.shown), roots).split("\n")
    if matches(expected, actual):
        return
    if _update_requested(request.config):
        outputs["replacements"].setdefault(example.page, {})[example.line] = updated(example.shown, actual)
        return
    diff = "\n".join(__import__("difflib").unified_diff(expected, actual, "in the docs", "what runs", lineterm=""))
    pytest.fail(f"{example.id}: `{example.command}` prints something else "
                f"(python -m pytest tests/docs --update-docs rewrites it):\n{diff}", pytrace=False)


@pytest.mark.parametrize("example", DOCTESTS, ids=[example.id for example in DOCTESTS])
def test_doctest_session_runs_as_shown(example):
    text = "\n".join(example.lines)
    globs: dict = {}
    exec(example.options.get("setup", ""), globs)  # noqa: S102 - the page's own setup code
    test = doctest.DocTestParser().get_doctest(text, globs, example.id, example.page, example.line)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_every_block_that_can_show_output_is_marked():
    """A block without a marker would not be checked: each says run, doctest, input or skip."""
    unmarked = [example.id for example in EXAMPLES if example.needs_a_marker() and example.kind == "unmarked"]
    assert not unmarked, f"blocks without a <!-- doc-test: ... --> marker: {unmarked}"
    for example in EXAMPLES:
        if example.kind == "skip":
            assert isinstance(example.options["skip"], str) and example.options["skip"], example.id


def test_the_examples_cover_every_page_with_output():
    assert {example.page for example in RUN} >= {"README.md", "docs/integrations.md", "docs/errors.md",
                                                  "docs/lint.md"}
    assert {example.page for example in DOCTESTS} >= {"README.md", "docs/copy-semantics.md"}
