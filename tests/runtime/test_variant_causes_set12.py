"""The general forms behind held-out set 12's misses (tests/errors/variants, `# set: 12`), each on a
program of its own: the diagnosis names the marked line, and its help, applied, makes the program
compute what a hand-written version computes; and the cases each change must leave alone."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "errors"))

from catalogue import apply_suggestion, marked_line, run_plain, run_watched, write  # noqa: E402

import autograd_doctor  # noqa: E402


@pytest.fixture
def library_modules():
    """The helper modules a program imports from its own folder are imported again by each run."""
    names = []
    yield names
    for name in names:
        sys.modules.pop(name, None)


def diagnose(tmp_path, source, name="program", libraries=None, library_modules=None):
    """(source, diagnoses) of the program run under the doctor; `libraries` are written next to it."""
    for library, text in (libraries or {}).items():
        write(tmp_path, textwrap.dedent(text), library)
        if library_modules is not None:
            library_modules.append(library)
            sys.modules.pop(library, None)
    source = textwrap.dedent(source)
    error = run_watched(write(tmp_path, source, name))
    assert error is not None
    return source, autograd_doctor.diagnoses_of(error)


def only(diagnoses, code):
    (found,) = [d for d in diagnoses if d.code == code]
    return found


def run_fixed(tmp_path, suggestion, name="program", library_modules=()):
    """The namespace of the program after the suggestion is applied to the file it names."""
    target = tmp_path / os.path.basename(suggestion.location.file)
    target.write_text(apply_suggestion(target.read_text(), suggestion))
    for library in library_modules:
        sys.modules.pop(library, None)
    error, namespace = run_plain(str(tmp_path / f"{name}.py"))
    assert error is None, error
    return namespace



def test_scatter_add_into_zeros_under_vmap_is_made_from_the_input(tmp_path):
    # vmap names the op itself ("vmap: scatter_add_(self, *extra_args) is not possible") for writes
    # that are not arithmetic; it is the same mistake as `+=` into torch.zeros (AD144).
    source, diagnoses = diagnose(tmp_path, """
        import torch
        from torch.func import vmap

        SLOTS = torch.tensor([0, 2, 2])


        def pooled(values):
            totals = torch.zeros(3)  # MADE
            totals.scatter_add_(0, SLOTS, values)
            return totals


        values = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        out = vmap(pooled)(values)
        out.pow(2).sum().backward()
        """)
    found = only(diagnoses, "AD144")
    assert found.primary.line == marked_line(source, "MADE")
    namespace = run_fixed(tmp_path, found.help[0])
    values = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    expected = torch.stack([values[:, 0], torch.zeros(2), values[:, 1] + values[:, 2]], dim=1)
    assert torch.equal(namespace["out"], expected)
    assert torch.equal(namespace["values"].grad, 2 * expected[:, [0, 2, 2]])


def test_a_write_outside_vmap_is_not_diagnosed_as_a_vmap_write(tmp_path):
    # A plain index_add_ with a source larger than the target fails on its own check, not vmap's.
    source = textwrap.dedent("""
        import torch

        totals = torch.zeros(2)
        totals.index_add_(0, torch.tensor([0, 1, 2]), torch.ones(3))
        """)
    error = run_watched(write(tmp_path, source, "program"))
    assert error is not None
    assert "AD144" not in [d.code for d in autograd_doctor.diagnoses_of(error)]
