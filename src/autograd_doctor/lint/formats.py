"""Output formats over the same findings: text, concise, json, sarif, github."""

from __future__ import annotations

import json

from autograd_doctor.lint.findings import split_lines
from autograd_doctor.lint.rules import ALL_RULES, RULES_BY_CODE

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def render_text(findings, sources: dict[str, str], concise: bool = False) -> str:
    out = []
    for f in findings:
        mark = " [*]" if f.fix and f.fix.safe else ""
        out.append(f"{f.file}:{f.line}:{f.column}: {f.code}{mark} {f.message}")
        source = sources.get(f.file)
        if concise or source is None:
            continue
        lines = [line.rstrip("\r\n") for line in split_lines(source)]
        if 0 < f.line <= len(lines):
            text = lines[f.line - 1].expandtabs(1)
            width = len(str(max([f.line] + [r[0] for r in f.related])))
            end = f.end_column if f.end_line == f.line else len(text) + 1
            carets = "^" * max(1, end - f.column)
            out.append(f"{' ' * width} |")
            for line, column, end_column, label in f.related:  # secondary sites, rustc-style
                if 0 < line <= len(lines) and line != f.line:
                    other = lines[line - 1].expandtabs(1)
                    out.append(f"{line:>{width}} | {other}")
                    end_column = end_column or len(other.rstrip()) + 1
                    dashes = "-" * max(1, end_column - column)
                    out.append(f"{' ' * width} | {' ' * (column - 1)}{dashes} {label}")
            out.append(f"{f.line:>{width}} | {text}")
            out.append(f"{' ' * width} | {' ' * (f.column - 1)}{carets}")
            if f.fix:
                kind = "" if f.fix.safe else " (unsafe fix)"
                out.append(f"{' ' * width} = help: {f.fix.message}{kind}")
        out.append("")
    return "\n".join(out) + ("\n" if out else "")


def summary(findings, fixed: int = 0) -> str:
    parts = []
    if fixed:
        parts.append(f"Fixed {fixed} finding{'s' * (fixed != 1)}.")
    if not findings:
        parts.append("All checks passed!" if not fixed else "No findings remain.")
        return "\n".join(parts) + "\n"
    n = len(findings)
    safe = sum(1 for f in findings if f.fix and f.fix.safe)
    unsafe = sum(1 for f in findings if f.fix and not f.fix.safe)
    line = f"Found {n} finding{'s' * (n != 1)}."
    if safe:
        line += f"\n[*] {safe} fixable with `--fix`."
    if unsafe:
        line += f"\n{unsafe} more fixable with `--fix --unsafe-fixes`."
    parts.append(line)
    return "\n".join(parts) + "\n"


def render_json(findings) -> str:
    return json.dumps([f.to_dict() for f in findings], indent=2) + "\n"


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def render_github(findings) -> str:
    return "".join(
        f"::warning file={_escape_property(f.file)},line={f.line},col={f.column},"
        f"endLine={f.end_line},endColumn={f.end_column},title={f.code}::"
        f"{_escape_data(f.code + ' ' + f.message)}\n" for f in findings)


def _uri(path: str) -> str:
    """SARIF wants URIs: relative paths stay relative (to the repo root in CI)."""
    from pathlib import PurePath
    from urllib.parse import quote

    p = path.replace("\\", "/")
    if PurePath(path).is_absolute():
        return "file://" + quote(p)
    while p.startswith("./"):
        p = p[2:]
    return quote(p)


def render_sarif(findings, version: str = "0.1.0") -> str:
    rules = [{
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.what_it_does.replace("\n", " ")},
        "help": {"text": r.documentation(), "markdown": r.documentation()},
        "defaultConfiguration": {"level": "error" if r.code == "ADL000" else "warning"},
        "properties": {"tags": ["autograd", "pytorch"]},
    } for r in ALL_RULES]
    index = {r.code: i for i, r in enumerate(ALL_RULES)}
    results = []
    for f in findings:
        result = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": "error" if f.code == "ADL000" else "warning",
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": _uri(f.file)},
                "region": {"startLine": f.line, "startColumn": f.column,
                           "endLine": f.end_line, "endColumn": max(f.end_column, 1)}}}],
        }
        if f.related:
            result["relatedLocations"] = [{
                "id": i,
                "physicalLocation": {"artifactLocation": {"uri": _uri(f.file)},
                                     "region": {"startLine": line, "startColumn": column}},
                "message": {"text": label}} for i, (line, column, _, label) in enumerate(f.related)]
        if f.fix is not None:
            result["fixes"] = [{
                "description": {"text": f.fix.message},
                "artifactChanges": [{
                    "artifactLocation": {"uri": _uri(f.file)},
                    "replacements": [{
                        "deletedRegion": {"startLine": e.line, "startColumn": e.column,
                                          "endLine": e.end_line, "endColumn": e.end_column},
                        "insertedContent": {"text": e.content}} for e in f.fix.edits]}]}]
        results.append(result)
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "autograd-doctor",
                "informationUri": "https://github.com/autograd-doctor/autograd-doctor",
                "version": version,
                "rules": rules}},
            "results": results,
        }],
    }
    assert all(f.code in RULES_BY_CODE for f in findings)
    return json.dumps(doc, indent=2) + "\n"
