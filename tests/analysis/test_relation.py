"""relation() and describe(): each row of docs/copy-semantics.md, checked on real tensors."""

import copy
import doctest

import torch

from autograd_doctor.analysis import copies, gradient_path, relation as relation_module
from autograd_doctor.analysis.relation import describe, relation


def _source():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    return x, x * 3


def test_detach_shares_storage_and_version_counter_without_grad():
    _, y = _source()
    r = relation(y, y.detach())
    assert r.kind == "detach"
    assert r.shares_storage and r.shared_version_counter is True
    assert not r.gradients_flow and r.writes_propagate
    assert r.verdict.startswith("b is a detach() of a")


def test_detach_write_changes_original_and_bumps_its_version():
    _, y = _source()
    z = y.detach()
    before = y._version
    z[0] = 999.0
    assert y[0].item() == 999.0 and y._version == before + 1


def test_data_shares_storage_but_not_the_version_counter():
    _, y = _source()
    r = relation(y, y.data)
    assert r.kind == "data"
    assert r.shares_storage and r.shared_version_counter is False
    assert "does NOT notice" in r.verdict


def test_clone_copies_storage_and_keeps_gradients():
    x, y = _source()
    c = y.clone()
    r = relation(y, c)
    assert r.kind == "clone" and not r.shares_storage
    assert r.grad_path_b_to_a == ["CloneBackward0", "MulBackward0"]
    c.sum().backward()
    assert torch.equal(x.grad, torch.tensor([3.0, 3.0]))


def test_detach_clone_is_an_independent_copy():
    _, y = _source()
    r = relation(y, y.detach().clone())
    assert r.kind == "detach_clone"
    assert not r.shares_storage and not r.gradients_flow and r.equal_values


def test_deepcopy_of_leaf_is_independent_with_same_requires_grad():
    x, _ = _source()
    d = copy.deepcopy(x)
    r = relation(x, d)
    assert r.kind == "deepcopy" and not r.shares_storage and d.requires_grad


def test_views_share_the_version_counter_and_the_graph():
    _, y = _source()
    r = relation(y, y[1:])
    assert r.kind == "view" and r.shared_version_counter is True
    assert r.grad_path_b_to_a[0] == "SliceBackward0"


def test_relation_does_not_change_versions_or_values():
    _, y = _source()
    z = y.detach()
    values = y.detach().clone()
    relation(y, z)
    assert y._version == 0 and z._version == 0 and torch.equal(y.detach(), values)


def test_relation_leaves_saved_tensors_valid_for_backward():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.sigmoid(x)  # saves its output
    relation(y, y.detach())
    y.sum().backward()
    assert x.grad is not None


def test_unrelated_tensors():
    assert relation(torch.zeros(2), torch.ones(2)).kind == "unrelated"


def test_describe_reports_view_leaf_and_grad_fn():
    x = torch.zeros(4, requires_grad=True)
    d = describe(x.detach()[1:])
    assert d.is_view and d.base_shape == [4] and d.byte_range == (4, 16)
    assert describe(x).to_dict()["requires_grad"] is True
    assert "view of a [4] tensor" in str(d)


def test_to_dict_and_str():
    _, y = _source()
    r = relation(y, y.detach())
    data = r.to_dict()
    assert data["kind"] == "detach" and data["shared_version_counter"] is True
    assert str(r).splitlines()[0] == r.verdict


def test_describe_knows_saved_tensors_inside_watch():
    import autograd_doctor

    x = torch.ones(3, requires_grad=True)
    with autograd_doctor.watch(mode="full"):  # saves are recorded in the full mode only
        y = torch.sigmoid(x)
        assert describe(y).saved_versions == [0]
    assert describe(torch.ones(2)).saved_versions is None


def test_docstring_examples():
    for module in (relation_module, gradient_path, copies):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, module.__name__


def test_state_dict_entries_share_storage_and_version_counter():
    # model.state_dict() holds detached views of the parameters, not copies (AD217)
    model = torch.nn.Linear(2, 2)
    entry = model.state_dict()["weight"]
    r = relation(model.weight, entry)
    assert r.kind == "detach"
    assert r.shares_storage and r.shared_version_counter is True
    with torch.no_grad():
        model.weight.add_(1.0)
    assert torch.equal(entry, model.weight.detach())
    copied = {name: value.clone() for name, value in model.state_dict().items()}["weight"]
    assert not relation(model.weight, copied).shares_storage
