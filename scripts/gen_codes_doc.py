"""Write docs/codes.md from the explanations in autograd_doctor/diagnosis/codes.py (the registry of codes).

The same text is what `autograd-doctor explain CODE` prints; a test checks the file is
up to date. Run: python scripts/gen_codes_doc.py
"""

import os
import sys

from autograd_doctor.diagnosis import codes

HEADER = """# Diagnosis codes (run time)

Each code below is what `autograd-doctor explain CODE` prints. Errors (`AD1xx`) explain an
exception PyTorch raised; warnings (`AD2xx`) are problems PyTorch does not raise for (a
silently wrong gradient or value); `AD3xx` explain gradient-path and copy mistakes. The lint
rules (`ADL...`) are documented in [lint.md](lint.md).

| code | title |
|---|---|
"""


def render() -> str:
    rows = "".join(f"| {code} | {codes.title(code)} |\n" for code in sorted(codes.TITLES))
    bodies = "\n".join(codes.explanation(code).rstrip() + "\n" for code in sorted(codes.TITLES))
    return HEADER + rows + "\n" + bodies


def main() -> int:
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "codes.md")
    with open(path, "w", encoding="utf-8") as stream:
        stream.write(render())
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
