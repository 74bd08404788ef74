"""Remember embedding layers that a library constructor froze by its default, built from a tensor
that required grad.

`nn.Embedding.from_pretrained(embeddings, freeze=True, ...)` (and `nn.EmbeddingBag`'s) freezes
the new layer's weight unless told `freeze=False`. Given a tensor that requires grad (a trained
layer's weight, or shards of one stacked back together), the user is rebuilding a layer that
trains, and the default silently freezes it: an optimizer built from the parameters that require
grad leaves it out, and nothing fails.

`from_pretrained` of both classes is wrapped while a doctor runs (it is called a few times per
program at most). A call that does not pass `freeze` and whose tensor requires grad is noted: a
weak reference to the layer and the user's call site; no tensor is kept.
analysis/default_frozen_layers.py judges the notes at the optimizers' first steps (AD241).
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass

import torch

from autograd_doctor.recording.frames import capture_user_stack
from autograd_doctor.recording.own_frames import call_as_caller
from autograd_doctor.recording.wrapped_attributes import MARK, WrappedAttributes

MAX_NOTES = 16


@dataclass
class DefaultFrozenLayer:
    layer: object  # weak reference to the module
    class_name: str
    stack: tuple  # the user's frames of the from_pretrained call, innermost first
    reported: bool = False


class FrozenConstructions:
    def __init__(self):
        self.layers: list[DefaultFrozenLayer] = []

    def built(self, layer, stack) -> None:
        if len(self.layers) >= MAX_NOTES:
            return
        try:
            self.layers.append(DefaultFrozenLayer(weakref.ref(layer), type(layer).__name__, stack))
        except TypeError:
            pass


def _recording(original):
    function = original.__func__

    @functools.wraps(function)
    def from_pretrained(cls, embeddings, *args, **kwargs):
        layer = call_as_caller(function, (cls, embeddings, *args), kwargs)
        try:
            if (not args and "freeze" not in kwargs and isinstance(embeddings, torch.Tensor)
                    and embeddings.requires_grad and isinstance(layer, torch.nn.Module)):
                stack = capture_user_stack(1, limit=3)
                for recorder in list(_wrapped.recorders):
                    recorder.frozen_constructions.built(layer, stack)
        except Exception:
            pass
        return layer

    wrapper = classmethod(from_pretrained)
    setattr(from_pretrained, MARK, original)
    try:
        setattr(wrapper, MARK, original)
    except AttributeError:
        return original
    return wrapper


_wrapped = WrappedAttributes(lambda: [(torch.nn.Embedding, "from_pretrained", _recording),
                                      (torch.nn.EmbeddingBag, "from_pretrained", _recording)])

activate, deactivate = _wrapped.activate, _wrapped.deactivate

__all__ = ["DefaultFrozenLayer", "FrozenConstructions", "activate", "deactivate"]
