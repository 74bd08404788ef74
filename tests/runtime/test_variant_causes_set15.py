"""The general forms behind held-out set 15's misses (tests/errors/variants, `# set: 15`), each on a
program of its own and in another spelling than the variant's: the diagnosis names the marked line,
and its help, applied, makes the program compute what a hand-written version computes; and the cases
each change must leave alone (a correct near-twin runs silent under the doctor)."""

from __future__ import annotations

import os
import sys
import textwrap

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "errors"))

from catalogue import apply_suggestion, marked_line, run_plain, run_watched, write  # noqa: E402

import autograd_doctor  # noqa: E402


def diagnose(tmp_path, source, name="program"):
    """(source, diagnoses) of the program run under the doctor."""
    source = textwrap.dedent(source)
    error = run_watched(write(tmp_path, source, name))
    assert error is not None
    return source, autograd_doctor.diagnoses_of(error)


def silent(tmp_path, source, name="twin"):
    """The correct near-twin runs under the doctor without an error (and so without a report)."""
    assert run_watched(write(tmp_path, textwrap.dedent(source), name)) is None


def only(diagnoses, code):
    (found,) = [d for d in diagnoses if d.code == code]
    return found


def run_fixed(tmp_path, suggestion, name="program"):
    """The namespace of the program after the suggestion is applied to the file it names."""
    target = tmp_path / os.path.basename(suggestion.location.file)
    target.write_text(apply_suggestion(target.read_text(), suggestion))
    error, namespace = run_plain(str(tmp_path / f"{name}.py"))
    assert error is None, error
    return namespace


def reference(tmp_path, source):
    error, namespace = run_plain(write(tmp_path, textwrap.dedent(source), "reference"))
    assert error is None, error
    return namespace


def same(a, b):
    return all(torch.allclose(x, y, atol=1e-6) for x, y in zip(a, b))


# ---- AD309: zero_grad() between backward() and the hand-written use of the gradients ---------------

CLIP_LOOP = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    net = nn.Linear(3, 2)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.5)
    norms = []
    for _ in range(3):
        net(torch.randn(4, 3)).pow(2).sum().backward()
{order}
    weights = [p.detach().clone() for p in net.parameters()]
    """
CLEAR = "        optimizer.zero_grad()  # CLEAR\n"
CLIP = ("        norms.append(sum(p.grad.norm() ** 2 for p in net.parameters()).sqrt())\n"
        "        optimizer.step()\n")


def test_gradients_cleared_between_backward_and_their_use_move_the_zero_grad_after_it(tmp_path):
    buggy = CLIP_LOOP.replace("{order}\n", CLEAR + CLIP)
    source, diagnoses = diagnose(tmp_path, buggy)
    found = only(diagnoses, "AD309")
    assert found.primary.line == marked_line(source, "CLEAR")
    assert found.help[0].replacement.splitlines()[-1] == "optimizer.zero_grad()"
    namespace = run_fixed(tmp_path, found.help[0])
    # The hand-written order: the norms are read and the step taken, then the gradients cleared.
    correct = reference(tmp_path, CLIP_LOOP.replace("{order}\n", CLIP + CLEAR))
    assert same(namespace["weights"], correct["weights"]) and same(namespace["norms"], correct["norms"])
    silent(tmp_path, CLIP_LOOP.replace("{order}\n", CLIP + CLEAR))


def test_a_frozen_parameter_read_after_zero_grad_is_still_the_frozen_help(tmp_path):
    # zero_grad() between backward() and the read, but the parameter read does not require grad:
    # its .grad was never computed, and the frozen parameter's help stays.
    _, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        net = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 1))
        net[0].requires_grad_(False)
        net(torch.randn(2, 3)).sum().backward()
        net.zero_grad(set_to_none=False)
        for p in net.parameters():
            p.data -= 0.1 * p.grad
        """)
    found = only(diagnoses, "AD309")
    assert "frozen" in found.primary.note


# ---- AD203: an overlapping write into a tensor its maker saved for backward ------------------------

DIFFS = """
    import torch

    torch.manual_seed(0)
    w = torch.randn(6, 2, requires_grad=True)
    h = torch.sigmoid(w * 3)
{write}
    h.pow(2).sum().backward()
    grad = w.grad
    """


