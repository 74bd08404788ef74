"""geomstats' Bures-Wasserstein metric on SPD matrices symmetrises an
intermediate velocity with `partial_horizontal_velocity +=
Matrices.transpose(partial_horizontal_velocity)` in `parallel_transport`.
The transpose is a view of the same memory, so with the PyTorch backend the
in-place addition reads the elements it writes and fails ("unsupported
operation: some elements of the input tensor and the written-to tensor refer
to a single memory location").  The fix writes `x = x + transpose(x)`.
Buggy line: the augmented assignment in `parallel_transport`.
Expected finding: ADL010 there (an in-place op reading a view of its
target).
Source: https://github.com/geomstats/geomstats/issues/1859"""
import torch


class Matrices:
    @staticmethod
    def transpose(mat):
        return mat.transpose(-2, -1)

    @staticmethod
    def mul(a, b):
        return torch.matmul(a, b)


class SPDBuresWassersteinMetric:
    def __init__(self, n):
        self.n = n

    def parallel_transport(self, tangent_vec, base_point, direction):
        end_point = base_point + direction
        horizontal_velocity = Matrices.mul(direction, base_point)
        partial_horizontal_velocity = Matrices.mul(horizontal_velocity, tangent_vec)
        partial_horizontal_velocity += Matrices.transpose(partial_horizontal_velocity)  # expect: ADL010
        return tangent_vec + Matrices.mul(partial_horizontal_velocity, end_point)


def run():
    torch.manual_seed(0)
    metric = SPDBuresWassersteinMetric(3)
    base_point = torch.eye(3, requires_grad=True)
    tangent_vec = torch.randn(3, 3)
    direction = torch.randn(3, 3)
    transported = metric.parallel_transport(tangent_vec, base_point, direction)
    transported.sum().backward()
