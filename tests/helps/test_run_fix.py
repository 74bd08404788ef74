"""`autograd-doctor run --fix` and `--diff`: the checked change, shown as a unified diff, written
into the user's file only when the meaning check passed, atomically, and never into a library."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from autograd_doctor.cli.verify_fix import FixRefused, write_atomically
from helpers import run_cli

# Two writes of one kind into views of a tensor that sigmoid saved (`u *= s; v *= t`).
CHUNKS = """
    import torch
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 4)
    x = torch.randn(2, 3)
    h = lin(x).sigmoid()
    u, v = h[:, :2], h[:, 2:]
    u *= 2.0
    v *= 3.0
    (u * v).sum().backward()
    torch.save([p.grad for p in lin.parameters()], "grads.pt")
"""

CHUNKS_CORRECT = CHUNKS.replace("u *= 2.0", "u = u * 2.0").replace("v *= 3.0", "v = v * 3.0")

TWO_LOSSES = """
    import torch
    w = torch.ones(3, requires_grad=True)
    h = (w * 2).tanh()
    loss1 = h.sum()
    loss2 = (h * h).sum()
    loss1.backward()
    loss2.backward()
"""


def _script(tmp_path, source: str) -> str:
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


def _digest(path: str) -> str:
    with open(path, "rb") as stream:
        return hashlib.sha256(stream.read()).hexdigest()


def test_fix_writes_every_verified_change_and_the_program_then_computes_the_reference(tmp_path):
    path = _script(tmp_path, CHUNKS)
    result = run_cli("run", "--fix", path, cwd=str(tmp_path), timeout=900)
    assert result.returncode == 1  # this run was the buggy program
    assert "--fix wrote 2 change(s) into" in result.stderr, result.stderr[-3000:]
    assert "--- a/train.py\n+++ b/train.py\n" in result.stderr
    assert "-u *= 2.0\n-v *= 3.0\n+u = u.mul(2.0)\n+v = v.mul(3.0)\n" in result.stderr or (
        "-u *= 2.0" in result.stderr and "-v *= 3.0" in result.stderr), result.stderr[-3000:]
    with open(path) as stream:
        fixed = stream.read()
    assert "u *= 2.0" not in fixed and "v *= 3.0" not in fixed
    # The written program runs, and computes what the hand-written correct version computes.
    subprocess.run([sys.executable, path], cwd=tmp_path, check=True, timeout=120)
    got = torch.load(tmp_path / "grads.pt")
    reference = tmp_path / "reference"
    reference.mkdir()
    (reference / "train.py").write_text(textwrap.dedent(CHUNKS_CORRECT))
    subprocess.run([sys.executable, "train.py"], cwd=reference, check=True, timeout=120)
    want = torch.load(reference / "grads.pt")
    assert all(torch.equal(a, b) for a, b in zip(got, want))
    # No temporary file is left next to the user's file.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grads.pt", "reference", "train.py"]


def test_diff_shows_the_change_and_writes_nothing(tmp_path):
    path = _script(tmp_path, CHUNKS)
    before = _digest(path)
    result = run_cli("run", "--diff", path, cwd=str(tmp_path), timeout=900)
    assert "--- a/train.py\n+++ b/train.py\n" in result.stderr, result.stderr[-3000:]
    assert "-u *= 2.0" in result.stderr and "-v *= 3.0" in result.stderr
    assert _digest(path) == before


def test_fix_writes_nothing_when_no_oracle_verifies_the_change(tmp_path):
    path = _script(tmp_path, TWO_LOSSES)
    before = _digest(path)
    result = run_cli("run", "--fix", path, cwd=str(tmp_path), timeout=900)
    assert "unverified: " in result.stderr, result.stderr[-3000:]
    assert "autograd-doctor: --fix wrote nothing: the change is unverified (see above)" in result.stderr
    assert _digest(path) == before


def test_fix_never_writes_into_an_installed_library():
    library_file = os.path.join(os.path.dirname(torch.__file__), "functional.py")
    with open(library_file, encoding="utf-8") as stream:
        text = stream.read()
    with pytest.raises(FixRefused, match="installed library"):
        write_atomically({library_file: (text, text + "# changed\n")})
    with open(library_file, encoding="utf-8") as stream:
        assert stream.read() == text


def test_fix_refuses_a_file_changed_since_the_run(tmp_path):
    path = tmp_path / "train.py"
    path.write_text("x = 1\n")
    with pytest.raises(FixRefused, match="changed since the run"):
        write_atomically({str(path): ("x = 0\n", "x = 2\n")})
    assert path.read_text() == "x = 1\n"


def test_fix_writes_all_files_or_none(tmp_path):
    first = tmp_path / "a.py"
    first.write_text("a = 1\n")
    second = tmp_path / "gone" / "b.py"  # its folder disappears before the write
    second.parent.mkdir()
    second.write_text("b = 1\n")
    files = {str(first): ("a = 1\n", "a = 2\n"), str(second): ("b = 1\n", "b = 2\n")}
    # Reading succeeds; creating the second temporary file fails: nothing may change.
    os.chmod(second.parent, 0o500)
    try:
        if os.access(second.parent, os.W_OK):
            pytest.skip("this user can write into a read-only folder (root)")
        with pytest.raises(OSError):
            write_atomically(files)
    finally:
        os.chmod(second.parent, 0o700)
    assert first.read_text() == "a = 1\n" and second.read_text() == "b = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "gone"]
