"""Lint rules, one module per rule: its documentation (ruff style: What it
does / Why is this bad? / Example / Use instead / Fix safety / Known problems),
its check and its fix.

The walk (``checker.py``) only collects facts.  It calls a rule's hooks where
a fact arises (``on_call``, ``on_method_call``, ``on_data_attribute``, ``on_grad_read``,
``on_attribute_assign``, ``on_item_assign``, ``on_name_assign``, ``on_inplace_write``,
``on_loop_end``: see the tables below), where the rule notes candidates on the
scope (``scope.note(code, item)``); when it leaves a function it calls every
rule's ``check_scope(checker, scope)``, and once the file is read every
rule's ``check_file(checker)`` (for rules that need the whole file, such as
which optimizer steps which module).  A rule module defines ``RULE`` and any
of these functions; adding one is the module plus a line in ``RULE_MODULES``
(docs/lint.md, "Adding a rule").  ``autograd-doctor explain ADL001``, the
SARIF rules metadata and docs/lint.md are rendered from ``RULE``.
"""

from __future__ import annotations

from autograd_doctor.lint.rules.base import SECTIONS, Rule  # noqa: F401  (re-exported)
from autograd_doctor.lint.rules import (
    adl000_unparsable_file, adl001_write_to_saved_tensor, adl002_inplace_activation_input_reused,
    adl003_step_before_backward_of_older_graph, adl004_tensor_data_attribute,
    adl005_write_through_detached_alias, adl006_deepcopy_of_graph_tensor, adl007_clone_then_detach,
    adl008_tensor_constructor_on_tensor, adl009_tensor_of_losses,
    adl010_inplace_op_reads_view_of_target, adl011_stored_view_overwritten_in_loop,
    adl012_inplace_on_expanded, adl013_anomaly_detection_left_on, adl014_inplace_on_leaf,
    adl015_inplace_on_multi_view_output, adl016_requires_grad_typo, adl017_graph_tensor_kept_on_module,
    adl018_no_zero_grad_in_loop, adl019_backward_through_freed_graph, adl020_grad_of_non_leaf,
    adl021_out_of_place_result_discarded, adl022_clip_after_step, adl023_loss_summed_with_graph,
    adl024_loss_reaches_other_optimizer,
    adl025_inplace_after_full_backward_hook, adl026_step_without_backward, adl028_returned_graph_kept,
    adl029_clip_inside_accumulation_window, adl030_ema_skips_buffers, adl031_eval_loop_with_gradients,
    adl032_td_target_not_detached, adl033_no_grad_block_before_forward,
    adl034_loss_rebuilt_from_cut_value, adl035_backward_of_non_scalar,
    adl036_numpy_of_graph_tensor, adl037_closure_under_no_grad_step,
    adl038_differentiation_under_callers_no_grad, adl040_requires_grad_set_on_non_leaf,
    adl041_actor_loss_detaches_critic_value,
)

# The order rules check in: a write that fails at once (a leaf, a multi-view
# output) is reported as that, not again as a write to a saved tensor.
RULE_MODULES = (
    adl000_unparsable_file, adl014_inplace_on_leaf, adl015_inplace_on_multi_view_output,
    adl001_write_to_saved_tensor, adl002_inplace_activation_input_reused,
    adl003_step_before_backward_of_older_graph, adl004_tensor_data_attribute,
    adl005_write_through_detached_alias, adl006_deepcopy_of_graph_tensor, adl007_clone_then_detach,
    adl008_tensor_constructor_on_tensor, adl009_tensor_of_losses,
    adl010_inplace_op_reads_view_of_target, adl011_stored_view_overwritten_in_loop,
    adl012_inplace_on_expanded, adl013_anomaly_detection_left_on, adl016_requires_grad_typo,
    adl017_graph_tensor_kept_on_module, adl018_no_zero_grad_in_loop, adl019_backward_through_freed_graph,
    adl020_grad_of_non_leaf, adl021_out_of_place_result_discarded, adl022_clip_after_step,
    adl023_loss_summed_with_graph, adl024_loss_reaches_other_optimizer, adl025_inplace_after_full_backward_hook,
    adl026_step_without_backward, adl028_returned_graph_kept, adl029_clip_inside_accumulation_window,
    adl030_ema_skips_buffers, adl031_eval_loop_with_gradients, adl032_td_target_not_detached,
    adl033_no_grad_block_before_forward, adl034_loss_rebuilt_from_cut_value, adl035_backward_of_non_scalar,
    adl036_numpy_of_graph_tensor, adl037_closure_under_no_grad_step,
    adl038_differentiation_under_callers_no_grad, adl040_requires_grad_set_on_non_leaf,
    adl041_actor_loss_detaches_critic_value,
)
_SCOPE_CHECKS = [m.check_scope for m in RULE_MODULES if hasattr(m, "check_scope")]
# (rule code, check): an opt-in rule's whole-file check is skipped when the
# selection leaves the rule out (ADL030 and ADL031 cost a sixth of the time).
_FILE_CHECKS = [(m.RULE.code, m.check_file) for m in RULE_MODULES if hasattr(m, "check_file")]


