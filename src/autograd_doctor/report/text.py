"""Compiler-style text: headline with code, source lines with carets and labels, notes, help."""

from __future__ import annotations

from autograd_doctor.report.cell_names import shown_file, shown_line
from autograd_doctor.diagnosis.model import Diagnosis, Location, help_message
from autograd_doctor.diagnosis.source import source_line


def _underline(location: Location, text: str, gutter: int, marker: str) -> str:
    start = max(0, location.column or 0)
    if location.end_line not in (None, location.line) or location.end_column is None:
        end = len(text.rstrip())
    else:
        end = max(location.end_column, start + 1)
    end = min(end, max(len(text.rstrip()), start + 1))
    underline = " " * start + marker * max(1, end - start)
    label = f" {location.note}" if location.note else ""
    return f"{' ' * gutter} | {underline}{label}"


def _marked_lines(on_line: list[Location], primary: Location | None, gutter: int) -> list[str]:
    """One source line, shown once, with a mark under it for each location on it (the write,
    the save and the backward call can all be on `loss = net(x).sum(); loss.backward()`)."""
    first = on_line[0]
    text = source_line(first.file, first.line) or first.source
    lines = [f"{first.line:>{gutter}} | {text}"]
    for location in on_line:
        lines.append(_underline(location, text, gutter, "^" if location is primary else "-"))
    return lines


def gutter_width(diagnosis: Diagnosis) -> int:
    """Width of the line-number column: the widest line number shown, at least 2."""
    locations = [loc for loc in [diagnosis.primary, *diagnosis.related] if loc is not None]
    return max([len(str(loc.line)) for loc in locations] + [2])


def render_diagnosis(diagnosis: Diagnosis) -> str:
    out = [f"{diagnosis.severity}[{diagnosis.code}]: {diagnosis.title}"]
    locations = [loc for loc in [diagnosis.primary, *diagnosis.related] if loc is not None]
    gutter = gutter_width(diagnosis)
    pad = " " * gutter
    primary = diagnosis.primary
    if primary is not None:
        out.append(f"{pad}--> {shown_line(primary.file, primary.line, (primary.column or 0) + 1)}")
    # Group by file, in line order, the primary marked with ^ and the others with -.
    files: list[str] = []
    for loc in locations:
        if loc.file not in files:
            files.append(loc.file)
    for file in files:
        if primary is None or file != primary.file:
            out.append(f"{pad}::: {shown_file(file)}")
        out.append(f"{pad} |")
        in_file = sorted((loc for loc in locations if loc.file == file), key=lambda loc: loc.line)
        previous_line = None
        for line in sorted({loc.line for loc in in_file}):
            if previous_line is not None and line > previous_line + 1:
                out.append(f"{pad} |")
            out.extend(_marked_lines(sorted((loc for loc in in_file if loc.line == line), key=lambda loc: loc.column or 0),
                                     primary, gutter))
            previous_line = line
        out.append(f"{pad} |")
    if diagnosis.tensor is not None:
        out.append(f"{pad} = tensor: {diagnosis.tensor.describe()}")
    for note in diagnosis.notes:
        out.append(f"{pad} = note: {note}")
    for index, suggestion in enumerate(diagnosis.help):
        out.append(f"help: {help_message(index, suggestion.message)}")
        if suggestion.replacement:
            where = suggestion.location
            out.append(f"{pad} |")
            for index, code_line in enumerate(suggestion.replacement.split("\n")):
                number = str(where.line + index) if where is not None and index == 0 else ""
                indent = ""  # the replacement is relative to the statement's first column (apply_replacement)
                if where is not None:
                    original = source_line(where.file, where.line)
                    indent = original[: len(original) - len(original.lstrip())]
                out.append(f"{number:>{gutter}} | {indent}{code_line}")
            if where is not None and where.end_line is not None and where.end_line > where.line:
                out.append(f"{pad} = (replaces lines {where.line}-{where.end_line})")
    return "\n".join(out)


def render_report(diagnoses: list[Diagnosis]) -> str:
    return "\n\n".join(render_diagnosis(d) for d in diagnoses)
