"""The rule record: code, name, summary and ruff-style documentation sections."""

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
    # Default rules claim a hazard: backward() fails or a gradient (or value) is
    # wrong.  Advice (style, speed) is opt-in: reported only when `select` names
    # the full code.
    default: bool = True
    # Why an opt-in rule is not in the default selection (its documentation says it).
    opt_in_reason: str = "advice, not a hazard"
    # Its hazard needs gradients: not reported in a file that defines an
    # Optimizer subclass (its step() runs under no_grad).
    needs_gradients: bool = False

    def sections(self) -> list[tuple[str, str]]:
        return list(zip(SECTIONS, (self.what_it_does, self.why_bad, self.example,
                                   self.use_instead, self.fix_safety, self.known_problems)))

    def documentation(self, level: int = 1) -> str:
        """The long explanation, as markdown (``level``: heading level of the title)."""
        out = [f"{'#' * level} {self.code} {self.name}", "", self.summary, ""]
        if not self.default:
            out += ["Opt-in: reported only with `--select " + self.code + "` (" + self.opt_in_reason + ").", ""]
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
