"""Turning recorded events and exceptions into diagnoses."""

from __future__ import annotations

import ast
import re
import sys
from typing import Protocol

import torch

from autograd_doctor.analysis.live_values import chain_value
from autograd_doctor import compat
from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.fixes import (
    WriteFacts, positional_inplace_flag, inplace_module_definition_fix, inplace_chain_fix, metadata_inplace_fix,
    piece_chain_rebinding_fix,
    loop_targets, method_call_fixes, no_grad_fix, unbound_loop_fix, unbinding_loop, write_fixes,
    written_root as written_root_of,
)
from autograd_doctor.analysis.describe import (
    assigned_name, is_parameter_of_enclosing_function, plain_alias, tensor_info, written_name,
)
from autograd_doctor.analysis.naming import (
    module_path, modules_in, parameter_path, user_frames, variable_for, variable_with_memory_of,
)
from autograd_doctor.analysis.stale_optimizer import Budget, optimizers_holding
from autograd_doctor.analysis.leaf_writes import (
    container_entry_helps, container_entry_target, gradient_scaling_helps, input_leaf_helps, leaf_write_helps, leaf_write_intent,
    owner_frame,
)
from autograd_doctor.analysis.module_weight_writes import (
    clone_at_earlier_use, weight_name, what_the_module_does, writes_its_own_weight,
)
from autograd_doctor.analysis.source_scope import frame_values, live_frame
from autograd_doctor.analysis.saved_nodes import describe_slot, node_note, operator_of
from autograd_doctor.analysis import state_cut_placement, step_order
from autograd_doctor.analysis.crossing_values import crossing_value_help
from autograd_doctor.analysis.repeated_activation import repeated_activation_help
from autograd_doctor.analysis.retained_carried_state import carried_state_through_retained_graph
from autograd_doctor.analysis.two_reads import read_before_and_after, two_reads_advice
from autograd_doctor.recording.events import BackwardCall, SavedRecord, WriteEvent, storage_key
from autograd_doctor.recording.leaf_sites import leaf_creation_site
from autograd_doctor.recording.frames import Site, in_installed_package
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.diagnosis.source import (
    location_of, parse_file, parse_quietly, replace_node_text, segment, statement_at, statement_location,
)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _write_facts(event: WriteEvent | None, tensor) -> WriteFacts:
    facts = WriteFacts(floating=bool(tensor is not None and tensor.is_floating_point()))
    if event is not None:
        facts.value_is_scalar = getattr(event, "value_is_scalar", None)
        facts.index_is_bool_mask = bool(getattr(event, "index_is_bool_mask", False))
        facts.index_kinds = getattr(event, "index_kinds", None)
        facts.mask_missing_dims = getattr(event, "mask_missing_dims", None)
        facts.container_kinds = getattr(event, "container_kinds", None) or {}
        op = (getattr(event, "op", None) or "").rsplit(".", 1)[-1]
        # `x[i] += v` on a tensor x runs `+=` on the view x[i]; on a list it runs on the whole
        # tensor the list holds, and rebinding the list's entry is then out of place.
        facts.container_element = (op.startswith("__i") and op.endswith("__") and tensor is not None
                                   and tensor._base is None)
    return facts


def _loop_note(event: WriteEvent) -> str | None:
    values = ", ".join(f"{name} = {value}" for name, value in sorted(event.loop_values.items()))
    if event.execution > 1:
        text = f"this was the {_ordinal(event.execution)} time this line wrote into memory that autograd saved"
        return text + (f" (with {values})" if values else "")
    if values:
        return f"the write happened with {values}"
    return None


UNSEEN_WRITE = ("the write was not seen by autograd-doctor ({why}); it happened after the save and before "
                "this backward()")
# Why a write goes unseen, by how writes were captured (watch(capture=...)).
UNSEEN_WHY = {
    "patch": ("the default capture wraps torch's in-place functions, and an `out=` write or a write from C++ "
              "code goes around them; `autograd-doctor run --capture mode` or watch(capture=\"mode\") also sees "
              "`out=` writes"),
    "mode": "it ran in C++ code, through torch.ops, outside watch(), or before the doctor started",
}


class ModifiedSave(Protocol):
    """A saved tensor that was modified in place, as `stale_saved_diagnosis` needs it: the
    full mode hands its SavedRecord (which knows the save's site), the light mode a
    `probe.ProbedSave` (which does not)."""

    alias: torch.Tensor  # a detach()ed alias of the saved tensor: same storage and version counter
    version: int  # the version autograd saved it at
    writes: tuple  # the WriteEvents that moved the version, the first being the culprit

    @property
    def site(self) -> Site | None: ...


def stale_saved_diagnosis(record: ModifiedSave, node, slot: str | None,
                          backward_stack: tuple[Site, ...], capture: str = "patch",
                          recorder=None) -> Diagnosis:
    """AD101 (or AD103 when an optimizer did the write): a saved tensor was modified in place.

    `capture` is how writes were seen (watch(capture=...)): a note about a write that was not
    seen names the capture that would see it."""
    node_name = type(node).__name__ if node is not None else None
    frames = user_frames()
    write = record.writes[0] if record.writes else None
    target = write.target_ref() if write is not None and write.target_ref is not None else None
    optimizer = write.optimizer if write is not None else None

    save_site = record.site
    save_loc = location_of(save_site, role="saved",
                           note=f"saved here: {describe_slot(node_name, slot)} (version {record.version})")
    write_loc = None
    if write is not None and write.site is not None:
        label = f"modified here: version {write.version_before} -> {write.version_after}"
        if optimizer:
            label = f"modified here by {optimizer}.step(): version {write.version_before} -> {write.version_after}"
        write_loc = location_of(write.site, role="modified", note=label)
    backward_loc = location_of(backward_stack[0] if backward_stack else None, role="backward",
                               note="backward needed the old value here")

    alias = record.alias
    parameter = parameter_path(target if target is not None else alias, frames)
    name = _saved_tensor_name(alias, target, frames, write if write_loc is not None else None, save_site)
    info = tensor_info(alias, name, parameter, record.version, alias._version)

    code = codes.OPTIMIZER_MODIFIED_SAVED if optimizer else codes.SAVED_TENSOR_MODIFIED
    notes = []
    note = node_note(node_name, slot)
    if note:
        notes.append(note)
    helps: list[Suggestion] = []
    primary = write_loc
    related = [loc for loc in (save_loc, backward_loc) if loc is not None]

    if write is None:
        notes.append(UNSEEN_WRITE.format(why=UNSEEN_WHY.get(capture, UNSEEN_WHY["mode"])))
        primary = save_loc
        related = [loc for loc in (backward_loc,) if loc is not None]
    elif optimizer:
        what = parameter or name or "a parameter"
        notes.append(f"{optimizer}.step() updated {what} in place after the forward pass saved it; "
                     "a later backward() through that graph needs the old value")
        optimizer_helps, moved_primary = _optimizer_suggestions(write, node, backward_stack, recorder, related)
        stepped = re.match(r"\s*(\w+)\.step\(", write_loc.source or "") if write_loc is not None else None
        shared = _held_by_two_optimizers(target, frames, stepped.group(1) if stepped else optimizer)
        if shared is not None:
            # Two optimizers step one module (shared by two models): the order of the updates is not
            # the cause, and moving one changes what either loss trains. Which optimizer should own
            # the module is the user's choice: advice first.
            notes.append(shared[0])
            helps.append(shared[1])
            given = _optimizer_parameters_statement(write.site, stepped.group(1)) if stepped else None
            if given is not None:
                # the line that gives this optimizer the shared module is the one to change
                related = [loc for loc in ([write_loc] if write_loc is not None else []) + related
                           if (loc.file, loc.line) != (given.file, given.line)]
                primary, moved_primary = given, None
        helps.extend(optimizer_helps)
        if moved_primary is not None and write_loc is not None:
            # The first help moves the later update: its backward() is the line to change.
            related = [loc for loc in related if (loc.file, loc.line) != (moved_primary.file, moved_primary.line)]
            related.insert(0, write_loc)
            primary = moved_primary
    else:
        loop = _loop_note(write)
        if loop:
            notes.append(loop)
        aliasing = _alias_note(write)
        if aliasing is not None:
            notes.append(aliasing[0])
            related.insert(0, aliasing[1])
        helps.extend(_write_suggestions(write, target if target is not None else alias))
        kept = _caller_tensor_kept(write, save_site) if aliasing is None else None
        if kept is not None:
            # The function keeps its caller's tensor as its own (`self.tensor = torch.as_tensor(tensor)`):
            # that binding is the line to change, a copy there.
            notes.append(kept[0])
            if primary is not None:
                related.insert(0, primary)
            primary = kept[1]
            helps.insert(0, kept[2])
        read_twice = read_before_and_after(write, slot)
        if read_twice is not None:
            # Read before the write and after it: out of place is one of two repairs (two_reads.py).
            helps[:] = two_reads_advice(read_twice, write, save_site, helps)
        loaded = _graph_values_loaded_before(write, target, recorder)
        if loaded is not None:
            notes.append(loaded[0])
            related.insert(0, loaded[1])
            helps.insert(0, loaded[2])
        if write.loop_values and write.op.endswith("__setitem__"):
            helps.append(Suggestion("in a loop, collect the pieces in a Python list and build the tensor once "
                                    "after the loop with torch.stack (or torch.cat)"))
        if write.module_class:
            if writes_its_own_weight(write):
                name = weight_name(alias, frames) or parameter or name
                if info is not None:
                    info.name = name
            primary = _inplace_module_write(write, write_loc, frames, notes, helps, related, name) or primary
        if len(record.writes) > 1:
            others = ", ".join(f"line {w.site.lineno}" for w in record.writes[1:] if w.site is not None)
            if others:
                notes.append(f"later writes to the same memory: {others}")
    if write is not None and not helps:
        helps.append(Suggestion("write out of place (the op without its trailing `_`, `inplace=False`, or a new "
                                "name for the result), or clone the tensor before writing into it"))
    if write is not None and write.stack[1:] and not in_installed_package(write.stack[1].filename):
        caller = location_of(write.stack[1], role="called from", note="called from here")
        if caller is not None and caller.source and all(caller.line != loc.line or caller.file != loc.file for loc in related):
            related.append(caller)

    title = codes.title(code)
    diagnosis = Diagnosis(code=code, title=title, severity="error", primary=primary, related=related,
                          tensor=info, notes=notes, help=helps)
    diagnosis.extra.update({
        "node": node_name, "slot": slot, "op": write.op if write is not None else None,
        "optimizer": optimizer, "version_saved": record.version, "version_found": alias._version,
    })
    return diagnosis