def test_overlapping_write_into_a_saved_output_goes_into_a_copy(tmp_path):
    source, diagnoses = diagnose(tmp_path, DIFFS.replace("{write}", "    h[:-1].sub_(h[1:])  # WRITE"))
    found = only(diagnoses, "AD203")
    assert found.primary.line == marked_line(source, "WRITE")
    assert found.help[0].replacement.splitlines()[0] == "h = h.clone()"
    namespace = run_fixed(tmp_path, found.help[0])
    correct = reference(tmp_path, DIFFS.replace("{write}", "    h = torch.cat([h[:-1] - h[1:], h[-1:]])"))
    assert same([namespace["grad"]], [correct["grad"]])
    silent(tmp_path, DIFFS.replace("{write}", "    h = torch.cat([h[:-1] - h[1:], h[-1:]])"))


def test_overlapping_write_into_an_unsaved_tensor_keeps_the_operand_clone_first(tmp_path):
    # (w * 3) + 0 is made by an add, which saves nothing: cloning the operand is enough.
    _, diagnoses = diagnose(tmp_path, DIFFS.replace("torch.sigmoid(w * 3)", "w * 3 + 0").replace(
        "{write}", "    h[:-1].sub_(h[1:])"))
    found = only(diagnoses, "AD203")
    assert found.help[0].replacement == "h[:-1].sub_(h[1:].clone())"


# ---- AD133: resize_() that grows rows the code then fills --------------------------------------------

GROW = """
    import torch

    torch.manual_seed(0)
    table = torch.randn(5, 2, requires_grad=True)


    def extend(block, rows):
        start = block.size(0)
{grow}
        block[start:].fill_(1.0)
        return block


    blocks = [extend(table[:k] * 2, 4) for k in (4, 2)]
    sum(b.sum() for b in blocks).backward()
    grad = table.grad
    values = [b.detach() for b in blocks]
    """


def test_resize_that_grows_rows_then_fills_them_is_a_concatenation(tmp_path):
    # The first call's sizes match (4 rows into 4): the reshape was right for it, not for the second.
    source, diagnoses = diagnose(tmp_path, GROW.replace("{grow}", "        block.resize_(rows, block.size(1))  # GROW"))
    found = only(diagnoses, "AD133")
    assert found.primary.line == marked_line(source, "GROW")
    assert "torch.cat" in found.help[0].replacement
    namespace = run_fixed(tmp_path, found.help[0])
    correct = reference(tmp_path, GROW.replace(
        "{grow}", "        block = torch.cat([block, torch.zeros(rows - start, 2)])"))
    assert same([namespace["grad"]] + namespace["values"], [correct["grad"]] + correct["values"])
    silent(tmp_path, GROW.replace("{grow}", "        block = torch.cat([block, torch.zeros(rows - start, 2)])"))


def test_resize_that_flattens_without_filling_is_still_the_reshape(tmp_path):
    _, diagnoses = diagnose(tmp_path, """
        import torch

        x = torch.randn(2, 3, 4, requires_grad=True)


        def flat(h):
            h.resize_(h.size(0), h.size(1) * h.size(2))
            return h


        flat(x * 1).sum().backward()
        """)
    assert ".reshape(" in only(diagnoses, "AD133").help[0].replacement


# ---- AD235: legacy tensor constructors of computed values --------------------------------------------

POLAR = """
    import torch
    from torch.autograd.functional import jacobian


    def to_polar(p):
        return {value}  # OUT


    jac = jacobian(to_polar, torch.tensor([0.6, 0.8], dtype=torch.float64), strict=True)
    """


def test_double_tensor_constructor_under_strict_jacobian_becomes_a_stack(tmp_path):
    value = "torch.DoubleTensor([p.norm(), torch.atan2(p[1], p[0])])"
    source, diagnoses = diagnose(tmp_path, POLAR.replace("{value}", value))
    found = only(diagnoses, "AD235")
    assert found.primary.line == marked_line(source, "OUT")
    assert "torch.stack([p.norm(), torch.atan2(p[1], p[0])]).double()" in found.help[0].replacement
    namespace = run_fixed(tmp_path, found.help[0])
    correct = reference(tmp_path, POLAR.replace("{value}", "torch.stack([p.norm(), torch.atan2(p[1], p[0])])"))
    assert same([namespace["jac"]], [correct["jac"]])
    silent(tmp_path, POLAR.replace("{value}", "torch.stack([p.norm(), torch.atan2(p[1], p[0])])"))


