"""AD303 (deepcopy of non-leaf tensors) and AD304 (torch.tensor copies) on real programs."""

import copy

import pytest
import torch

from helpers import apply_help, run_plain, run_program

from autograd_doctor.analysis.copies import (
    DEEPCOPY_MESSAGE, deepcopy_error_diagnosis, find_non_leaf_tensors, tensor_copy_diagnosis,
)

DEEPCOPY_PROGRAM = """
    import copy
    import torch
    from torch import nn
    from autograd_doctor.analysis.copies import explain_deepcopy_failure

    class Cache:
        def __init__(self):
            self.h = None

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.cache = Cache()

        def forward(self, x):
            h = torch.tanh(self.fc(x))
            self.cache.h = h  # STORED
            return h

    model = Model()
    model(torch.randn(2, 3)).sum()
    DIAGNOSIS = None
    try:
        twin = copy.deepcopy(model)  # DEEPCOPY
    except RuntimeError as error:
        DIAGNOSIS = explain_deepcopy_failure(model, error)
        raise
"""


def test_deepcopy_of_module_names_the_attribute_path_and_where_it_was_stored(tmp_path):
    outcome = run_program(tmp_path, DEEPCOPY_PROGRAM)
    assert DEEPCOPY_MESSAGE in str(outcome.error)
    diagnosis = _diagnosis_from(outcome)
    assert diagnosis.code == "AD303"
    assert diagnosis.primary.line == outcome.line("DEEPCOPY")
    assert diagnosis.extra["non_leaf_paths"] == ["model.cache.h"]
    assert {loc.role: loc.line for loc in diagnosis.related}["stored"] == outcome.line("STORED")
    # A record the forward stores and no other method reads: detach it where it is stored.
    assert diagnosis.help[0].replacement == "self.cache.h = h.detach()"
    # Then the change that leaves the original alone: deepcopy's memo gets the values.
    assert diagnosis.help[1].message.startswith("or give deepcopy the values of model.cache.h")
    assert diagnosis.help[1].replacement == (
        "twin = copy.deepcopy(model, {id(model.cache.h): model.cache.h.detach().clone()})")
    namespace = run_plain(tmp_path, outcome.source.replace("twin = copy.deepcopy(model)  # DEEPCOPY",
                                                           diagnosis.help[1].replacement), "memo.py")
    assert namespace["DIAGNOSIS"] is None
    twin, model = namespace["twin"], namespace["model"]
    assert torch.equal(twin.cache.h, model.cache.h) and twin.cache.h.grad_fn is None
    assert model.cache.h.grad_fn is not None  # the original keeps its graph
    fixed = outcome.source.replace("self.cache.h = h  # STORED", "self.cache.h = h.detach()")
    namespace = run_plain(tmp_path, fixed)
    assert namespace["DIAGNOSIS"] is None


def _diagnosis_from(outcome):
    # explain_deepcopy_failure stored the diagnosis in the program's module globals before re-raising.
    frame_globals = outcome.error.__traceback__
    while frame_globals.tb_next is not None and frame_globals.tb_frame.f_code.co_filename != outcome.path:
        frame_globals = frame_globals.tb_next
    return frame_globals.tb_frame.f_globals["DIAGNOSIS"]


def test_deepcopy_of_a_non_leaf_tensor_suggests_detach_clone(tmp_path):
    source = """
        import copy
        import torch
        from autograd_doctor.analysis.copies import explain_deepcopy_failure
        x = torch.ones(3, requires_grad=True)
        y = x * 2
        DIAGNOSIS = None
        try:
            snapshot = copy.deepcopy(y)  # DEEPCOPY
        except RuntimeError as error:
            DIAGNOSIS = explain_deepcopy_failure(y, error)
            raise
    """
    outcome = run_program(tmp_path, source)
    diagnosis = _diagnosis_from(outcome)
    assert diagnosis.primary.line == outcome.line("DEEPCOPY")
    assert diagnosis.help[0].replacement == "snapshot = y.detach().clone()"
    fixed = outcome.source.replace("snapshot = copy.deepcopy(y)  # DEEPCOPY", "snapshot = y.detach().clone()")
    namespace = run_plain(tmp_path, fixed)
    assert not namespace["snapshot"].requires_grad


