"""Compiler-style text: headline with code, source lines with carets and labels, notes, help."""

from __future__ import annotations

from autograd_doctor.report.model import Diagnosis, Location
from autograd_doctor.report.source import shown_path, source_line


def _marked_line(location: Location, gutter: int, marker: str) -> list[str]:
    text = source_line(location.file, location.line) or location.source
    start = max(0, location.column or 0)
    if location.end_line not in (None, location.line) or location.end_column is None:
        end = len(text.rstrip())
    else:
        end = max(location.end_column, start + 1)
    end = min(end, max(len(text.rstrip()), start + 1))
    pad = " " * gutter
    lines = [f"{location.line:>{gutter}} | {text}"]
    underline = " " * start + marker * max(1, end - start)
    label = f" {location.note}" if location.note else ""
    lines.append(f"{pad} | {underline}{label}")
    return lines


def render_diagnosis(diagnosis: Diagnosis) -> str:
    out = [f"{diagnosis.severity}[{diagnosis.code}]: {diagnosis.title}"]
    locations = [loc for loc in [diagnosis.primary, *diagnosis.related] if loc is not None]
    gutter = max([len(str(loc.line)) for loc in locations] + [2])
    pad = " " * gutter
    primary = diagnosis.primary
    if primary is not None:
        out.append(f"{pad}--> {shown_path(primary.file)}:{primary.line}:{(primary.column or 0) + 1}")
    # Group by file, in line order, the primary marked with ^ and the others with -.
    files: list[str] = []
    for loc in locations:
        if loc.file not in files:
            files.append(loc.file)
    for file in files:
        if primary is None or file != primary.file:
            out.append(f"{pad}::: {shown_path(file)}")
        out.append(f"{pad} |")
        in_file = sorted((loc for loc in locations if loc.file == file), key=lambda loc: loc.line)
        previous_line = None
        for loc in in_file:
            if previous_line is not None and loc.line > previous_line + 1:
                out.append(f"{pad} |")
            out.extend(_marked_line(loc, gutter, "^" if loc is primary else "-"))
            previous_line = loc.line
        out.append(f"{pad} |")
    if diagnosis.tensor is not None:
        out.append(f"{pad} = tensor: {diagnosis.tensor.describe()}")
    for note in diagnosis.notes:
        out.append(f"{pad} = note: {note}")
    for suggestion in diagnosis.help:
        out.append(f"help: {suggestion.message}")
        if suggestion.replacement:
            where = suggestion.location
            out.append(f"{pad} |")
            for index, code_line in enumerate(suggestion.replacement.split("\n")):
                number = str(where.line + index) if where is not None and index == 0 else ""
                indent = ""
                if where is not None:
                    original = source_line(where.file, where.line)
                    indent = original[: len(original) - len(original.lstrip())]
                out.append(f"{number:>{gutter}} | {indent}{code_line}")
            if where is not None and where.end_line is not None and where.end_line > where.line:
                out.append(f"{pad} = (replaces lines {where.line}-{where.end_line})")
    return "\n".join(out)


def render_report(diagnoses: list[Diagnosis]) -> str:
    return "\n\n".join(render_diagnosis(d) for d in diagnoses)
