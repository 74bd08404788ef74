"""ADL000: the file could not be read or parsed (reported by the engine)."""

from __future__ import annotations


from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
code="ADL000", name="unparsable-file",
summary="The file could not be read or parsed, so it was not checked.",
what_it_does="""Reports a file that is not valid Python (a `SyntaxError`), contains
null bytes, cannot be decoded with its declared encoding (PEP 263 coding
cookie, UTF-8 by default), or nests too deeply to analyse.  The finding sits
at the parse error's location; the other files are still linted.""",
why_bad="""A file the linter cannot parse is a file it cannot check: every other
rule is silent about it.  Usually the interpreter would reject it too.""",
example="""def forward(self, x)
    return x""",
use_instead="""def forward(self, x):
    return x""",
fix_safety="No automatic fix.",
known_problems="""The file is parsed with the grammar of the Python running the linter;
newer syntax may be reported on older interpreters.  Python 3.12 type
parameters and `type` statements (PEP 695) are recognised, and the message
then says so and which Python ran the linter.  ADL000 cannot be
suppressed with `# noqa`, but it can be ignored with `--ignore ADL000`.""",
)