def _held_by_two_optimizers(target, frames, stepping: str) -> tuple[str, Suggestion] | None:
    """(note, advice) when the parameter an optimizer's step() wrote is held by another live
    optimizer too, naming the module of the user's whose parameters both hold (the largest one)."""
    if not isinstance(target, torch.nn.Parameter):
        return None
    holding = optimizers_holding([target], Budget(1)) or []
    if len(holding) < 2:
        return None
    held = [{id(p) for group in o.param_groups for p in group["params"]} for o in holding]
    common = set.intersection(*held)
    if any(h <= common for h in held):
        # An optimizer that holds only what the others hold steps the same weights on purpose (two
        # updates of one generator, pytorch#55368): not a module shared by two models.
        return None
    names = [variable_for(o, frames) for o in holding]
    if any(n is None for n in names) or len(set(names)) != len(names):
        return None
    shared_name, shared_size = None, 0
    for name, module in modules_in(frames):
        parameters = [p for p in module.parameters()]
        if name and any(p is target for p in parameters) and all(id(p) in h for h in held for p in parameters) \
                and len(parameters) > shared_size:
            shared_name, shared_size = name, len(parameters)
    what = f"the parameters of {shared_name}" if shared_name else "this parameter"
    others = [n for n in names if n != stepping] or names[1:]
    note = (f"{what} are held by {len(names)} optimizers ({', '.join(names)}): {stepping}.step() updates "
            f"{shared_name or 'it'} between the forward pass of the loss that {' and '.join(others)} trains "
            "and that loss's backward()")
    help = Suggestion(f"keep {shared_name or 'the shared module'} in one optimizer only: build {stepping} (or "
                      f"{others[0]}) from the other parameters, e.g. `[p for name, p in model.named_parameters() if "
                      f"not name.startswith(\"{shared_name or 'shared'}\")]`; which loss should train it is your "
                      "choice, and the other model can read its features under torch.no_grad()")
    return note, help


def _optimizer_parameters_statement(step_site: Site, optimizer_name: str) -> Location | None:
    """Where `optimizer_name` was given its parameters: the statement that builds it
    (`opt = torch.optim.Adam(params, ...)`), or the one that made the list it was given
    (`params = list(model.parameters())`), in the file and scope of its step() call."""
    from autograd_doctor.analysis.errors.context import last_assignment
    from autograd_doctor.diagnosis.source import statement_location

    filename, line = step_site.filename, step_site.lineno
    built = last_assignment(filename, optimizer_name, line)
    if built is None or not isinstance(built, ast.Assign) or not isinstance(built.value, ast.Call) \
            or not built.value.args:
        return None
    chosen = built
    given = built.value.args[0]
    if isinstance(given, ast.Name):
        made = last_assignment(filename, given.id, built.lineno)
        if made is not None:
            chosen = made
    return statement_location(filename, chosen, role="optimizer",
                              note=f"{optimizer_name} is given the shared module's parameters here")


def _saved_tensor_name(alias, target, frames, write, save_site) -> str | None:
    """Name the tensor: a variable of the user's that holds this very tensor (or its memory),
    then the name written at the write line. The name bound at the save line only if it
    holds the saved memory: `h1 = torch.tanh(x) * mask` saves `mask`."""
    name = variable_for(target, frames) if target is not None else None
    if name is None:
        name = variable_with_memory_of(alias, frames)
    if name is None and write is not None:
        name = written_name(write.site.filename, write.site.lineno)
    if name is None and save_site is not None:
        bound = assigned_name(save_site.filename, save_site.lineno)
        if bound is not None and variable_with_memory_of(alias, frames, only=bound) is not None:
            name = bound
    return name


def _inplace_module_write(write, write_loc: Location, frames, notes: list, helps: list,
                          related: list, name: str | None = None) -> Location | None:
    """The write is done by a module created with inplace=True (nn.ReLU(inplace=True)): the
    line to change is the module's definition, when it is found (the new primary location;
    the call stays as context). A module that writes into its own weight (nn.Embedding with
    max_norm) has no inplace=True to turn off: the line to change is the earlier use of the
    weight, which clones it."""
    module = write.module_ref() if write.module_ref is not None else None
    where = module_path(module, frames) if module is not None else None
    if writes_its_own_weight(write):
        notes.append(what_the_module_does(write.module_class, module, where))
        found = clone_at_earlier_use(write.site.filename, write.site.lineno, name)
        if found is None:
            helps.insert(0, Suggestion(f"clone {name or 'the weight'} where it is used before this call "
                                       f"({name or 'weight'}.clone()), so the tensor autograd saved is not the one "
                                       "the module rewrites"))
            return None
        use, change = found
        helps.insert(0, change)
        related.insert(0, write_loc)
        return use
    notes.append(f"the write is done by {write.module_class}"
                 f"{' (' + where + ')' if where else ''} created with inplace=True")
    definition = inplace_module_definition_fix(write.site.filename, write.module_class, write.site.lineno)
    repeated = repeated_activation_help(write.site.filename, write.site.lineno, write.module_class)
    if repeated is not None:
        # `self.relu(f4)` on a tensor the same ReLU already rectified: the call is the line to
        # change (it adds no value); turning the module's inplace off stays the second help.
        call_location, change = repeated
        if definition is not None and definition.location is not None:
            helps.insert(0, definition)
        helps.insert(0, change)
        return call_location
    if definition is None:
        helps.insert(0, Suggestion(f"create this {write.module_class} with inplace=False (where the module "
                                   "is defined), so it returns a new tensor"))
        return None
    if definition.location is None:
        return None
    helps.insert(0, definition)
    related.insert(0, write_loc)
    return Location(**{**definition.location.__dict__, "role": "defined",
                       "note": f"{write.module_class}(inplace=True) defined here"})


