"""Extra report files of `autograd-doctor run`: `--graph PATH` and `--html PATH`.

One entry point, `write(kind, report, path, error)`, so the runner stays thin and a new
format is one more module plus one line here.
"""

from __future__ import annotations

import sys

from autograd_doctor.diagnosis.model import Diagnosis, Report


def _say(message: str) -> None:
    print(f"autograd-doctor: {message}", file=sys.stderr)


def diagnosis_to_draw(report: Report) -> Diagnosis | None:
    """The diagnosis the picture shows: the first with a graph snapshot, else the first.

    Example::

        >>> diagnosis_to_draw(Report()) is None
        True
    """
    for diagnosis in report.diagnoses:
        if diagnosis.graph_data is not None:
            return diagnosis
    return report.diagnoses[0] if report.diagnoses else None


def write_graph(report: Report, path: str) -> str | None:
    """Write the picture of the failure to `path` (.svg/.png/.pdf via Graphviz, else DOT).

    Returns the path written, or None when there was nothing to draw. Without Graphviz,
    `out.svg` becomes `out.dot` and a one-line message says so.

    Example::

        >>> write_graph(Report(), "/tmp/unused.svg") is None
        True
    """
    from autograd_doctor.report.render import GraphvizMissing, RenderFailed

    diagnosis = diagnosis_to_draw(report)
    if diagnosis is None:
        _say(f"no autograd problem to draw; {path} not written")
        return None
    picture = diagnosis.graph()
    try:
        written = picture.save(path)
    except (GraphvizMissing, RenderFailed) as problem:
        written = getattr(problem, "written", None)
        _say(f"{problem}, so no {path}; wrote the DOT text to {written} instead")
        return written
    _say(f"graph of the failure written to {written}")
    return written


def write(kind: str, report: Report, path: str, error: BaseException | None = None) -> str | None:
    """Write one extra output of `autograd-doctor run`: kind is "graph" or "html".

    Example::

        >>> write("graph", Report(), "/tmp/unused.dot") is None
        True
    """
    if kind == "graph":
        return write_graph(report, path)
    if kind == "html":
        from autograd_doctor.report.html import write_html

        write_html(report, path)
        _say(f"HTML report written to {path}")
        return path
    raise ValueError(f"unknown output kind {kind!r} (expected 'graph' or 'html')")


__all__ = ["write", "write_graph", "diagnosis_to_draw"]