HOOK_NAMES = ("on_call", "on_method_call", "on_data_attribute", "on_grad_read", "on_attribute_assign",
              "on_item_assign", "on_name_assign", "on_inplace_write", "on_loop_end", "on_local_call")


def _hooks(name: str) -> tuple:
    assert name in HOOK_NAMES, name
    return tuple(getattr(m, name) for m in RULE_MODULES if hasattr(m, name))


# What the walk calls, where the fact arises, for the rules that look at one
# node (see "Hooks" in this package's docstring).
CALL_HOOKS = _hooks("on_call")                          # (checker, call, qualname)
METHOD_CALL_HOOKS = _hooks("on_method_call")            # (checker, call, call.func)
DATA_ATTRIBUTE_HOOKS = _hooks("on_data_attribute")      # (checker, `x.data` node)
GRAD_READ_HOOKS = _hooks("on_grad_read")                # (checker, a read of `x.grad`)
ATTRIBUTE_ASSIGN_HOOKS = _hooks("on_attribute_assign")  # (checker, target, value, statement)
ITEM_ASSIGN_HOOKS = _hooks("on_item_assign")            # (checker, `x.attr[i]` target, value, statement)
NAME_ASSIGN_HOOKS = _hooks("on_name_assign")            # (checker, name, value)
INPLACE_WRITE_HOOKS = _hooks("on_inplace_write")        # (checker, name, operands, node)
LOOP_END_HOOKS = _hooks("on_loop_end")                  # (checker, loop)
LOCAL_CALL_HOOKS = _hooks("on_local_call")              # (checker, `f(...)` / `self.f(...)` call)

ALL_RULES: list[Rule] = sorted((m.RULE for m in RULE_MODULES), key=lambda r: r.code)
RULES_BY_CODE: dict[str, Rule] = {r.code: r for r in ALL_RULES}
OPT_IN_CODES: frozenset[str] = frozenset(r.code for r in ALL_RULES if not r.default)


def check_scope(checker, scope) -> None:
    """Run every rule on the events of one finished function (or the module)."""
    for check in _SCOPE_CHECKS:
        check(checker, scope)


def check_file(checker, skipped: frozenset = frozenset()) -> None:
    """Run the rules that need the whole file, once it is read, but those in ``skipped``."""
    for code, check in _FILE_CHECKS:
        if code not in skipped:
            check(checker)


def rule_documentation(code: str) -> str | None:
    """Return the markdown explanation of lint ``code`` (``None`` if unknown).

    >>> rule_documentation("ADL001").splitlines()[0]
    '# ADL001 write-to-saved-tensor'
    >>> rule_documentation("ADL999") is None
    True
    """
    rule = RULES_BY_CODE.get(code.strip().upper())
    return rule.documentation() if rule else None


def render_markdown() -> str:
    """All rules' docs, as the "Rules" part of docs/lint.md (a table, then each rule)."""
    rows = "".join(f"| {r.code} | {r.name} | {'yes' if r.default else 'opt-in'} | "
                   f"{r.summary.replace('|', '/')} |\n" for r in ALL_RULES)
    return ("| code | name | default | summary |\n| --- | --- | --- | --- |\n" + rows + "\n"
            + "\n".join(r.documentation(level=3) for r in ALL_RULES))


MARKER = "\n<!-- rules: generated from autograd_doctor/lint/rules/ -->\n"


def update_docs(path: str) -> None:
    """Rewrite everything after the generated-rules marker of docs/lint.md."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if MARKER not in text:
        raise ValueError(f"{path} has no line {MARKER.strip()!r}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.split(MARKER, 1)[0] + MARKER + "\n" + render_markdown())
