"""The examples in README.md and docs/*.md, found, run, compared and (on request) rewritten.

A fenced block that shows output is preceded by a marker, an HTML comment that GitHub
does not render:

    <!-- doc-test: run="autograd-doctor run examples/broken_attention.py" from="RuntimeError:" -->

Keys (values in shell quoting):

- `run="CMD"`: the shell command whose output (stdout and stderr together) the block shows.
  A `console` block whose first line is `$ CMD` runs that command (`run=` may be left out).
  Commands run in a scratch folder where `examples/`, `tests/`, `scripts/` and `benchmarks/`
  are the repository's, so paths read as from the repository's root; `python` and
  `autograd-doctor` are this interpreter's, importing this checkout's `src`.
- `cwd=DIR`: run in DIR (relative to the repository's root) instead.
- `serial`: run this command alone, before the others (its output depends on time taken).
- `timeout=N`: seconds the command may take (default 300).
- `from="TEXT"`: the block shows the output from the first line containing TEXT;
  `until="TEXT"`: up to (not including) the next line containing TEXT;
  `keep="REGEX"`: only the lines REGEX finds something in.
- `file=NAME`: not output: this block is a file the commands of the same page use (written
  into the scratch folder before they run).
- `doctest`: a `>>>` session, run by doctest (`setup="CODE"` runs first, unseen).
- `input`: the block shows commands or code, no output.
- `skip="REASON"`: not run, for the reason given.

In a block, a line `...` stands for any number of lines and `...` inside a line for any
text (doctest's ELLIPSIS), so an example may be abridged. Before comparing, both sides are
normalised (`normalise`): timings, absolute paths, process ids, ports and memory addresses.

`python -m pytest tests/docs --update-docs` (or AUTOGRAD_DOCTOR_UPDATE_DOCS=1) rewrites the
blocks that no longer match with what the commands print now, keeping their `...` lines.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
from dataclasses import dataclass, field

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARKER = re.compile(r"^<!-- doc-test:(.*?)-->\s*$")
FENCE = re.compile(r"^(\s*)(```+)(.*)$")
KINDS = ("run", "file", "doctest", "input", "skip")


@dataclass
class Example:
    page: str           # path relative to the repository
    line: int           # 1-based line of the block's first content line
    language: str
    lines: list[str]    # the block's content, without the fences
    options: dict = field(default_factory=dict)
    end_line: int = 0   # 1-based line of the closing fence

    @property
    def kind(self) -> str:
        for kind in KINDS:
            if kind in self.options:
                return kind
        if self.lines and self.lines[0].startswith("$ "):
            return "run"
        return "unmarked"

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def command(self) -> str | None:
        if self.options.get("run"):
            return self.options["run"]
        if self.lines and self.lines[0].startswith("$ "):
            return self.lines[0][2:]
        return None

    @property
    def shown(self) -> list[str]:
        """The output the block shows (without a leading `$ command` line)."""
        if self.lines and self.lines[0].startswith("$ "):
            return self.lines[1:]
        return self.lines

    def needs_a_marker(self) -> bool:
        """Blocks that can show output: no language, console, text, or a `>>>` session."""
        return self.language in ("", "console", "text") or any(line.startswith(">>> ") for line in self.lines)


def parse_options(text: str) -> dict:
    options = {}
    for word in shlex.split(text):
        key, _, value = word.partition("=")
        options[key] = value if _ else True
    return options


def examples_in(page: str) -> list[Example]:
    with open(os.path.join(REPO, page), encoding="utf-8") as stream:
        lines = stream.read().split("\n")
    examples = []
    pending: dict | None = None
    index = 0
    while index < len(lines):
        marker = MARKER.match(lines[index])
        fence = FENCE.match(lines[index])
        if marker:
            pending = parse_options(marker.group(1))
        elif fence and fence.group(1) == "":
            ticks = fence.group(2)
            start = index + 1
            end = start
            while end < len(lines) and not lines[end].startswith(ticks):
                end += 1
            examples.append(Example(page, start + 1, fence.group(3).strip(), lines[start:end], pending or {},
                                    end_line=end + 1))
            pending = None
            index = end
        elif lines[index].strip():
            pending = None  # a marker belongs to the block right after it
        index += 1
    return examples


def pages() -> list[str]:
    docs = sorted(f"docs/{name}" for name in os.listdir(os.path.join(REPO, "docs")) if name.endswith(".md"))
    return ["README.md", *docs]


# ---- normalising and comparing ---------------------------------------------------------

def normalise(text: str, roots: tuple[str, ...] = ()) -> str:
    """What may differ between two runs of the same example, made equal.

    >>> normalise("it took 7.3 s; 1 passed in 12.81s (pid 4242) at 0x7f3a1c", ())
    'it took <N> s; 1 passed in <N>s (pid <PID>) at 0x<ADDR>'
    >>> normalise("  File \\"/opt/venv/lib/python3.11/site-packages/torch/x.py\\"", ())
    '  File ".../site-packages/torch/x.py"'
    """
    for root in sorted(filter(None, roots), key=len, reverse=True):
        text = text.replace(root.rstrip("/") + "/", "")
    text = re.sub(r"[^\s\"'(\[]*/site-packages/", ".../site-packages/", text)
    text = re.sub(r"\b\d+(\.\d+)? ?(s|ms)\b", lambda m: f"<N>{' ' if ' ' in m.group(0) else ''}{m.group(2)}", text)
    text = re.sub(r"0x[0-9a-fA-F]+", "0x<ADDR>", text)
    text = re.sub(r"(ipykernel_|pid:? |PID )\d+", r"\1<PID>", text)
    text = re.sub(r"(127\.0\.0\.1\]?:)\d+", r"\1<PORT>", text)
    text = re.sub(r"/tmp/[\w./-]*?/", "/tmp/<DIR>/", text)
    return "\n".join(line.rstrip() for line in text.split("\n"))


def _line_matches(pattern: str, line: str) -> bool:
    if "..." not in pattern:
        return pattern == line
    parts = [re.escape(part) for part in pattern.split("...")]
    return re.fullmatch(".*".join(parts), line, flags=re.DOTALL) is not None


def _is_gap(pattern: str) -> bool:
    return pattern.strip() == "..."


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether `actual` fits `expected`, where a `...` line is any number of lines."""
    memo: dict[tuple[int, int], bool] = {}

    def fits(i: int, j: int) -> bool:
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(expected):
            result = j == len(actual)
        elif _is_gap(expected[i]):
            result = any(fits(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            result = j < len(actual) and _line_matches(expected[i], actual[j]) and fits(i + 1, j + 1)
        memo[(i, j)] = result
        return result

    return fits(0, 0)


def updated(expected: list[str], actual: list[str]) -> list[str]:
    """`actual` as the block should now show it: the expected lines that still fit are kept
    (with their `...`), the rest is what runs now; a `...` line stays where it stood."""
    if matches(expected, actual):
        return expected
    matcher = difflib.SequenceMatcher(a=expected, b=actual, autojunk=False)
    new: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            new += expected[i1:i2]
            continue
        new += _merge_chunk(expected[i1:i2], actual[j1:j2])
    return new


def _merge_chunk(expected: list[str], actual: list[str]) -> list[str]:
    """One differing stretch: expected lines that still fit a line of `actual` (a line with
    `...` in it) stay, a `...` line stands for the actual lines it skips, the rest is actual."""
    if not any(_is_gap(line) or "..." in line for line in expected):
        return actual
    new: list[str] = []
    position = 0
    skipping = False
    for line in expected:
        if _is_gap(line):
            new.append(line)
            skipping = True
            continue
        found = next((k for k in range(position, len(actual)) if _line_matches(line, actual[k])), None)
        if found is None:
            continue
        if not skipping:
            new += actual[position:found]
        new.append(line)
        position, skipping = found + 1, False
    if not skipping:
        new += actual[position:]
    return new


def select(output: str, options: dict) -> list[str]:
    """The part of a command's output that a block shows."""
    lines = output.rstrip("\n").split("\n")
    if options.get("from"):
        starts = [n for n, line in enumerate(lines) if options["from"] in line]
        lines = lines[starts[0]:] if starts else []
    if options.get("until"):
        ends = [n for n, line in enumerate(lines) if options["until"] in line and n > 0]
        lines = lines[:ends[0]] if ends else lines
    if options.get("keep"):
        lines = [line for line in lines if re.search(options["keep"], line)]
    return lines


def rewrite(page: str, replacements: dict[int, list[str]]) -> None:
    """Replace blocks' content; keys are the 1-based first content line of each block."""
    path = os.path.join(REPO, page)
    with open(path, encoding="utf-8") as stream:
        lines = stream.read().split("\n")
    for example in sorted(examples_in(page), key=lambda e: e.line, reverse=True):
        if example.line in replacements:
            prefix = [example.lines[0]] if example.lines and example.lines[0].startswith("$ ") else []
            lines[example.line - 1:example.end_line - 1] = prefix + replacements[example.line]
    with open(path, "w", encoding="utf-8") as stream:
        stream.write("\n".join(lines))
