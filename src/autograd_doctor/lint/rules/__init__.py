"""Lint rules: code, name, one-line summary and ruff-style documentation.

The rules' logic lives in the single AST pass (``checker.py``); these modules
hold what a user reads: ``autograd-doctor explain ADL001``, the SARIF rules
metadata and ``docs/lint.md`` are all rendered from here.
"""

from __future__ import annotations

from dataclasses import dataclass

SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "Known problems")


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str
    what_it_does: str
    why_bad: str
    example: str
    use_instead: str
    fix_safety: str
    known_problems: str

    def sections(self) -> list[tuple[str, str]]:
        return list(zip(SECTIONS, (self.what_it_does, self.why_bad, self.example,
                                   self.use_instead, self.fix_safety, self.known_problems)))

    def documentation(self, level: int = 1) -> str:
        """The long explanation, as markdown (``level``: heading level of the title)."""
        out = [f"{'#' * level} {self.code} {self.name}", "", self.summary, ""]
        for title, body in self.sections():
            out.append(f"{'#' * (level + 1)} {title}")
            out.append("")
            body = body.strip("\n")
            if title in ("Example", "Use instead"):
                out += ["```python", body, "```"]
            else:
                out.append(body)
            out.append("")
        return "\n".join(out)


from autograd_doctor.lint.rules import aliasing, copies, debug, escape, saved, syntax  # noqa: E402

ALL_RULES: list[Rule] = sorted(
    [r for m in (syntax, saved, escape, copies, aliasing, debug) for r in m.RULES],
    key=lambda r: r.code)
RULES_BY_CODE: dict[str, Rule] = {r.code: r for r in ALL_RULES}


def rule_documentation(code: str) -> str | None:
    """Return the markdown explanation of lint ``code`` (``None`` if unknown).

    >>> rule_documentation("ADL001").splitlines()[0]
    '# ADL001 write-to-saved-tensor'
    >>> rule_documentation("ADL999") is None
    True
    """
    rule = RULES_BY_CODE.get(code.strip().upper())
    return rule.documentation() if rule else None


def render_markdown() -> str:
    """All rules' docs, as the "Rules" part of docs/lint.md (a table, then each rule)."""
    rows = "".join(f"| {r.code} | {r.name} | {r.summary.replace('|', '/')} |\n" for r in ALL_RULES)
    return ("| code | name | summary |\n| --- | --- | --- |\n" + rows + "\n"
            + "\n".join(r.documentation(level=3) for r in ALL_RULES))


def update_docs(path: str) -> None:
    """Rewrite everything after the "## Rules" heading of docs/lint.md."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    marker = "\n| code | name | summary |\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.split(marker, 1)[0] + marker[:1] + render_markdown())