def silent_write_diagnosis(record: SavedRecord, node, slot: str | None,
                           backward_stack: tuple[Site, ...], recorder=None) -> Diagnosis:
    """AD201: saved memory written through an alias with its own version counter (`.data`)."""
    node_name = type(node).__name__ if node is not None else None
    write = record.silent_writes[0]
    frames = user_frames()
    primary = location_of(write.site, role="modified",
                          note="modified here through an alias PyTorch does not track")
    save_loc = location_of(record.site, role="saved",
                           note=f"saved here: {describe_slot(node_name, slot)}")
    backward_loc = location_of(backward_stack[0] if backward_stack else None, role="backward",
                               note="backward used the changed value here")
    related = [loc for loc in (save_loc, backward_loc) if loc is not None]
    target = write.target_ref() if write.target_ref is not None else None
    name = written_name(write.site.filename, write.site.lineno) if write.site else None
    if name is not None and name.endswith(".data"):
        name = name[:-len(".data")]  # `y.data[0] = v` writes y's memory: the tensor is y
    if name is None and record.site is not None:
        name = assigned_name(record.site.filename, record.site.lineno)
    info = tensor_info(record.alias, name, parameter_path(record.alias, frames))
    through = "`.data`" if primary is not None and ".data" in primary.source else "an alias with its own version counter (such as `.data`)"
    notes = [
        f"the write went through {through}, which shares memory with the saved tensor but not its "
        "version counter, so PyTorch raises nothing and backward silently computes a wrong gradient",
    ]
    helps = [Suggestion("do not write into a tensor the graph still needs: write out of place, or clone "
                        "first; use detach() or torch.no_grad() instead of .data")]
    if write.site is not None:
        statement = statement_at(write.site.filename, write.site.lineno)
        fixes = write_fixes(write.site.filename, statement, write.site.lineno, None, _write_facts(write, target))
        for fix in fixes:
            if fix.replacement:
                fix.replacement = fix.replacement.replace(".data", "")
        helps = fixes + helps
    diagnosis = Diagnosis(code=codes.SILENT_ALIAS_WRITE, title=codes.title(codes.SILENT_ALIAS_WRITE),
                          severity="warning", primary=primary, related=related, tensor=info,
                          notes=notes, help=helps)
    diagnosis.extra.update({"node": node_name, "slot": slot, "op": write.op})
    return diagnosis


def content_changed_diagnosis(record: SavedRecord, node, slot: str | None,
                              backward_stack: tuple[Site, ...], recorder=None) -> Diagnosis:
    """AD202: the saved tensor's contents changed with no version bump (verify_saved)."""
    node_name = type(node).__name__ if node is not None else None
    save_loc = location_of(record.site, role="saved",
                           note=f"saved here: {describe_slot(node_name, slot)}")
    backward_loc = location_of(backward_stack[0] if backward_stack else None, role="backward",
                               note="backward found different contents here")
    related = [loc for loc in (backward_loc,) if loc is not None]
    primary = save_loc
    notes = [
        f"{node_name + '.' + slot if node_name and slot else 'a saved tensor'} changed between the save and "
        "this backward() without any in-place op that PyTorch or autograd-doctor saw: something wrote its "
        "memory directly (a NumPy view, DLPack, a custom kernel)",
    ]
    numpy_site = None
    if recorder is not None:
        key = record.key if record.key is not None else record.locate()
        storage_ref, numpy_site = recorder.numpy_aliases.get(key, (None, None)) if key is not None else (None, None)
        if storage_ref is not None and storage_ref() is not _storage_of(record.alias):
            numpy_site = None  # a numpy() of memory freed since, now this tensor's
    if numpy_site is not None:
        numpy_loc = location_of(numpy_site, role="alias", note="numpy() shares this memory: a write through it is invisible to PyTorch")
        if numpy_loc is not None:
            # The line to change is where the shared NumPy array is made.
            if save_loc is not None:
                related.insert(0, save_loc)
            primary = numpy_loc
            notes.append("a numpy() array made here shares the saved tensor's memory; writes through it are "
                         "the likely cause")
    name = assigned_name(record.site.filename, record.site.lineno) if record.site else None
    info = tensor_info(record.alias, name)
    helps = [Suggestion("hand other libraries a copy: t.detach().clone().numpy() (or .cpu().numpy() on a "
                        "GPU tensor, which copies), or make the change with torch ops out of place")]
    if primary is None:
        primary, related = (related[0], related[1:]) if related else (None, [])
    diagnosis = Diagnosis(code=codes.SAVED_CONTENT_CHANGED, title=codes.title(codes.SAVED_CONTENT_CHANGED),
                          severity="warning", primary=primary, related=related, tensor=info, notes=notes, help=helps)
    diagnosis.extra.update({"node": node_name, "slot": slot})
    return diagnosis



def _storage_of(tensor):
    try:
        return tensor.untyped_storage()
    except Exception:  # no plain storage: nothing to compare
        return None


def _unbound_loop_help(site, statement) -> list[Suggestion]:
    """`for channel in image[0]: channel.mul_(s)`: iterating a tensor unbinds it; the write is
    meant to reach the tensor, which views made by indexing do (the loop rewritten, or nothing)."""
    frame = live_frame(site)
    loop = unbound_loop_fix(site.filename, statement, frame_values(frame) if frame is not None else None)
    return [loop] if loop is not None else []

