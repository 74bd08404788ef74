"""The doctor reads `t[index]` itself for a write `t[index] = v` (the region written, for its
alias and overlap checks). PyTorch warns each time it reads a list of slices as an index (a
UserWarning: "non-tuple sequence for multidimensional indexing"): the doctor's own read must add
no warning to the program's (the twenty-second set of docs/real-code.md: torchphysics'
`Points.__setitem__` writes through such a list; its tests printed 26 warnings more under the
doctor, from recording/calls.py). Its own reads take the list as the tuple PyTorch reads it as.
The written values and the program's own warnings stay those of plain python."""

from __future__ import annotations

import runpy
import textwrap
import warnings

import torch

import autograd_doctor

# The shape of the set's program (a container writing through a list of slices it built), and
# another: a list holding Ellipsis and an index tensor, written with `+=` on a view of a leaf's copy.
PROGRAM = """
    import torch


    class Table:
        def __init__(self, values):
            self.values = values

        def __setitem__(self, columns, new):
            index = [slice(None)] * (self.values.dim() - 1) + [columns]
            self.values[index] = new


    table = Table(torch.zeros(3, 4))
    table[slice(1, 3)] = torch.ones(3, 2)
    weights = torch.randn(2, 5, requires_grad=True)
    scaled = weights * 2
    scaled[[Ellipsis, torch.tensor([0, 3])]] += 1.0
    loss = scaled.pow(2).sum()
    loss.backward()
    result = [table.values.clone(), scaled.detach().clone(), weights.grad.clone()]
"""


def _run(tmp_path, watched: bool):
    path = tmp_path / ("watched.py" if watched else "plain.py")
    path.write_text(textwrap.dedent(PROGRAM))
    torch.manual_seed(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if watched:
            with autograd_doctor.watch() as doctor:
                namespace = runpy.run_path(str(path), run_name="__main__")
            diagnoses = list(doctor.diagnoses)
        else:
            namespace, diagnoses = runpy.run_path(str(path), run_name="__main__"), []
    return namespace, [(w.category, str(w.message), w.lineno) for w in caught], [w.filename for w in caught], diagnoses


def test_the_doctors_reads_of_a_list_index_add_no_warning_and_change_nothing(tmp_path):
    plain, plain_warnings, _, _ = _run(tmp_path, watched=False)
    watched, watched_warnings, files, diagnoses = _run(tmp_path, watched=True)
    assert diagnoses == []
    assert any("non-tuple sequence" in message for _, message, _ in plain_warnings)  # the program's own
    assert watched_warnings == plain_warnings
    assert not any("autograd_doctor" in name for name in files)
    assert all(torch.equal(a, b) for a, b in zip(watched["result"], plain["result"]))
