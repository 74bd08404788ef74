"""A self-contained HTML report (`autograd-doctor run --html report.html`).

One file, no scripts and no network resources (a Content-Security-Policy says so to
the browser): the diagnoses, the source lines with the culprit and the other sites
marked, the help, and the picture of the graph inline as SVG (DOT text when Graphviz
is not installed). Every piece of user text goes through `html.escape`.
"""

from __future__ import annotations

import html
import os
import tempfile

from autograd_doctor.report.cell_names import shown_file, shown_line
from autograd_doctor.diagnosis.model import Diagnosis, Location, Report, help_message
from autograd_doctor.diagnosis.source import source_line

CONTEXT_LINES = 1

STYLE = """
body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1100px; color: #1f2328; padding: 0 1em; }
h1 { font-size: 1.4em; margin-bottom: .2em; }
.exception { font-family: ui-monospace, Menlo, Consolas, monospace; background: #f6f8fa;
             border-left: 4px solid #d62728; padding: .6em .8em; white-space: pre-wrap; }
.diagnosis { border: 1px solid #d0d7de; border-radius: 8px; padding: 1em 1.2em; margin: 1.5em 0; }
.diagnosis h2 { font-size: 1.1em; margin: 0 0 .4em 0; }
.severity-error .code { color: #d62728; }
.severity-warning .code { color: #b8860b; }
.where, .file { font-family: ui-monospace, Menlo, Consolas, monospace; color: #57606a; }
table.source { border-collapse: collapse; font-family: ui-monospace, Menlo, Consolas, monospace;
               font-size: 13px; margin: .4em 0 .8em 0; width: 100%; }
table.source td { padding: 1px 8px; vertical-align: top; white-space: pre; }
td.number { color: #8c959f; text-align: right; width: 3em; user-select: none; }
tr.primary td { background: #ffebe9; }
tr.primary td.number { color: #d62728; font-weight: bold; }
tr.related td { background: #fff8c5; }
tr.gap td { color: #8c959f; }
td.label { color: #57606a; font-style: italic; white-space: normal; }
tr.primary td.label { color: #d62728; }
mark.primary { background: #ffc1bc; }
mark.related { background: #f5e08a; }
ul.facts { list-style: none; padding-left: 0; }
ul.facts li { margin: .2em 0; }
.help { background: #eef9f0; border-left: 4px solid #2da44e; padding: .5em .8em; margin: .5em 0; }
.help pre { margin: .3em 0 0 0; }
figure.graph { margin: 1em 0 0 0; overflow-x: auto; }
figure.graph svg { max-width: 100%; height: auto; }
pre.dot { background: #f6f8fa; padding: .6em; overflow-x: auto; }
"""


def _e(text) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def _marked(text: str, location: Location, kind: str) -> str:
    """The line's text with the location's column range wrapped in <mark>."""
    start = max(0, location.column or 0)
    if location.end_line not in (None, location.line) or location.end_column is None:
        end = len(text.rstrip())
    else:
        end = max(location.end_column, start + 1)
    if start >= len(text):
        return _e(text)
    return f"{_e(text[:start])}<mark class=\"{kind}\">{_e(text[start:end])}</mark>{_e(text[end:])}"


def render_snippets(diagnosis: Diagnosis) -> str:
    """Source lines around each location of a diagnosis, per file, the sites marked.

    Example::

        >>> d = Diagnosis("AD101", "t", "error", Location("nofile.py", 3, source="y[1] = 2", note="modified"))
        >>> "y[1] = 2" in render_snippets(d)
        True
    """
    locations = [loc for loc in [diagnosis.primary, *diagnosis.related] if loc is not None]
    files: list[str] = []
    for location in locations:
        if location.file not in files:
            files.append(location.file)
    parts = []
    for file in files:
        here = [loc for loc in locations if loc.file == file]
        by_line: dict[int, list[Location]] = {}
        for location in here:
            by_line.setdefault(location.line, []).append(location)
        wanted: set[int] = set()
        for line in by_line:
            wanted.update(range(max(1, line - CONTEXT_LINES), line + CONTEXT_LINES + 1))
        rows = []
        previous = None
        for number in sorted(wanted):
            marks = by_line.get(number, [])
            text = source_line(file, number)
            if not text and marks:
                text = marks[0].source
            if not text and not marks:
                continue
            if previous is not None and number > previous + 1:
                rows.append('<tr class="gap"><td class="number">…</td><td></td><td></td></tr>')
            previous = number
            if not marks:
                rows.append(f'<tr class="context" data-line="{number}"><td class="number">{number}</td>'
                            f'<td class="text">{_e(text)}</td><td class="label"></td></tr>')
                continue
            primary = any(loc is diagnosis.primary for loc in marks)
            kind = "primary" if primary else "related"
            first = next((loc for loc in marks if loc is diagnosis.primary), marks[0])
            roles = " ".join(sorted({loc.role or ("primary" if loc is diagnosis.primary else "related") for loc in marks}))
            labels = "; ".join(loc.note for loc in marks if loc.note)
            rows.append(f'<tr class="{kind}" data-line="{number}" data-role="{_e(roles)}">'
                        f'<td class="number">{number}</td><td class="text">{_marked(text, first, kind)}</td>'
                        f'<td class="label">{_e(labels)}</td></tr>')
        parts.append(f'<div class="file">{_e(shown_file(file))}</div><table class="source">{"".join(rows)}</table>')
    return "\n".join(parts)