def _container_item_rebinding(site, statement) -> Suggestion | None:
    """`parts["scale"].exp_()` where `parts` is a dict (or a list) of the pieces: the item is a
    place that can hold the out-of-place result, `parts["scale"] = parts["scale"].exp()`, which every
    later read of the item sees. A string key says the container is a dict; otherwise the live
    frame must show a dict or a list."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Attribute)):
        return None
    call = statement.value
    method, item = call.func.attr, call.func.value
    if not (method.endswith("_") and not method.endswith("__") and hasattr(torch.Tensor, method[:-1])
            and isinstance(item, ast.Subscript)):
        return None
    keyed = isinstance(item.slice, ast.Constant) and isinstance(item.slice.value, str)
    if not keyed:
        frame = live_frame(site)
        holder = _named_value(frame, item.value) if frame is not None else None
        if not isinstance(holder, (dict, list)):
            return None
    item_text, call_text = segment(site.filename, item), segment(site.filename, call)
    if item_text is None or call_text is None:
        return None
    arguments = call_text[len(segment(site.filename, call.func)):]
    return Suggestion("write out of place and store the result in the same item: a new tensor, and the piece "
                      "stays as it was made", f"{item_text} = {item_text}.{method[:-1]}{arguments}",
                      location_of(site, role="modified"))


def _named_value(frame, node: ast.expr):
    """The value a name or an attribute chain (`self.parts`) holds in the frame; None for anything
    else (nothing of the user's runs, so reading it cannot change the user's program)."""
    return chain_value(frame_values(frame).get, node)


def overlap_diagnosis(op: str, target, operand, stack: tuple[Site, ...]) -> Diagnosis | None:
    """AD203: an in-place op whose operand is another view of the memory it writes."""
    site = stack[0] if stack else None
    if site is None:
        return None
    primary = location_of(site, role="modified", note="writes memory that its operand reads")
    name = written_name(site.filename, site.lineno)
    info = tensor_info(target, name)
    statement = statement_at(site.filename, site.lineno)
    helps = [s for s in write_fixes(site.filename, statement, site.lineno, None, _write_facts(None, target))
             if not s.keeps_write]
    if statement is not None and not helps:
        helps.extend(_unbound_loop_help(site, statement))
    for suggestion in helps:
        suggestion.message = "write out of place: the operand is then read in full before anything is written"
        suggestion.replacement = _copy_into_unassignable(suggestion.replacement)
    cloned = _operand_cloned(site.filename, statement, op, first=not helps)
    saver = _saved_by_its_maker(target) if not helps and cloned is not None and cloned.replacement else None
    root = _written_root(statement, op) if saver is not None else None
    if root is not None and "\n" not in cloned.replacement and \
            root not in loop_targets(site.filename, statement):
        # `feats[1:] -= feats[:-1]` where feats is a ReLU's output: ReluBackward0 saved feats, so
        # even with an independent operand the write would make backward() fail (AD101). The write
        # goes into a copy, which the rest of the code reads under the same name.
        helps.append(Suggestion(
            f"write into a copy of {root} and give the op an independent operand: {saver} saved {root} for "
            f"backward(), so {root} itself must stay as it was made; the copy gets the values the write "
            "meant, read in full before anything is written",
            f"{root} = {root}.clone()\n{cloned.replacement}", cloned.location))
        cloned.message = "or " + cloned.message
    helps.append(cloned if cloned is not None else
                 Suggestion("or give the op an independent operand: add .clone() to the operand that views "
                            "the written tensor"))
    notes = [
        f"the operand (shape {list(operand.shape)}, offset {operand.storage_offset()}) is a view of the same "
        f"memory as the written tensor (shape {list(target.shape)}); as {op} writes, it changes values it "
        "has still to read, so the result depends on the order of the kernel's loop",
    ]
    return Diagnosis(code=codes.OVERLAPPING_INPLACE, title=codes.title(codes.OVERLAPPING_INPLACE),
                     severity="warning", primary=primary, related=[], tensor=info, notes=notes, help=helps,
                     extra={"op": op})


def _operand_cloned(filename: str, statement, op: str, first: bool) -> Suggestion | None:
    """`series[1:].add_(series[:-1], alpha=d)` with `.clone()` on the one operand that indexes the
    written tensor's own variable (`series[:-1].clone()`): the operand is then read from a copy
    made before the write, which is the values the op would see if it did not overlap."""
    if statement is None:
        return None
    method = op.rsplit(".", 1)[-1]  # "Tensor.mul_" as the recorder names it, "add_" from an error
    calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr == method]
    if isinstance(statement, ast.AugAssign) and not calls:
        # `x[1:] += x[:-1]`: the augmented assignment is the in-place op, its value the operand.
        written_root, arguments = _root_variable(statement.target), [statement.value]
    elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 and \
            isinstance(statement.targets[0], ast.Subscript) and not calls:
        # `buf[:-1] = buf[1:]`: the item assignment copies its value into the written slice.
        written_root, arguments = _root_variable(statement.targets[0]), [statement.value]
    elif len(calls) == 1:
        written_root, arguments = _root_variable(calls[0].func.value), calls[0].args
    else:
        return None
    operands = [argument for argument in arguments if written_root is not None
                and _root_variable(argument) == written_root]
    if len(operands) != 1:
        return None
    operand = segment(filename, operands[0])
    if operand is None:
        return None
    new_statement = replace_node_text(filename, statement, operands[0], f"{operand}.clone()")
    return Suggestion(f"{'' if first else 'or '}give the op an independent operand: clone the operand that views "
                      f"the written tensor ({operand}.clone()), so it is read in full before anything is written",
                      replacement=new_statement, location=statement_location(filename, statement))


def _saved_by_its_maker(target) -> str | None:
    """The name of the node that made the written tensor's base when that node saved it (its
    result) for backward(): ReluBackward0, SigmoidBackward0, ... Any in-place write into that
    memory then makes backward() fail. None when it did not, or the base is a leaf."""
    from autograd_doctor.recording.probe import _saved_tensors

    base = target._base if target._base is not None else target
    node = base.grad_fn
    if node is None:
        return None
    storage = _storage_of(target)
    try:
        for _, _, saved in _saved_tensors(node):
            other = _storage_of(saved)
            if storage is not None and other is not None and other.data_ptr() == storage.data_ptr():
                return node.name()
    except Exception:  # a node we cannot read: say nothing
        return None
    return None


def _written_root(statement, op: str) -> str | None:
    """The variable a write goes into: `feats` of `feats[1:] -= ...`, `buf[:-1] = ...`,
    `series[1:].add_(...)`; None for anything else."""
    if isinstance(statement, ast.AugAssign):
        return _root_variable(statement.target)
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        return _root_variable(statement.targets[0])
    method = op.rsplit(".", 1)[-1]
    calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr == method] if statement is not None else []
    return _root_variable(calls[0].func.value) if len(calls) == 1 else None


def _root_variable(node) -> str | None:
    """`series` of `series[:-1]`, `series.T`, `series`; None for anything else."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _copy_into_unassignable(replacement: str | None) -> str | None:
    """`a.T = a.T.add(a)` is no Python (a tensor's `.T` cannot be assigned): write the
    out-of-place result back with `a.T.copy_(a.T.add(a))`, which reads `a` in full first."""
    import ast

    try:
        statement = parse_quietly(replacement).body[0] if replacement else None
    except SyntaxError:
        return replacement
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
            and isinstance(statement.targets[0], (ast.Attribute, ast.Call)):
        return f"{ast.unparse(statement.targets[0])}.copy_({ast.unparse(statement.value)})"
    return replacement


def detach_write_diagnosis(op: str, target, source, detach_site: Site | None,
                           stack: tuple[Site, ...]) -> Diagnosis | None:
    """AD205: a write through a detach() alias changes the tensor it was detached from."""
    import ast

    site = stack[0] if stack else None
    if site is None:
        return None
    primary = location_of(site, role="modified", note="this write also changes the tensor it was detached from")
    related = []
    helps = []
    detach_loc = location_of(detach_site, role="alias", note="detach() here shares storage with its source")
    if detach_loc is not None:
        related.append(detach_loc)
        statement = statement_at(detach_site.filename, detach_site.lineno)
        if statement is not None:
            
            calls = [n for n in ast.walk(statement) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                     and n.func.attr == "detach" and n.lineno == detach_site.lineno]
            if calls:
                receiver = segment(detach_site.filename, calls[0].func.value)
                if receiver:
                    replaced = replace_node_text(detach_site.filename, statement, calls[0], f"{receiver}.detach().clone()")
                    if replaced:
                        helps.append(Suggestion("make an independent copy with detach().clone()", replaced,
                                                statement_location(detach_site.filename, statement)))
    if not helps:
        helps.append(Suggestion("make an independent copy with .detach().clone() instead of .detach()"))
    name = None
    if detach_site is not None:
        statement = statement_at(detach_site.filename, detach_site.lineno)
        for node in ast.walk(statement) if statement is not None else ():
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach":
                name = ast.unparse(node.func.value)
                break
    notes = [
        "detach() returns a tensor without gradient history that shares storage (and the version counter) "
        "with its source, so this write changes the source tensor too, which is still part of a graph",
    ]
    return Diagnosis(code=codes.DETACH_ALIAS_WRITE, title=codes.title(codes.DETACH_ALIAS_WRITE),
                     severity="warning", primary=primary, related=related,
                     tensor=tensor_info(source, name), notes=notes, help=helps, extra={"op": op})


