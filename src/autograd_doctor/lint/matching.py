"""Match a function's recorded events when the walk leaves it: a write after a
save with no re-binding in between (ADL001), a read after an in-place
activation (ADL002), writes through detach()/expand() aliases (ADL005,
ADL012), an optimizer step between backward passes (ADL003), `.data` in
gradient code (ADL004) and tensors-of-losses (ADL009)."""

from __future__ import annotations

from bisect import bisect_right

from autograd_doctor.lint import names as N
from autograd_doctor.lint.events import Scope

OPERATOR_TEXT = {"operator.mul": "*", "operator.truediv": "/", "operator.add": "+",
                 "operator.sub": "-", "operator.pow": "**", "operator.matmul": "@"}


def match_scope(checker, scope: Scope) -> None:
    """Report what the events of ``scope`` (one function) add up to."""
    def bound_between(name, lo, hi):
        b = scope.binds.get(name, ())
        i = bisect_right(b, lo)
        return i < len(b) and b[i] < hi

    def used_after(name, seq):
        u = scope.uses.get(name, ())
        b = scope.binds.get(name, ())
        j = bisect_right(b, seq)
        next_bind = b[j] if j < len(b) else None
        for use in u[bisect_right(u, seq):]:
            if next_bind is not None and next_bind < use and not scope.exclusive(seq, next_bind):
                return None
            if not scope.exclusive(seq, use):
                return use
        return None

    def backward_between(lo, hi):
        """A `backward()` (without retain_graph) ran between save and write: the
        graph, and what it saved, is gone by the time of the write."""
        return any(lo < s < hi and not scope.exclusive(s, hi) for s, _ in scope.backwards)

    reported = set()
    for w in scope.writes:
        if not w.grad_on:
            continue
        for seq, key, how, op_node in reversed(scope.saves.get(w.name, ())):
            if seq < w.seq and not bound_between(w.name, seq, w.seq) and op_node is not w.node \
                    and not scope.exclusive(seq, w.seq) and not backward_between(seq, w.seq):
                op = OPERATOR_TEXT.get(key.split(":")[0]) or \
                    key.replace("torch.nn.functional.", "F.").replace("torch.Tensor.", "Tensor.")
                entry = N.saves_table()[key]
                what = "its output" if how == "output" else "this input"
                checker.report("ADL001", w.node,
                               f"`{w.name}` is modified in place ({w.how}) after `{op}` on line "
                            f"{op_node.lineno} saved it for backward ({entry['grad_fn']} keeps "
                            f"{what}); backward() will fail or use the new values", w.fix,
                            related=[(op_node.lineno, checker.col(op_node.lineno, op_node.col_offset),
                                      checker.col(op_node.lineno, op_node.end_col_offset)
                                      if op_node.end_lineno == op_node.lineno else 0,
                                      f"saved here: {op} keeps {what}")])
                reported.add(id(w.node))
                break
    for seq, name, node, fix, module in scope.inplace_calls:
        if id(node) in reported:
            continue
        if used_after(name, seq):
            what = module or "this in-place activation"
            checker.report("ADL002", node,
                        f"{what} overwrites `{name}`, which is used again afterwards and will "
                        f"see the activated values", fix)
            reported.add(id(node))
    for w in scope.writes:
        if id(w.node) in reported or not w.grad_on:
            continue
        # Only a *name* bound to `.detach()` is confusing: `x.detach().add_(1)`
        # discards the alias, so it can only be meant to change `x`.
        source = w.detached_from if w.via != "detach" else ""
        if source and used_after(source, w.seq):
            checker.report("ADL005", w.node,
                        f"`{w.name}` shares memory with `{source}` (it came from `.detach()`); "
                        f"writing it in place also changes `{source}`, which is used afterwards")
            reported.add(id(w.node))
            continue
        if w.via == "expand" or w.expanded:
            checker.report("ADL012", w.node,
                           "in-place write to an `expand()`ed tensor: its elements share memory, "
                           "so one write changes many of them")
    if scope.backwards or scope.retain_backwards or scope.name in ("forward", "training_step") \
            or scope.name.startswith("train"):
        for node, message, fix in scope.data_uses:
            checker.report("ADL004", node, message, fix)
    for seq, node in scope.steps:
        before = [s for s, _ in scope.retain_backwards if s < seq]
        after = [s for s, _ in scope.backwards + scope.retain_backwards if s > seq]
        if before and after:
            checker.report("ADL003", node,
                        "optimizer step between `backward(retain_graph=True)` and a later "
                        "`backward()`: the step modifies in place the parameters the retained "
                        "graph saved")
    for name, node, fix in scope.loss_lists:
        if "loss" in name.lower() or name in scope.backward_names:
            checker.report("ADL009", node,
                        "`torch.tensor([...])` of tensors copies their values and cuts the graph; "
                        f"`{name}` will not backpropagate into them", fix)
