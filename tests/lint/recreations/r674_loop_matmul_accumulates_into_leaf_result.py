"""PyTorch issue 53348 ("How to obtain the gradient of a tensor when in-place operation
included?"): a batched matrix product written as five nested loops accumulates every term into
`res_torch[b][c][h][k]` of a result made with `torch.zeros(..., requires_grad=True)`, then
backpropagates its sum to read `ma.grad`.  The reporter's torch raised "leaf variable has been
moved into the graph interior"; torch 2.13 raises "a view of a leaf Variable that requires grad
is being used in an in-place operation" on the first write.
Re-created with the reporter's loops, the `ma @ mb` comparison and the gradient read.
Buggy line: `res_torch[b][c][h][k] = res_torch[b][c][h][k] + ...` (the result is a leaf that
requires grad).
Source: https://github.com/pytorch/pytorch/issues/53348"""
import torch


def loop_matmul(ma, mb):
    B, C, H, W = ma.shape
    B, C, W, K = mb.shape
    res_torch = torch.zeros((B, C, H, K), requires_grad=True)
    for b in range(B):
        for c in range(C):
            for h in range(H):
                for k in range(K):
                    for r in range(W):
                        res_torch[b][c][h][k] = res_torch[b][c][h][k] + ma[b][c][h][r] * mb[b][c][r][k]  # expect: ADL014
    return res_torch


def run():
    torch.manual_seed(0)
    ma = torch.randn(2, 1, 2, 3).requires_grad_(True)
    mb = torch.randn(2, 1, 3, 2).requires_grad_(True)
    res_torch = loop_matmul(ma, mb)
    res_torch.sum().backward()
    print(ma.grad)
    return ma.grad, (ma @ mb)


if __name__ == "__main__":
    run()