def container_holding(tensor) -> str | None:
    """'a list', 'a dict', ... when a container (not a module namespace) holds `tensor`."""
    import collections
    import gc

    module_namespaces = {id(vars(module)) for module in list(sys.modules.values()) if module is not None}
    for referrer in gc.get_referrers(tensor):
        if isinstance(referrer, list):
            return "a list"
        if isinstance(referrer, collections.deque):
            return "a deque"
        if isinstance(referrer, (set, frozenset)):
            return "a set"
        if isinstance(referrer, dict) and id(referrer) not in module_namespaces:
            if any(value is tensor for value in referrer.values()):
                return "a dict or an object's attribute"
    return None


def stale_view_diagnosis(view, view_site: Site, write_stack: tuple[Site, ...], holder: str) -> Diagnosis | None:
    """AD204: a view kept from an earlier iteration was overwritten through its base.

    None when the view and the write come from one call on one user line (the same
    bytecode instruction): a library function's own views of its own buffer, which the
    user never kept (found by the transparency suite in F.linear_cross_entropy)."""
    write_site = write_stack[0]
    if view_site == write_site:
        return None
    primary = location_of(write_site, role="modified",
                          note="overwrites the memory of views made earlier and still kept")
    view_loc = location_of(view_site, role="view", note=f"view made here, kept in {holder}")
    related = [loc for loc in (view_loc,) if loc is not None]
    helps: list[Suggestion] = []
    positions = view_site.columns()
    statement = statement_at(view_site.filename, view_site.lineno)
    if positions is not None and statement is not None:
        line, end_line, col, end_col = positions
        expression = None
        for node in ast.walk(statement):
            if (isinstance(node, (ast.Subscript, ast.Call)) and node.lineno == line and node.col_offset == col
                    and node.end_col_offset == end_col):
                expression = node
                break
        if expression is not None:
            text = segment(view_site.filename, expression)
            replaced = replace_node_text(view_site.filename, statement, expression, f"{text}.clone()")
            if replaced:
                helps.append(Suggestion("keep a copy, not a view, so later writes to the base do not change it",
                                        replaced, statement_location(view_site.filename, statement)))
    helps.append(Suggestion("or allocate a new tensor in each iteration instead of writing into a shared buffer"))
    notes = [
        f"the view made at line {view_site.lineno} shares memory with its base; the write at line "
        f"{write_site.lineno} changed it after it was kept in {holder}, so every kept view shows the latest "
        "values, not the ones it was made from",
    ]
    name = written_name(write_site.filename, write_site.lineno)
    return Diagnosis(code=codes.STALE_VIEW, title=codes.title(codes.STALE_VIEW), severity="warning",
                     primary=primary, related=related, tensor=tensor_info(view, name), notes=notes, help=helps)


def _optimizer_suggestions(write: WriteEvent, node, backward_stack: tuple[Site, ...], recorder,
                           related: list[Location]) -> tuple[list[Suggestion], Location | None]:
    """AD103's helps, and the new primary location when the first help changes another line.

    When another loss's backward() ran before the step (two losses share the stepped model,
    as in a GAN or an actor-critic), step() after this backward() would train that model on
    this loss too. What is meant depends on intent: a loss built after the step from a forward
    pass made before it (the DCGAN example's shape) meant the updated weights, so that forward
    is computed again after step(). A loss computed whole before the step may mean either: its
    update is moved before the other one where that keeps every value, or step() is moved after
    its backward() (saying what that trains), and the forward computed again after step() is
    offered too. The forward line the graph goes through joins the report."""
    optimizer_name = optimizer_variable(write) or "optimizer"
    backward_site = backward_stack[0] if backward_stack else None
    handed_over = crossing_value_help(write, backward_site, recorder) if backward_site is not None else None
    if handed_over is not None:
        return [handed_over[0]], handed_over[1]
    misplaced = state_cut_placement.misplaced_state_cut(node, backward_site, optimizer_name) \
        if backward_site is not None else None
    if misplaced is not None:
        return [misplaced[0]], misplaced[1]
    carried = carried_state_through_retained_graph(node, backward_site, recorder, optimizer_name)
    if carried is not None:
        related.append(carried[2])
        return [carried[0]], carried[1]
    backward_line = backward_site.lineno if backward_site is not None and write.site is not None \
        and backward_site.filename == write.site.filename else None
    if not step_order.gradients_used_by_step(write, recorder, backward_site):
        return [Suggestion(
            f"call {optimizer_name}.step() only after the last backward() that uses this "
            "graph (e.g. compute every loss and call backward() first), or run the forward pass again after "
            "step()")], None

    def show(location: Location) -> None:
        if all((location.file, location.line) != (loc.file, loc.line) for loc in related):
            related.insert(0, location)

    order = step_order.update_order(write, recorder, backward_site)
    forward = step_order.forward_through_step(write, node, backward_line)
    detached = step_order.detach_stepped_value(order, forward) if order is not None else None
    if detached is not None:
        # The stepped weights' own gradient from this loss is never applied (a temperature with its own
        # optimizer): cutting the value there keeps every value the program uses.
        statement, name = forward
        show(statement_location(write.site.filename, statement, role="forward",
                                note=f"{name} computed here from the weights {optimizer_name}.step() then changed"))
        return [detached[0]], detached[1]
    found = step_order.move_after_step(write, node, optimizer_name, backward_line)
    if found is not None:
        help, moved_forward = found
        show(moved_forward)
        return [help], None
    loss_name = order.loss_name if order is not None else None
    helps: list[Suggestion] = []
    primary = None
    moved_step = None  # the help that moves the step after this backward(), when that is the only one
    if order is not None:
        first = step_order.later_update_first(order)
        if first is not None:
            helps.append(first[0])
            primary = first[1]
        else:
            later, moves_step = step_order.step_after_later_backward(order, forward[1] if forward is not None else None)
            if later is not None:
                helps.append(later)
                moved_step = later if moves_step else None
    recompute = step_order.move_after_step(write, node, optimizer_name, backward_line, loss_name)
    if recompute is not None:
        helps.append(recompute[0])
        show(recompute[1])
    recomputed = step_order.recompute_after_step(order, forward) if recompute is None and order is not None \
        and forward is not None else None
    if recomputed is not None:
        if moved_step is not None and step_order.later_loss_trains_stepped_weights(order):
            # Moving the step after this backward() would train the stepped weights on this loss
            # too (a GAN's discriminator ascending the generator's loss): that changes what the
            # program trains, so computing the forward line again after the step comes first.
            helps.insert(0, recomputed)
        else:
            helps.append(recomputed)
    # Another player's loss through the stepped weights (a confusion term through the discriminator)
    # whose forward line spans several lines or is not the chain recompute_after_step copies: the
    # reading "through the updated weights" as code, the earlier update moved up to before that
    # forward line (the alternating order). Which reading is meant is not in the program (set 21's
    # dirt-t#3 took this one, MADDPG#27 the simultaneous update), so its place follows the rule
    # above: after the help that keeps every value, first where only a step move would be offered.
    alternating = step_order.earlier_update_before_forward(order, forward, node) \
        if recompute is None and recomputed is None and order is not None and step_order.adversarial_pair(order) \
        else None
    if alternating is not None:
        if helps and moved_step is None:
            alternating[0].message = "or, " + alternating[0].message
            helps.append(alternating[0])
        else:
            helps.insert(0, alternating[0])
            primary = alternating[1]
    if recompute is None and forward is not None:
        statement, name = forward
        show(statement_location(write.site.filename, statement, role="forward",
                                note=f"{name} computed here, through the weights {optimizer_name}.step() then "
                                     "changed"))
        if recomputed is None and alternating is None:
            helps.append(Suggestion(
                f"{'or, ' if helps else ''}if {loss_name or 'this loss'} is meant to go through the updated "
                f"weights: compute {name} (line {statement.lineno}) and what this loss builds from it again after "
                f"{optimizer_name}.step()"))
    if not helps:
        helps.append(Suggestion(
            f"run the forward pass again after {optimizer_name}.step(), so that this backward() goes through the "
            f"updated weights (calling step() after this backward() instead would also apply this loss's "
            "gradients to the model it steps)"))
    return helps, primary


