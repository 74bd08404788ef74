"""symmray's truncated SVD (used for tensor-network contraction with
automatic differentiation) keeps the largest singular values of each block,
`s = s[:n_chi]`, and when asked to preserve the norm rescales them in place,
`s *= norm`.  `torch.linalg.svd` keeps its outputs for backward, and `s` is a
view of the returned singular values, so differentiating the contraction
fails ("one of the variables needed for gradient computation has been
modified by an inplace operation").  The fix is `s = s * norm`.
Buggy line: `s *= norm` in `_trim_and_renorm_svd_result`.
Expected finding: ADL001 there.
Source: https://github.com/jcmgray/symmray/pull/2"""
import torch


def _trim_and_renorm_svd_result(U, s, VH, cutoff, max_bond, renorm):
    tot = (s**2).sum()
    csp = torch.cumsum(s**2, 0)
    n_chi = int((s > cutoff * s[0]).sum())
    n_chi = max(1, min(n_chi, max_bond))
    if n_chi < s.shape[0]:
        s = s[:n_chi]
        U = U[:, :n_chi]
        VH = VH[:n_chi, :]
        if renorm:
            norm = (tot / csp[n_chi - 1]) ** 0.5
            s *= norm  # missed: ADL001
    return U, s, VH


def svd_truncated(x, cutoff=1e-3, max_bond=2, renorm=True):
    U, s, VH = torch.linalg.svd(x, full_matrices=False)
    return _trim_and_renorm_svd_result(U, s, VH, cutoff, max_bond, renorm)


def compress_and_contract(a, b):
    U, s, VH = svd_truncated(a @ b)
    return (U * s) @ VH


def run():
    torch.manual_seed(0)
    a = torch.randn(4, 4, requires_grad=True)
    b = torch.randn(4, 4, requires_grad=True)
    approx = compress_and_contract(a, b)
    approx.pow(2).sum().backward()
