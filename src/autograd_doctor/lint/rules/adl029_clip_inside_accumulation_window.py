"""ADL029: gradient clipping on every micro-batch of a gradient-accumulation window:
each clip rescales the partial sum gathered so far, not the window's gradient."""

from __future__ import annotations

import ast

from autograd_doctor.lint.rules.adl018_no_zero_grad_in_loop import _remainder_test, _stepped_optimizer
from autograd_doctor.lint.rules.adl022_clip_after_step import _clip_in, _is_backward
from autograd_doctor.lint import names as N
from autograd_doctor.lint.rules.base import Rule
from autograd_doctor.lint.walk import own_nodes

RULE = Rule(
    code="ADL029", name="clip-inside-accumulation-window",
    summary="Gradients clipped after every micro-batch's backward in a loop that steps (and clears) only every "
            "k-th iteration: each clip rescales a partial sum, not the window's gradient.",
    what_it_does="""In a `for`/`while` loop whose body runs `backward()` on every iteration and
steps its one optimizer only inside an accumulation window's `if`
(`if (step + 1) % accumulation_steps == 0:`, with the optimizer's `zero_grad()`
in the same `if`, and no clear of it, or of any module, outside the `if`),
finds a call of `torch.nn.utils.clip_grad_norm_` (or `clip_grad_value_`,
`clip_grad_norm`), also inside a plain `if` (`if max_grad_norm > 0:`), that runs
after the backward on every iteration, outside the window's `if`.  The clip's
parameters must be those of a module the optimizer steps (`model.parameters()`
with the optimizer built over `model.parameters()`), or the optimizer's own
modules must be unknown in the file (an optimizer handed in as an argument).
The optimizer is known by its name (`optimizer.step()`, `scaler.step(opt)`) or
by its constructor: a receiver every binding of which in the file calls a
`torch.optim` optimizer class (`adam = torch.optim.Adam(net.parameters())`); a
learning-rate scheduler's `step()` is none.""",
    why_bad="""`backward()` adds into `.grad`, so within a window the gradients are a running
sum of the micro-batches seen so far.  A clip on every micro-batch rescales
that partial sum: the first micro-batches' contributions are shrunk again and
again, and the step applies a gradient that depends on the order of the
micro-batches, neither the window's gradient nor the window's gradient clipped
(GPT2-Chinese's `train.py`).  Nothing raises; the update is silently wrong
whenever a clip bites.""",
    example="""for step, batch in enumerate(loader):
    loss = model(batch) / accumulation_steps
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    if (step + 1) % accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()""",
    use_instead="""for step, batch in enumerate(loader):
    loss = model(batch) / accumulation_steps
    loss.backward()
    if (step + 1) % accumulation_steps == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()""",
    fix_safety="No automatic fix: moving the clip into the window changes the updates (as it should).",
    known_problems="""Only a window written as a remainder test (`%`) in the loop's own body is
recognised (not `accelerator.sync_gradients`, a counter compared with `==`, or
a window in a helper), and only a loop that steps one optimizer.  A clip in a
helper function called on every micro-batch is not seen.""",
)


def check_scope(checker, scope) -> None:
    """Only a file with an optimizer step inside a loop is read again (check_file)."""
    if scope.steps and scope.finished_loops and any(
            a < seq < b for seq, _, _ in scope.steps for a, b in scope.finished_loops):
        checker.notes["ADL029 loop steps"] = [True]


def check_file(checker) -> None:
    """Every loop of the file with a clip on each micro-batch of a window (read from
    the tree only when a loop steps an optimizer and the source names a clip function
    and a remainder)."""
    source = checker.source
    if "clip_grad" not in source or "%" not in source:
        return
    if not checker.notes.get("ADL029 loop steps") and not _built_optimizers(checker):
        return  # no step of an optimizer named so in a loop, and no optimizer built in the file
    for loop in ast.walk(checker.tree):
        if isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
            _check_loop(checker, loop)


