"""Which modules ran their forward since a backward() started (a global forward pre-hook),
and which of their own parameters their forward left out of its result (a global forward hook).

The gradient-path check (analysis/gradient_path.py) starts a tracker before each of the
first few backward() calls: a parameter of a module that ran but got no gradient is a cut
path (AD301). A parameter the module's forward never used (one kept for another
configuration) takes no part in the first place: nothing cut it. When a module's result
carries a graph, a walk over the part of that graph the forward made (down to the graphs of
its inputs) finds its parameters the forward used; one that a whole walk does not reach was
not used by it, or only outside the graph. The ids of the graph nodes of each module's result
are kept too: a result that never reached the loss (thrown away, as a probabilistic program's
trace of a guide does) cut nothing. Only ids and weak references are kept. A freed node's,
storage's, module's or parameter's address is soon another's (a thrown-away result's memory is
the next layer's, a model made anew takes the old one's addresses), so a node is known by its id
with its sequence number, and a storage, a module or a parameter by a weak reference to it.
"""

from __future__ import annotations

import weakref

import torch

from autograd_doctor import compat
from autograd_doctor.recording.identity import IdentityMap, IdentitySet
from autograd_doctor.recording.own_frames import own_work_done, own_work_started

# The key of the running tracker in the recorder's state.
STATE_KEY = "gradient_path_tracker"
# Graph nodes one module's walk visits at most; past it, nothing is concluded.
MAX_WALKED_NODES = 2000


class ModuleForwardTracker:
    """Ids of the modules whose forward ran while the tracker is on; it removes its hook when
    its recorder is gone, stopped, or has a newer tracker."""

    def __init__(self, recorder, from_start: bool = False):
        self.recorder_ref = weakref.ref(recorder)
        self.ran = IdentitySet()  # the modules whose forward ran
        self.used = IdentitySet()  # parameters found in their module's result graph
        self.unused = IdentitySet()  # parameters a whole walk of that graph did not find
        self.present = IdentitySet()  # the tensors modules held as parameters when they ran
        # module -> node_key of the graph nodes of its results: whether a result reached the loss
        self.output_nodes = IdentityMap()
        # data pointer -> (weak references to the storage there and to the module whose result
        # it is), and per module call (the modules whose results' storages it was given, the node
        # keys of its result): a result detached or made under no_grad and handed to a module
        # whose result reached the loss was cut, not thrown away
        self.output_storages: dict[int, list[tuple[weakref.ref, weakref.ref]]] = {}
        self.consumers: list[tuple[IdentitySet, set[tuple[int, int]]]] = []
        # (weak reference to the class, node keys of the result) of modules whose class defines a
        # backward() method of its own (autograd never calls it)
        self.own_backward_results: list[tuple[weakref.ref, set[tuple[int, int]]]] = []
        self.from_start = from_start  # on since the doctor started: it saw the first forward
        self.handle = torch.nn.modules.module.register_module_forward_pre_hook(self._hook)
        self.after_handle = torch.nn.modules.module.register_module_forward_hook(self._after_hook)
        _hide_from_compiled_modules(self.handle.id, self.after_handle.id)

    def _current(self) -> bool:
        recorder = self.recorder_ref()
        if recorder is None or recorder.state.get(STATE_KEY) is not self or not is_active(recorder):
            self.stop()
            return False
        return True

    # Both hooks are global: torch.compile traces them inside every module it compiles, and reading
    # `grad_fn` there is a graph break (an error under `fullgraph=True`); `torch.jit.trace` records
    # what they read (`numel()` warns: "TracerWarning: Converting a tensor to a Python boolean").
    # While either traces they do nothing: a compiled or traced module runs no Python hook later.
    def _hook(self, module, args):
        if not _tracing() and self._current():
            self.ran.add(module)
        return None

    def _after_hook(self, module, args, output):
        if _tracing():
            return None
        started = own_work_started()  # a Tensor subclass's __torch_function__ does not see the walk's reads
        try:
            if self._current():
                self._walk_result(module, args, output)
        except Exception:  # evidence only: the user's forward goes on whatever happens here
            pass
        finally:
            own_work_done(started)
        return None

    def _walk_result(self, module, args, output) -> None:
        """Which of `module`'s own trainable parameters its result's graph reaches."""
        if getattr(type(module), "backward", None) is not None and len(self.own_backward_results) < 64:
            # nn.Module has no backward(): a class that defines one (analysis/module_backward_methods.py)
            keys = {node_key(t.grad_fn) for t in _tensors_in(output)[:8] if t.grad_fn is not None}
            if keys:
                self.own_backward_results.append((weakref.ref(type(module)), keys))
        own = [p for p in module._parameters.values() if isinstance(p, torch.Tensor)]
        self.present.update(own)  # under functional_call, the tensors put in their place
        if own:
            results = _tensors_in(output)[:8]
            nodes = {node_key(t.grad_fn) for t in results if t.grad_fn is not None}
            if nodes:
                known = self.output_nodes.get(module)
                if known is None:
                    self.output_nodes[module] = known = set()
                known.update(nodes)
            if len(self.consumers) < 4096:
                self.consumers.append((self._producers_of(_tensors_in(args)[:8]), nodes))
            self._note_storages(results, module)
        pending = {id(p): p for p in own if p.requires_grad and p not in self.used}
        if not pending or not torch.is_grad_enabled():
            return
        results = _tensors_in(output)
        roots = [t.grad_fn for t in results if t.grad_fn is not None]
        if not roots:
            if results:
                # Grad was on, the module holds trainable parameters, and no result of its forward
                # has a graph: the forward used none of them (torchjd's module that computes with a
                # frozen weight and holds an unused trainable one, its inputs without grad).
                self.unused.update(pending.values())
            return  # no result at all: nothing concluded
        inputs = {id(t.grad_fn) for t in _tensors_in(args) if t.grad_fn is not None}
        seen, stack = set(), list(roots)
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen or id(node) in inputs:
                continue
            seen.add(id(node))
            if len(seen) > MAX_WALKED_NODES:
                return
            variable = getattr(node, "variable", None)
            if variable is not None and id(variable) in pending:
                del pending[id(variable)]
                self.used.add(variable)
                if not pending:
                    return
            stack.extend(next_node for next_node, _ in node.next_functions)
        self.unused.update(pending.values())

    def _note_storages(self, results: list, module) -> None:
        for pointer, storage in _storages(results):
            entries = [entry for entry in self.output_storages.get(pointer, ()) if entry[0]() is not None]
            entries.append((weakref.ref(storage), weakref.ref(module)))
            self.output_storages[pointer] = entries[-8:]

    def _producers_of(self, inputs: list) -> IdentitySet:
        """The modules (still alive) whose results' storages (still alive) these inputs use."""
        producers = IdentitySet()
        for pointer, storage in _storages(inputs):
            for storage_reference, module_reference in self.output_storages.get(pointer, ()):
                module = module_reference()
                if module is not None and storage_reference() is storage:
                    producers.add(module)
        return producers

    def unused_by_its_module(self, parameter) -> bool:
        """Its module ran only with other tensors in its place (functional_call, a stateless
        reparametrization), or ran with a graph and never used it (in any call seen)."""
        if parameter not in self.present:
            return True
        return parameter in self.unused and parameter not in self.used

    def stop(self):
        if self.handle is not None:
            _show_again(self.handle.id)
            self.handle.remove()
            self.handle = None
        if self.after_handle is not None:
            _show_again(self.after_handle.id)
            self.after_handle.remove()
            self.after_handle = None


