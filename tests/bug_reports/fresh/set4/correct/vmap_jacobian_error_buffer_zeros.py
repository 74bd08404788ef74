"""Nonlinear least squares with an autodiff cost: the Jacobian of a hand-written error function is
computed per batch element with `vmap(jacrev(...))`; the function allocates its residual buffer
with `torch.zeros(...)` (not batched) and writes batched values into its slices.
Source: https://github.com/facebookresearch/theseus/issues/650 ("vmap: inplace arithmetic ... is
not possible because there exists a Tensor `other` in extra_args that has more elements than
`self`"; the library's own fix for the same pattern, theseus PR #495, allocates with
`new_zeros` from an input so that vmap can batch it).
expect: raises"""
import torch
from torch.func import jacrev, vmap


def quad_error_fn(maps_opt, maps_ij):
    map_size = maps_ij.shape[1]
    num_scalemap = maps_opt.shape[1] // map_size
    error = maps_opt.new_zeros((1, map_size * num_scalemap * (num_scalemap - 1)))
    for i in range(num_scalemap):
        for j in range(num_scalemap):
            if j != i:
                index = i * (num_scalemap - 1) + j - (0 if j < i else 1)
                error[:, map_size * index:map_size * (index + 1)] = (
                    maps_ij[index, :] * maps_opt[:, i * map_size:(i + 1) * map_size]
                    - maps_opt[:, j * map_size:(j + 1) * map_size]
                )
    return error


torch.manual_seed(0)
batch, map_size, num_scalemap = 4, 3, 3
maps_opt = torch.randn(batch, 1, map_size * num_scalemap)
maps_ij = torch.rand(batch, num_scalemap * (num_scalemap - 1), map_size) + 0.5

errors = vmap(quad_error_fn)(maps_opt, maps_ij)
jacobians = vmap(jacrev(quad_error_fn))(maps_opt, maps_ij)
# one Gauss-Newton step per batch element
J = jacobians.reshape(batch, errors.shape[-1], -1)
delta = torch.linalg.lstsq(J, -errors.reshape(batch, -1, 1)).solution
result = {"errors": errors, "jacobians": jacobians, "delta": delta}