def test_find_non_leaf_tensors_walks_containers_with_cycles():
    w = torch.ones(2, requires_grad=True)
    node = {"leaf": w, "mid": [w * 2, (w + 1,)]}
    node["self"] = node

    class Holder:
        pass

    holder = Holder()
    holder.state = node
    holder.back = holder
    paths = [path for path, _ in find_non_leaf_tensors(holder, "holder")]
    assert paths == ["holder.state['mid'][0]", "holder.state['mid'][1][0]"]


def test_find_non_leaf_tensors_sees_buffers_and_dataclasses():
    import dataclasses

    @dataclasses.dataclass
    class State:
        h: torch.Tensor

    model = torch.nn.Linear(2, 2)
    out = model(torch.ones(2))
    model.register_buffer("running", out)
    state = State(out * 2)
    assert [p for p, _ in find_non_leaf_tensors(model, "model")] == ["model.running"]
    assert [p for p, _ in find_non_leaf_tensors([state], "states")] == ["states[0].h"]


def test_deepcopy_diagnosis_ignores_other_errors():
    assert deepcopy_error_diagnosis(RuntimeError("something else"), object()) is None


def test_deepcopy_of_leaves_works_and_keeps_requires_grad():
    x = torch.ones(2, requires_grad=True)
    assert copy.deepcopy(x).requires_grad and find_non_leaf_tensors(x, "x") == []


def _watched_tensor_program(body: str) -> str:
    return """
        import torch
        from autograd_doctor.analysis.copies import tensor_copy_diagnosis
        from autograd_doctor.recording.frames import capture_user_stack
        FOUND = []

        original_tensor = torch.tensor

        def checked_tensor(*args, **kwargs):
            FOUND.append(tensor_copy_diagnosis(args, kwargs, capture_user_stack(1, limit=3)))
            return original_tensor(*args, **kwargs)

        torch.tensor = checked_tensor

        w = torch.ones(3, requires_grad=True)
        l1 = (w * 2).sum()
        l2 = (w * 3).sum()
    """ + body


def _run_restoring_torch_tensor(tmp_path, source, name="program.py"):
    import warnings

    original = torch.tensor
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's own copy warnings are beside the point here
            return run_plain(tmp_path, source, name=name)
    finally:
        torch.tensor = original


def test_torch_tensor_of_losses_suggests_stack_and_the_fix_keeps_the_graph(tmp_path):
    source = _watched_tensor_program("""
        total = torch.tensor([l1, l2]).sum()  # COPY
        torch.tensor = original_tensor
    """)
    namespace = _run_restoring_torch_tensor(tmp_path, source)
    diagnosis = namespace["FOUND"][0]
    assert diagnosis.code == "AD304" and diagnosis.severity == "warning"
    import textwrap

    assert diagnosis.primary.line == [i for i, l in enumerate(textwrap.dedent(source).splitlines(), 1)
                                      if "# COPY" in l][0]
    assert diagnosis.help[0].replacement == "total = torch.stack([l1, l2]).sum()"
    fixed = source.replace("total = torch.tensor([l1, l2]).sum()  # COPY", diagnosis.help[0].replacement)
    fixed_namespace = _run_restoring_torch_tensor(tmp_path, fixed, name="fixed.py")
    fixed_namespace["total"].backward()
    assert torch.equal(fixed_namespace["w"].grad, torch.full((3,), 5.0))


def test_torch_tensor_of_one_tensor_suggests_detach_clone(tmp_path):
    source = _watched_tensor_program("""
        copy_of = torch.tensor(l1 * w)  # COPY
        torch.tensor = original_tensor
    """)
    namespace = _run_restoring_torch_tensor(tmp_path, source)
    diagnosis = namespace["FOUND"][0]
    assert [h.replacement for h in diagnosis.help] == ["copy_of = l1 * w", "copy_of = (l1 * w).detach().clone()"]


def test_torch_tensor_of_plain_data_is_not_reported():
    assert tensor_copy_diagnosis(([1.0, 2.0],), {}) is None
    assert tensor_copy_diagnosis((torch.ones(2),), {}) is None
    assert tensor_copy_diagnosis((), {"data": [torch.ones(1, requires_grad=True)]}).code == "AD304"
