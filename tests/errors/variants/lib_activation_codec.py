"""Activation compression for training: saved tensors are stored in half precision."""
import torch


def compressed_activations():
    def pack(t):
        return t.to(torch.float16), t.dtype

    def unpack(packed):
        value, dtype = packed
        return value.to(dtype)

    return torch.autograd.graph.saved_tensors_hooks(pack, unpack)