# ---- AD234: (output, aux) returned as a list ---------------------------------------------------------

AUX = """
    import torch
    from torch.func import grad

    w = torch.tensor([0.5, -1.0, 2.0])


    def loss_fn(w):
        loss = (w ** 2).sum()
        return {value}  # RETURN


    g, aux = grad(loss_fn, has_aux=True)(w)
    """


def test_aux_pair_returned_as_a_list_becomes_a_tuple(tmp_path):
    source, diagnoses = diagnose(tmp_path, AUX.replace("{value}", "[loss, {'loss': loss.detach()}]"))
    found = only(diagnoses, "AD234")
    assert found.primary.line == marked_line(source, "RETURN")
    namespace = run_fixed(tmp_path, found.help[0])
    correct = reference(tmp_path, AUX.replace("{value}", "loss, {'loss': loss.detach()}"))
    assert same([namespace["g"]], [correct["g"]]) and namespace["aux"]["loss"] == correct["aux"]["loss"]
    silent(tmp_path, AUX.replace("{value}", "loss, {'loss': loss.detach()}"))


def test_a_list_of_three_is_not_read_as_the_pair(tmp_path):
    _, diagnoses = diagnose(tmp_path, AUX.replace("{value}", "[loss, loss.detach(), 1]"))
    assert all(not s.replacement for s in only(diagnoses, "AD234").help)


# ---- AD238: dual_level() called as a statement -------------------------------------------------------

LEVEL = """
    import torch
    from torch.autograd.forward_ad import dual_level, make_dual, unpack_dual


    def directional(f, x, v):
{body}


    slope = directional(torch.sin, torch.tensor([0.1, 0.2]), torch.tensor([1.0, 0.0]))
    """
BODY = """        out = f(make_dual(x, v))
        return unpack_dual(out).tangent"""


def test_dual_level_called_without_with_is_named_and_entered(tmp_path):
    body = "        dual_level()  # LEVEL\n" + BODY
    source, diagnoses = diagnose(tmp_path, LEVEL.replace("{body}", body))
    found = only(diagnoses, "AD238")
    assert found.primary.line == marked_line(source, "LEVEL")
    namespace = run_fixed(tmp_path, found.help[0])
    correct = reference(tmp_path, LEVEL.replace("{body}", "        with dual_level():\n" + textwrap.indent(
        textwrap.dedent(BODY), " " * 12)))
    assert same([namespace["slope"]], [correct["slope"]])
    silent(tmp_path, LEVEL.replace("{body}", "        with dual_level():\n" + textwrap.indent(
        textwrap.dedent(BODY), " " * 12)))


def test_make_dual_without_any_level_call_keeps_its_primary(tmp_path):
    source, diagnoses = diagnose(tmp_path, LEVEL.replace("{body}", BODY.replace(
        "        out = f(make_dual(x, v))", "        out = f(make_dual(x, v))  # DUAL")))
    assert only(diagnoses, "AD238").primary.line == marked_line(source, "DUAL")


# ---- AD136: every read of ctx.saved_tensors in one statement ----------------------------------------

PRODUCT = """
    import torch
    from torch.utils.checkpoint import checkpoint


    class Product(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, grad_output):
{body}


    torch.manual_seed(0)
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    checkpoint(lambda x, y: Product.apply(x * 2, y), a, b, use_reentrant=False).sum().backward()
    grads = [a.grad, b.grad]
    """


def test_saved_tensors_read_twice_in_one_statement_are_read_once_before_it(tmp_path):
    body = "            return grad_output * ctx.saved_tensors[1], grad_output * ctx.saved_tensors[0]  # READ"
    source, diagnoses = diagnose(tmp_path, PRODUCT.replace("{body}", body))
    found = only(diagnoses, "AD136")
    assert found.primary.line == marked_line(source, "READ")
    namespace = run_fixed(tmp_path, found.help[0])
    twin = PRODUCT.replace("{body}", "            a, b = ctx.saved_tensors\n"
                           "            return grad_output * b, grad_output * a")
    assert same(namespace["grads"], reference(tmp_path, twin)["grads"])
    silent(tmp_path, twin)