def _check_loop(checker, loop) -> None:
    body = loop.body
    windows = [stmt for stmt in body if isinstance(stmt, ast.If) and _remainder_test(stmt.test)]
    if len(windows) != 1:
        return
    window = windows[0]
    outside = [stmt for stmt in body if stmt is not window]
    outside_calls = [n for n in own_nodes(outside) if isinstance(n, ast.Call)]
    window_calls = [n for n in own_nodes(window.body) if isinstance(n, ast.Call)]
    stepped = {_window_step(checker, c) for c in window_calls} - {None}
    if len(stepped) != 1 or any(_window_step(checker, c) for c in outside_calls) or \
            any(_window_step(checker, c) for c in own_nodes(window.orelse) if isinstance(c, ast.Call)):
        return
    optimizer = stepped.pop()
    if any(isinstance(c.func, ast.Attribute) and c.func.attr == "zero_grad" for c in outside_calls):
        return  # cleared on every iteration: ADL018's case, no window
    clear = next((c for c in window_calls if isinstance(c.func, ast.Attribute) and c.func.attr == "zero_grad"
                  and checker.text(c.func.value) == optimizer), None)
    if clear is None:
        return  # the gradients are not shown to be kept across the window
    backwards = [c for c in outside_calls if _is_backward(c)]
    if not backwards:
        return
    for stmt in outside:
        clip = _clip_in(checker, stmt)
        if clip is None or not any(b.lineno < clip.lineno for b in backwards) or clip.lineno > window.lineno:
            continue
        if any(b.lineno > clip.lineno for b in backwards):
            return  # a backward after the clip: the window's last gradient is not the clipped one
        if _clips_what_the_optimizer_steps(checker, clip, optimizer):
            _report(checker, clip, window, optimizer, clear)
        return


def _window_step(checker, call) -> str | None:
    """The optimizer `call` steps: one named like an optimizer (`optimizer.step()`,
    `scaler.step(opt)`), or `X.step()` where every binding of `X` in the file builds a
    torch optimizer (`adam = torch.optim.Adam(net.parameters())`): a name that does not
    say "opt" is still an optimizer when its constructor says so.  A learning-rate
    scheduler (`torch.optim.lr_scheduler.*`) is none."""
    named = _stepped_optimizer(checker, call)
    if named is not None:
        return named
    func = call.func
    if call.args or call.keywords or not isinstance(func, ast.Attribute) or func.attr != "step" or \
            not isinstance(func.value, (ast.Name, ast.Attribute)):
        return None
    text = checker.text(func.value)
    return text if text in _built_optimizers(checker) else None


def _built_optimizers(checker) -> set:
    """The names (texts) every binding of which in the file is a call of a torch
    optimizer class (`torch.optim.SGD(...)`, `optim.Adam(...)`, `AdamW(...)` imported
    from `torch.optim`); a name also bound to anything else, or unpacked, is left out."""
    cached = checker.notes.get("ADL029 built optimizers")
    if cached is not None:
        return cached[0]
    built, other = set(), set()
    for node in ast.walk(checker.tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            for target in targets:
                if not isinstance(target, (ast.Name, ast.Attribute)):
                    for n in ast.walk(target):
                        if isinstance(n, (ast.Name, ast.Attribute)):
                            other.add(checker.text(n))
                    continue
                (built if _is_optimizer_call(checker, value) else other).add(checker.text(target))
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.withitem, ast.NamedExpr)):
            target = node.optional_vars if isinstance(node, ast.withitem) else node.target
            for n in ast.walk(target) if target is not None else ():
                if isinstance(n, (ast.Name, ast.Attribute)):
                    other.add(checker.text(n))
    result = built - other
    checker.notes["ADL029 built optimizers"] = [result]
    return result


def _is_optimizer_call(checker, value) -> bool:
    if not isinstance(value, ast.Call):
        return False
    q = checker.qualname(value.func) or ""
    return q.startswith("torch.optim.") and q.rsplit(".", 1)[-1] in N.OPTIMIZER_CLASSES and \
        not q.startswith("torch.optim.lr_scheduler.")


def _clips_what_the_optimizer_steps(checker, clip, optimizer: str) -> bool:
    """The clip's first argument is `M.parameters()` and the optimizer steps `M`'s
    parameters, or the file does not know which modules the optimizer steps."""
    if not clip.args:
        return False
    first = clip.args[0]
    if not (isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute)
            and first.func.attr == "parameters" and not first.args):
        return False
    owners = checker.training.optimizers.get(optimizer)
    return not owners or checker.text(first.func.value) in owners


def _report(checker, clip, window, optimizer: str, clear) -> None:
    name = clip.func.attr if isinstance(clip.func, ast.Attribute) else clip.func.id
    checker.report(
        "ADL029", clip,
        f"`{name}(...)` runs after every micro-batch's backward pass, but `{optimizer}` steps and clears the "
        f"gradients only when `{checker.text(window.test)}` (line {window.lineno}): each clip rescales the "
        f"partial sum of the window so far: whenever a clip bites, the step applies neither the window's gradient "
        f"nor its clipped value; clip once, inside the `if`, right before `{optimizer}.step()`",
        related=[(window.lineno, checker.col(window.lineno, window.col_offset), 0, "the accumulation window"),
                 (clear.lineno, checker.col(clear.lineno, clear.col_offset), 0,
                  "the gradients are cleared only here")])