def optimizer_variable(write: WriteEvent) -> str | None:
    """The optimizer's name in the user's code: the receiver of `.step()` on the write line."""
    import ast

    statement = statement_at(write.site.filename, write.site.lineno) if write.site else None
    if statement is None:
        return None
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step":
            return ast.unparse(node.func.value)
    return None


def _graph_values_loaded_before(write, target, recorder) -> tuple[str, Location, Suggestion] | None:
    """The write is a `load_state_dict(...)` call into a module that an earlier `load_state_dict`
    (recorded) was given tensors carrying a graph (fast weights of a differentiable update): the
    forward in between ran on plain copies of their values, so a gradient never reaches what they
    were computed from, and the restoring load writes into the parameters that forward saved. A
    note with the load and its tensors, and advice (the rewrite is the user's): a functional call."""
    if recorder is None or target is None or write.site is None:
        return None
    statement = statement_at(write.site.filename, write.site.lineno)
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr == "load_state_dict"):
        return None
    from autograd_doctor.recording.state_snapshots import graph_value_loads

    for loaded in graph_value_loads(recorder):
        module = loaded.module()
        if module is None or not loaded.stack:
            continue
        if not any(parameter is target for parameter in module.parameters()):
            continue
        site = loaded.stack[0]
        if (site.filename, site.lineno) == (write.site.filename, write.site.lineno):
            continue
        location = location_of(site, role="loaded", note=f"loads {loaded.count} tensor"
                               f"{'s' if loaded.count != 1 else ''} that carry a graph: only their values are copied")
        if location is None:
            return None
        names = ", ".join(loaded.names) + (", ..." if loaded.count > len(loaded.names) else "")
        note = (f"the load_state_dict() at line {site.lineno} was given {loaded.count} tensor"
                f"{'s' if loaded.count != 1 else ''} with a graph ({names}): load_state_dict copies their values into "
                "the parameters and leaves the graph behind, so the forward after it ran on plain parameters, a "
                "gradient through it never reaches what those tensors were computed from, and this load writes "
                "back into the parameters that forward saved")
        help = Suggestion("run the forward with those tensors as the module's weights instead of loading them: "
                          "`torch.func.functional_call(module, weights, (inputs,))` keeps their graph and writes "
                          "no parameter, so neither load is needed (for weights read with `state_dict()`, "
                          "`state_dict(keep_vars=True)` keeps the parameters themselves) (unverified)")
        return note, location, help
    return None


def _write_suggestions(write: WriteEvent, tensor) -> list[Suggestion]:
    site = write.site
    positions = site.columns()
    column = positions[2] if positions else None
    statement = statement_at(site.filename, site.lineno)
    return write_fixes(site.filename, statement, site.lineno, column, _write_facts(write, tensor))


def _bound_name(statement) -> str | None:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id
    return None


def _consumed_inplace_call(statement, line: int):
    """The in-place method call on the statement's line (`w.clamp_(...)`, receiver a name or an
    attribute chain) whose result the statement goes on to compute with: bound to a name other than
    its receiver (`log_std = self.log_std.clamp_(-5, 1)`) or an operand of another expression that is
    not itself an in-place call (`x * w.clamp_(0).exp()`). None for a write as a statement of its own
    (`w.clamp_(0)`), for `w = w.clamp_(0)` (rebinding the leaf's own name would leave the leaf behind)
    and for a statement with more than one in-place call."""
    parents = {}
    for node in ast.walk(statement):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_")
             and not node.func.attr.endswith("__") and hasattr(torch.Tensor, node.func.attr[:-1])]
    if len(calls) != 1:
        return None
    call = calls[0]
    if call.lineno != line or not isinstance(call.func.value, (ast.Name, ast.Attribute)):
        return None
    receiver = call.func.value
    while isinstance(receiver, ast.Attribute):
        receiver = receiver.value
    if not isinstance(receiver, ast.Name):
        return None
    parent = parents.get(call)
    if parent is None or isinstance(parent, ast.Expr) or isinstance(parent, (ast.AugAssign, ast.Return)):
        return None
    if isinstance(parent, ast.Assign):
        if len(parent.targets) != 1 or not isinstance(parent.targets[0], ast.Name):
            return None
        if ast.dump(parent.targets[0]) == ast.dump(call.func.value) or \
                (isinstance(call.func.value, ast.Name) and parent.targets[0].id == call.func.value.id):
            return None
    return call


