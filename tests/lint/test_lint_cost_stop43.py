"""The cost work of stop 43 (docs/lint.md, "Performance", "Lint cost, stop 43") changes
how facts are computed, never what they are: each cheaper path is checked here against
the one it replaced, on source written for the purpose and on torch's own files."""

from __future__ import annotations

import ast
import os
import re
import textwrap

import torch

from autograd_doctor.lint.arguments import _call_positions
from autograd_doctor.lint.clearing import parsed_file
from autograd_doctor.lint.defaults import false_constant, parameter_defaults, parameter_positions
from autograd_doctor.lint.index_arguments import index_spellings
from autograd_doctor.lint.summaries import _configuration_locals
from autograd_doctor.lint.walk import walk_nodes

_TORCH = os.path.dirname(torch.__file__)
_FILES = [os.path.join(_TORCH, p) for p in ("nn/functional.py", "optim/adam.py", "nn/modules/rnn.py")]

_SAMPLE = textwrap.dedent('''
    import torch

    def gather(pts, inds , other, *rest, flag=False, **kw):
        x = pts[inds, :]
        y = pts[ other]
        z = pts[0, other]
        def inner(a, b=None):
            return a[b]
        f = lambda q: q[inds]
        return x + y + z + inds2(x) + inds (y)

    def inds2(v):  # def inds2( is no call
        return v

    class C:
        def m(self, k, *, j=0, s="", t=0.0):
            self.k = k
            return self.m(k)[j]
''')


def _trees():
    yield ast.parse(_SAMPLE)
    for path in _FILES:
        with open(path, encoding="utf-8") as f:
            yield ast.parse(f.read())


def test_walk_nodes_is_ast_walk():
    for tree in _trees():
        for node in [tree] + [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)][:50]:
            assert [id(n) for n in walk_nodes(node)] == [id(n) for n in ast.walk(node)]


def test_call_positions_are_the_pattern_matches():
    sources = [_SAMPLE] + [open(p, encoding="utf-8").read() for p in _FILES]
    for source in sources:
        names = sorted(set(re.findall(r"def[ \t]+(\w+)", source)))[:60] + ["inds", "inds2", "m"]
        names = sorted(set(names))
        pattern = re.compile(r"(?<!def )\b(" + "|".join(names) + r")[ \t]*\(")
        assert _call_positions(source, set(names)) == [(m.start(), m.group(1)) for m in pattern.finditer(source)]


def test_index_spellings_hold_every_name_the_function_gate_passes():
    for tree, source in [(ast.parse(_SAMPLE), _SAMPLE)] + [
            (ast.parse(s), s) for s in (open(p, encoding="utf-8").read() for p in _FILES)]:
        spelled = index_spellings(source)
        lines = source.splitlines(keepends=True)
        for f in ast.walk(tree):
            if not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            text = "".join(lines[f.lineno - 1:f.end_lineno])  # a superset of the function's text
            for a in f.args.posonlyargs + f.args.args + f.args.kwonlyargs:
                if "[" + a.arg in text or ", " + a.arg + "]" in text:
                    assert a.arg in spelled  # the function's own gate passes only names of the file's set
    assert index_spellings("x = a[ü]") is None  # non-ASCII: every function gated on its own text
    assert {"inds", "ind", "i", "other"} <= index_spellings(_SAMPLE)


def test_one_walk_gives_the_stored_names_and_the_configuration_locals():
    for tree in _trees():
        for f in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)][:200]:
            params = {a.arg for a in f.args.posonlyargs + f.args.args + f.args.kwonlyargs}
            stored = set()
            assert _configuration_locals(f, params, stored) == _configuration_locals(f, params)
            assert stored == {n.id for n in ast.walk(f) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def test_defaults_module_owns_the_off_by_default_fact():
    f = ast.parse(_SAMPLE).body[3]  # C
    m = f.body[0]
    positions = parameter_positions(m)
    assert positions["k"] == (0, None) and positions["j"][0] is None
    assert [n for n in positions if false_constant(positions[n][1])] == ["j", "s"]  # `t=0.0` is no off switch
    assert set(parameter_defaults(m)) == {n for n, (_, d) in positions.items() if d is not None}


def test_parsed_file_follows_a_changed_file(tmp_path):
    path = tmp_path / "helper.py"
    path.write_text("def f():\n    return 1\n", encoding="utf-8")
    first = parsed_file(str(path))
    assert parsed_file(str(path)) is first  # read once while unchanged
    path.write_text("def f():\n    return 2\n\n\ndef g():\n    pass\n", encoding="utf-8")
    os.utime(path, ns=(1, 10**18))
    assert [n.name for n in parsed_file(str(path)).body] == ["f", "g"]
    (tmp_path / "bad.py").write_bytes(b"x = '\xff'\n")
    assert parsed_file(str(tmp_path / "bad.py")) is None
    assert parsed_file(str(tmp_path / "missing.py")) is None
