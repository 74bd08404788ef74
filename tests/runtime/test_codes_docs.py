"""Every diagnosis code has a title, a long explanation, and a docs entry that matches it."""

import importlib.util
import os

from autograd_doctor.diagnosis import codes
from autograd_doctor.cli.explain import explain_text
from helpers import REPO


def _generator():
    path = os.path.join(REPO, "scripts", "gen_codes_doc.py")
    spec = importlib.util.spec_from_file_location("gen_codes_doc", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_code_is_explained():
    for code in codes.TITLES:
        text = codes.explanation(code)
        assert text and text.startswith(f"## {code}:"), code
        for section in ("**What it means.**", "**Minimal example.**", "**The fix.**"):
            assert section in text, (code, section)
        assert explain_text(code.lower()) == text


def test_docs_codes_md_is_up_to_date():
    with open(os.path.join(REPO, "docs", "codes.md"), encoding="utf-8") as stream:
        assert stream.read() == _generator().render(), "run python scripts/gen_codes_doc.py"