def _inplace_activation_call(statement):
    """The call with `inplace=True` (by keyword, or by position for torch.nn.functional) in a
    statement, if any."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Call):
            if any(k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True
                   for k in node.keywords) or positional_inplace_flag(node) is not None:
                return node
    return None


def _caller_tensor_kept(write, save_site) -> tuple[str, Location, Suggestion] | None:
    """(note, location, help) when the written tensor is, through the function's own bindings
    (`tensor = torch.as_tensor(tensor)`, `self.tensor = tensor`), the tensor its caller passed in
    (analysis/caller_aliases.py)."""
    from autograd_doctor.analysis.caller_aliases import caller_alias

    site = write.site
    if site is None:
        return None
    found = caller_alias(site.filename, site.lineno, written_name(site.filename, site.lineno))
    if found is None:
        return None
    statement, parameter, definition = found
    if save_site is not None and save_site.filename == site.filename and \
            definition.lineno <= save_site.lineno <= definition.end_lineno:
        return None  # saved inside the function: the tensor autograd saved may be the function's own
    function = definition.name
    target = ast.unparse(statement.targets[0])
    value = segment(site.filename, statement.value)
    replacement = replace_node_text(site.filename, statement, statement.value, f"{value}.clone()") if value else None
    location = statement_location(site.filename, statement, role="alias",
                                  note=f"{target} is the caller's {parameter} from here: the same tensor, not a copy")
    note = (f"{target} IS the tensor {function}() was given as {parameter} (line {statement.lineno}: "
            f"`{ast.unparse(statement)}` copies nothing when it is already a tensor of that dtype and device), so "
            f"the in-place write at line {site.lineno} changed the caller's tensor, which autograd had saved")
    help = Suggestion(f"keep a copy of your own: `{target} = {value}.clone()`, so the write changes the copy "
                      "and the caller's tensor keeps the values autograd saved", replacement,
                      statement_location(site.filename, statement) if replacement else None, keeps_write=True)
    return note, location, help


def _alias_note(write) -> tuple[str, Location] | None:
    """(note, location) when the written name was bound by `out = x` just before: the write went
    into `x` itself, which the reader of `out += ...` rarely expects."""
    site = write.site
    written = written_name(site.filename, site.lineno) if site is not None else None
    root = written.split("[")[0] if written else None
    found = plain_alias(site.filename, site.lineno, root) if root else None
    if found is None:
        return None
    statement, other = found
    owner = is_parameter_of_enclosing_function(site.filename, site.lineno, other)
    what = f"{other}, the input of {owner}()" if owner else other
    location = statement_location(site.filename, statement, role="alias",
                                  note=f"{root} is {other} from here: the same tensor, not a copy")
    note = (f"{root} IS {other}: `{ast.unparse(statement)}` (line {statement.lineno}) binds a second name to the same "
            f"tensor, so the in-place write into {root} changed {what}, which autograd had saved")
    return note, location


def leaf_inplace_diagnosis(error: BaseException, func, args: tuple, stack: tuple[Site, ...],
                           module_class: str | None = None) -> Diagnosis | None:
    """AD102: a leaf (or a view of a leaf) that requires grad used in an in-place op; `module_class`
    is the torch.nn module whose forward made the write (`nn.ReLU(inplace=True)(x)`), if any."""
    message = str(error)
    if "leaf Variable that requires grad" not in message:
        return None
    target = args[0] if args and isinstance(args[0], torch.Tensor) else None
    site = stack[0] if stack else None
    primary = location_of(site, role="modified", note="in-place write to a leaf that requires grad")
    frames = user_frames()
    leaf = target
    is_view = target is not None and target._base is not None
    if is_view:
        leaf = target._base
    parameter = parameter_path(leaf, frames)
    name = written_name(site.filename, site.lineno) if site is not None else None
    info = tensor_info(target, name, parameter) if target is not None else None
    related = []
    creation = leaf_creation_site(leaf)
    if creation is not None:
        related.append(location_of(creation, role="created", note="leaf created here with requires_grad=True"))
    notes = [
        "a leaf tensor's .grad is the gradient with respect to its value; writing into it in place "
        "while autograd records would make that value (and the gradient) meaningless",
    ]
    if parameter:
        notes.append(f"the leaf is the parameter {parameter}")
    if is_view:
        notes.append("the written tensor is a view of the leaf, so the write changes the leaf itself")
    helps: list[Suggestion] = []
    statement = statement_at(site.filename, site.lineno) if site is not None else None
    activation = _inplace_activation_call(statement) if statement is not None else None
    if activation is not None:
        # `h = F.relu(x, inplace=True)` computes with the leaf: no_grad would drop the
        # activation's gradient and overwrite the input. The out-of-place call is the change.
        argument = activation.args[0] if activation.args else None
        name = segment(site.filename, argument) if isinstance(argument, (ast.Name, ast.Attribute)) else name
        if info is not None and name:
            info.name = name
        helps.extend(s for s in method_call_fixes(site.filename, statement, site.lineno, None) if s.replacement)
    elif module_class and statement is not None:
        # `out = act(x)` with `act = nn.LeakyReLU(inplace=True)`: the module writes into its
        # input. no_grad around the call would overwrite the leaf and drop the activation's
        # gradient; the definition is the line to change.
        if info is not None:
            info.name = variable_for(leaf, frames) or info.name
        notes.append(f"the write is done by {module_class} created with inplace=True, into its input"
                     f"{' ' + info.name if info is not None and info.name else ''}")
        definition = inplace_module_definition_fix(site.filename, module_class, site.lineno)
        if definition is not None and definition.location is not None:
            helps.append(definition)
            related.insert(0, location_of(site, role="called", note=f"{module_class} writes into the leaf here"))
            primary = Location(**{**definition.location.__dict__, "role": "defined",
                                  "note": f"{module_class}(inplace=True) defined here"})
        else:
            helps.append(Suggestion(f"create this {module_class} with inplace=False (where the module is "
                                    "defined), so it returns a new tensor and leaves its input alone"))
    entry = container_entry_target(statement, live_frame(site)) if statement is not None and not helps else None
    if entry is not None:
        # `state[LOSS] += v` with `state` a dict: the leaf is the entry, the dict has no clone().
        name = segment(site.filename, entry) or name
        if info is not None and name:
            info.name = name
        intent = leaf_write_intent(func, args, leaf, frames)
        if intent is not None:
            notes.append(intent.note)
        helps.extend(container_entry_helps(intent, leaf, parameter, frames, site.filename, statement, name))
        if not helps:
            helps.append(no_grad_fix(site.filename, statement, live_frame(site)) if intent is None else Suggestion(
                f"if the write is part of the computation, put a new tensor in the entry ({name} = {name} + ...) "
                f"and keep the leaf it held where whatever trains it can reach it"))
    if statement is not None and not helps:
        intent = leaf_write_intent(func, args, leaf, frames)
        if intent is not None:
            notes.append(intent.note)
            helps.extend(leaf_write_helps(intent, site.filename, statement, name, live_frame(site)))
        owner = owner_frame(leaf, frames) if intent is not None and intent.self_derived else None
        owner_statement = statement_at(owner.f_code.co_filename, owner.f_lineno) if owner is not None else None
        if owner_statement is not None and not helps:
            # The write is a helper's, handed the leaf (a manifold parameter's `proj_()`): the
            # no_grad belongs where the leaf is owned, not around the helper every caller shares.
            owner_file = owner.f_code.co_filename
            related.insert(0, location_of(site, role="modified", note="writes into the leaf it was handed"))
            primary = statement_location(owner_file, owner_statement, role="called",
                                         note="sets the leaf's values through a call that writes into it in place")
            found = no_grad_fix(owner_file, owner_statement, owner)
            found.message = ("set the leaf's values without recording it, where the leaf is owned: the function that "
                             "writes into it stays as it is for its other callers")
            helps.append(found)
    if statement is not None and not helps:
        found = input_leaf_helps(leaf, parameter, frames, site.filename, statement, name)
        if found is not None:
            notes.append(found[0])
            helps.extend(found[1])
    if statement is not None and not helps:
        found = gradient_scaling_helps(leaf, live_frame(site), site.filename, statement, name)
        if found is not None:
            notes.append(found[0])
            helps.extend(found[1])
    consumed = _consumed_inplace_call(statement, site.lineno) if statement is not None and not helps else None
    if consumed is not None:
        # `log_std = self.log_std.clamp_(-5, 1)` in forward: the write's result is computed with
        # (bound to another name, or an operand), as for `F.relu(w, inplace=True)` above. no_grad
        # around it would overwrite the trained values and pass the gradient straight through the
        # clamp; the out-of-place call gives the same value and keeps the leaf.
        receiver = segment(site.filename, consumed.func.value)
        notes.append(f"the result of {consumed.func.attr}() is used in the computation"
                     f"{' (bound to ' + _bound_name(statement) + ')' if _bound_name(statement) else ''}: "
                     f"it computes with {receiver or 'the leaf'}, so the same call out of place gives that value "
                     f"and leaves the leaf as the optimizer set it")
        found = [s for s in method_call_fixes(site.filename, statement, site.lineno, None) if s.replacement]
        for suggestion in found[:1]:
            suggestion.message = (f"compute with the out-of-place {consumed.func.attr[:-1]}(): the same value, and "
                                  f"{receiver or 'the leaf'} keeps its values and gets the gradient through it")
            helps.append(suggestion)
        if helps:
            without = no_grad_fix(site.filename, statement, live_frame(site))
            without.message = ("only if the stored values themselves must be changed (a projection, not part of the "
                               "computation), do the write as a statement of its own, under torch.no_grad()")
            without.replacement = None
            helps.append(without)
    if statement is not None and not helps:
        helps.append(no_grad_fix(site.filename, statement, live_frame(site)))
        # Rebinding the leaf's name to an out-of-place result (`w = w.mul(0.5)`) would leave the
        # real leaf behind: its .grad stays None. Say how to keep both instead.
        if name:
            helps.append(Suggestion(f"if the write is meant to be part of the computation, give its result a "
                                    f"new name (new = {name} * ...) and keep {name} as the leaf that is trained"))
    diagnosis = Diagnosis(code=codes.LEAF_INPLACE, title=codes.title(codes.LEAF_INPLACE), severity="error",
                          primary=primary, related=related, tensor=info, notes=notes, help=helps)
    diagnosis.extra["op"] = getattr(func, "__name__", None)
    return diagnosis


def multi_view_inplace_diagnosis(error: BaseException, func, args: tuple, stack: tuple[Site, ...],
                                 module_class: str | None = None) -> Diagnosis | None:
    """AD104: an in-place write to one of several views returned by chunk/split/unbind. When the
    write is a module's (`out = self.act(piece)` with `act = nn.ReLU(inplace=True)`), the line to
    change is the module's definition: inplace=False returns the same values in a new tensor."""
    message = str(error)
    if "returns multiple views" not in message:
        return None
    site = stack[0] if stack else None
    if site is None:
        return None
    target = args[0] if args and isinstance(args[0], torch.Tensor) else None
    primary = location_of(site, role="modified", note="in-place write to one of several views")
    name = written_name(site.filename, site.lineno)
    info = tensor_info(target, name) if target is not None else None
    statement = statement_at(site.filename, site.lineno)
    helps = [s for s in write_fixes(site.filename, statement, site.lineno, None, _write_facts(None, target))
             if not s.keeps_write]
    related = []
    if module_class and statement is not None and not helps and _result_is_bound(statement):
        definition = inplace_module_definition_fix(site.filename, module_class, site.lineno)
        if definition is not None and definition.location is not None:
            helps.append(definition)
            related.append(location_of(site, role="called", note=f"{module_class} writes into the piece here"))
            primary = Location(**{**definition.location.__dict__, "role": "defined",
                                  "note": f"{module_class}(inplace=True) defined here: it writes into its input"})
    if statement is not None and not helps:
        chain = inplace_chain_fix(site.filename, statement)  # `scale = piece.mul_(0.5).tanh_()`
        helps.extend([chain] if chain is not None else [])
    if statement is not None and not helps:
        rebound = piece_chain_rebinding_fix(site.filename, statement)  # `piece.mul_(c).add_(t)`
        helps.extend([rebound] if rebound is not None else [])
    if statement is not None and not helps:
        metadata = metadata_inplace_fix(site.filename, statement, site.lineno)
        helps.extend([metadata] if metadata is not None else _unbound_loop_help(site, statement))
    if statement is not None and not helps:
        item = _container_item_rebinding(site, statement)
        helps.extend([item] if item is not None else [])
    notes = ["chunk, split and unbind return views that share memory; while autograd records, "
             "PyTorch forbids writing into them in place because it cannot update the sibling views' history"]
    frame = live_frame(site) if not related else None
    loop = unbinding_loop(site.filename, statement, target, frame_values(frame)) if frame is not None else None
    if loop is not None:
        # `for boxes in pred_boxes: boxes[:, 0].clamp_(...)`: the line that made the view is the
        # loop's header (iterating a tensor unbinds it); the answers change that line.
        variable = getattr(written_root_of(statement), "id", None) or "the loop variable"
        written = variable if name == variable else f"a view of {variable}"
        related.append(Location(**{**primary.__dict__, "role": "modified",
                                   "note": f"in-place write into {written}, one of the views unbind returned"}))
        primary = _loop_header_location(site.filename, loop)
    function = _argument_written_for_caller(site.filename, site.lineno, name)
    if function is not None:
        # `def norm_ip(img, ...): img.clamp_(...)` returns nothing: the caller reads the write through
        # its own tensor. `img = img.clamp(...)` would rebind the local name only, and the caller's
        # tensor would keep its old values.
        helps = [s for s in helps if not (s.replacement or "").startswith(f"{name} = ")]
        notes.append(f"{name} is an argument of {function}(), which writes it in place for its caller and does not "
                     f"return it: rebinding {name} to an out-of-place result would leave the caller's tensor unchanged")
        helps.append(Suggestion(f"if the values are only read (plotted, logged, copied), give {function}() a tensor "
                                "without a graph: .detach() where the caller takes it from a parameter or an output"))
    helps.append(Suggestion("if the write must reach the original tensor, rebuild it from the pieces "
                            "with torch.cat or torch.stack instead of writing into one piece"))
    diagnosis = Diagnosis(code=codes.MULTI_OUTPUT_VIEW_INPLACE, title=codes.title(codes.MULTI_OUTPUT_VIEW_INPLACE),
                          severity="error", primary=primary, related=[r for r in related if r is not None], tensor=info,
                          notes=notes, help=helps)
    diagnosis.extra["op"] = getattr(func, "__name__", None)
    return diagnosis