def render_picture(diagnosis: Diagnosis) -> str:
    """The graph of a diagnosis as inline SVG, or its DOT text when Graphviz is missing."""
    if diagnosis.graph_data is None:
        return ""
    from autograd_doctor.report.graph import GraphvizMissing, svg_body

    picture = diagnosis.graph()
    try:
        body = svg_body(picture.svg())
        return f'<figure class="graph">{body}<figcaption>The autograd graph around the failure; ' \
               f'the stale saved tensor is drawn in red.</figcaption></figure>'
    except GraphvizMissing as missing:
        note = f"No picture: {_e(missing)}. The graph in DOT text:"
    except Exception as problem:
        note = f"The graph could not be drawn ({_e(problem)}); in DOT text:"
    return f'<figure class="graph"><figcaption>{note}</figcaption><pre class="dot">{_e(picture.dot)}</pre></figure>'


def render_diagnosis_html(diagnosis: Diagnosis, index: int = 1) -> str:
    """One diagnosis as an HTML <section>.

    Example::

        >>> d = Diagnosis("AD101", "a <saved> tensor", "error", None)
        >>> "a &lt;saved&gt; tensor" in render_diagnosis_html(d)
        True
    """
    out = [f'<section class="diagnosis severity-{_e(diagnosis.severity)}" id="diagnosis-{index}" '
           f'data-code="{_e(diagnosis.code)}">',
           f'<h2><span class="code">{_e(diagnosis.severity)}[{_e(diagnosis.code)}]</span> {_e(diagnosis.title)}</h2>']
    primary = diagnosis.primary
    if primary is not None:
        out.append(f'<p class="where">--&gt; {_e(shown_line(primary.file, primary.line, (primary.column or 0) + 1))}</p>')
    out.append(render_snippets(diagnosis))
    facts = []
    if diagnosis.tensor is not None:
        facts.append(f"<li><b>tensor:</b> {_e(diagnosis.tensor.describe())}</li>")
    for note in diagnosis.notes:
        facts.append(f"<li><b>note:</b> {_e(note)}</li>")
    if facts:
        out.append(f'<ul class="facts">{"".join(facts)}</ul>')
    for index, suggestion in enumerate(diagnosis.help):
        code = f"<pre>{_e(suggestion.replacement)}</pre>" if suggestion.replacement else ""
        out.append(f'<div class="help"><b>help:</b> {_e(help_message(index, suggestion.message))}{code}</div>')
    out.append(render_picture(diagnosis))
    out.append("</section>")
    return "\n".join(part for part in out if part)


def render_html(report: Report) -> str:
    """The whole report as one self-contained HTML page.

    Example::

        >>> page = render_html(Report())
        >>> page.startswith("<!DOCTYPE html>") and "no autograd problem" in page
        True
    """
    title = "autograd-doctor report"
    body = [f"<h1>{title}</h1>"]
    if report.exception_type is not None:
        body.append(f'<p class="exception">{_e(report.exception_type)}: {_e(report.exception_message)}</p>')
    if not report.diagnoses:
        body.append("<p>autograd-doctor found no autograd problem in this run.</p>")
    for index, diagnosis in enumerate(report.diagnoses, start=1):
        body.append(render_diagnosis_html(diagnosis, index))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; img-src data:\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body) + "\n</body>\n</html>\n"
    )


def write_html(report: Report, path: str) -> None:
    """Write `render_html(report)` to `path` atomically.

    Example::

        >>> write_html(Report(), "/tmp/autograd-doctor-empty.html")
    """
    text = render_html(report)
    directory = os.path.dirname(os.path.abspath(path)) or "."
    os.makedirs(directory, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".autograd-doctor-", suffix=".html")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp makes it private; a report is an ordinary file
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


__all__ = ["render_html", "write_html", "render_diagnosis_html", "render_snippets", "render_picture"]