# A module compiled with `torch.compile(module)` warns at each call while any global module hook
# is registered ("Using `torch.compile(module)` when there are global hooks on modules ...": the
# hooks fire once more, for the compiled wrapper, which the tracker does not mind). The trackers'
# hooks are the doctor's, not the program's: while one is registered, torch's test for a global
# hook is given one that leaves out the ids of the trackers' hooks, and gets its own back when
# the last of them is removed.
_own_hook_ids: set[int] = set()
_TEST_PATH = "torch.nn.modules.module._has_any_global_hook"


def _has_a_global_hook_of_the_program() -> bool:
    module = torch.nn.modules.module
    registries = (module._global_backward_pre_hooks, module._global_backward_hooks,
                  module._global_forward_pre_hooks, module._global_forward_hooks,
                  module._global_forward_hooks_always_called, module._global_forward_hooks_with_kwargs)
    return any(key not in _own_hook_ids for registry in registries for key in registry)


_plain_test = None  # torch's own test, while the trackers' one is installed


def _hide_from_compiled_modules(*hook_ids: int) -> None:
    global _plain_test
    current = compat.lookup(_TEST_PATH)
    if current is None:
        return
    if current is not _has_a_global_hook_of_the_program:
        _plain_test = current
    _own_hook_ids.update(hook_ids)
    torch.nn.modules.module._has_any_global_hook = _has_a_global_hook_of_the_program


def _show_again(hook_id: int) -> None:
    _own_hook_ids.discard(hook_id)
    module = torch.nn.modules.module
    if not _own_hook_ids and _plain_test is not None and \
            getattr(module, "_has_any_global_hook", None) is _has_a_global_hook_of_the_program:
        module._has_any_global_hook = _plain_test


def deactivate(recorder) -> None:
    """When the doctor stops: its tracker's global hooks go with it (else they stay until the next
    module's forward, and a `torch.compile`d module called after the doctor warns about them)."""
    tracker = recorder.state.get(STATE_KEY)
    if tracker is not None:
        tracker.stop()


def _tracing() -> bool:
    return torch.compiler.is_compiling() or torch.jit.is_tracing()


def node_key(node) -> tuple[int, int]:
    """A graph node told apart from a later one at the same address: its id and its sequence
    number (which only grows)."""
    return id(node), node._sequence_nr()


def _storages(tensors: list) -> list:
    """(data pointer, storage) of each tensor with memory."""
    found = []
    for tensor in tensors:
        try:
            if tensor.layout == torch.strided and tensor.numel():
                found.append((tensor.data_ptr(), tensor.untyped_storage()))
        except Exception:  # a tensor without storage (meta, a subclass): nothing to compare
            pass
    return found


def _tensors_in(value, depth: int = 0) -> list:
    """The tensors in a module's arguments or result: the value itself, or inside tuples,
    lists and dicts (a model output), two levels deep."""
    if isinstance(value, torch.Tensor):
        return [value]
    if depth >= 2:
        return []
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [t for item in value[:64] for t in _tensors_in(item, depth + 1)]
    return []


def is_active(recorder) -> bool:
    """Whether `recorder` is recording now (its doctor is on)."""
    try:
        from autograd_doctor.recording import patches

        return recorder in patches._active
    except Exception:
        return False