def _loop_header_location(filename: str, loop: ast.For) -> Location:
    """The `for ... in ...:` header of a loop that iterates a tensor, as AD104's primary location."""
    location = statement_location(filename, loop, role="unbound",
                                  note="iterating a tensor unbinds it: each loop variable is an output of unbind")
    location.end_line = loop.lineno
    location.end_column = loop.iter.end_col_offset if loop.iter.end_lineno == loop.lineno else None
    if location.end_column is None:
        text = location.source
        location.end_column = loop.col_offset + len(text)
    return location


def _argument_written_for_caller(filename: str, line: int, name: str | None) -> str | None:
    """The name of the function around `line` when `name` is one of its arguments, not bound again in
    it, and no `return` gives it back: a write into it is meant for the caller's tensor. None otherwise."""
    tree = parse_file(filename) if name else None
    if tree is None:
        return None
    functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and node.lineno <= line <= (node.end_lineno or node.lineno)]
    if not functions:
        return None
    function = max(functions, key=lambda node: node.lineno)
    arguments = function.args.posonlyargs + function.args.args + function.args.kwonlyargs
    if name not in {argument.arg for argument in arguments}:
        return None
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return None
        if isinstance(node, ast.Return) and node.value is not None \
                and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node.value)):
            return None
    return function.name


def overlap_error_diagnosis(error: BaseException, func, args: tuple, stack: tuple[Site, ...],
                            kwargs: dict | None = None) -> Diagnosis | None:
    """AD203 as an error: PyTorch refused an in-place op whose operand overlaps its output."""
    if "refer to a single memory location" not in str(error):
        return None
    out = (kwargs or {}).get("out")
    if isinstance(out, torch.Tensor):
        # `torch.index_select(x, 0, order, out=x)`: the written tensor is `out`, and every tensor
        # argument is an operand; the one that shares its memory is the one refused.
        target = out
        operands = [a for a in args if isinstance(a, torch.Tensor) and a is not out and storage_key(a) is not None
                    and storage_key(a) == storage_key(out)] \
            or [a for a in args if a is out]
    else:
        target = args[0] if args and isinstance(args[0], torch.Tensor) else None
        operands = [a for a in args[1:] if isinstance(a, torch.Tensor)]
    if target is None or not operands:
        return None
    diagnosis = overlap_diagnosis(getattr(func, "__name__", "the in-place op"), target, operands[-1], stack)
    if diagnosis is not None:
        diagnosis.severity = "error"
    return diagnosis


def call_error_diagnosis(error: BaseException, func, args: tuple, stack: tuple[Site, ...],
                         module_class: str | None = None, kwargs: dict | None = None) -> Diagnosis | None:
    """A diagnosis for an error raised by an in-place call itself, if we know it."""
    diagnosis = leaf_inplace_diagnosis(error, func, args, stack, module_class)
    if diagnosis is not None:
        return diagnosis
    diagnosis = multi_view_inplace_diagnosis(error, func, args, stack, module_class)
    if diagnosis is not None:
        return diagnosis
    return overlap_error_diagnosis(error, func, args, stack, kwargs)


def _result_is_bound(statement: ast.stmt) -> bool:
    """`out = act(piece)` (or a return of it): the call's result is used, so a module made out of
    place gives the statement the same value; a bare `act(piece)` relies on the write itself."""
    return isinstance(statement, (ast.Assign, ast.AnnAssign, ast.Return)) and statement.value is not None


def current_node():
    getter = compat.lookup("torch._C._current_autograd_node")
    if getter is None:
        return None
    try:
        return getter()
    except Exception:
        return None


__all__ = [
    "stale_saved_diagnosis", "leaf_inplace_diagnosis", "current_node",
    "BackwardCall", "operator_of", "sys",
]
