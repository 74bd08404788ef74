"""A variational quantum classifier trained through a PyTorch simulation backend: the data is
encoded by RY rotations, the trainable circuit is a layer of RY rotations whose angles are an
`nn.Parameter` of a `torch.nn.Module`, and the model output is the expectation of Z on every qubit.
The backend builds each parametrized gate's matrix with `torch.as_tensor([[cos, -sin], [sin,
cos]])`: `as_tensor` copies the values of the angle's cos and sin into a new tensor that no longer
depends on the angle, so the state, the expectation and the loss carry no graph, and the first
`loss.backward()` fails: "element 0 of tensors does not require grad and does not have a grad_fn".
The change (the backend's fix): build the matrix with `torch.stack`, which keeps the gradient with
respect to the angles.
Source: https://github.com/qiboteam/qibo/issues/1449 (the backend's cast: review of https://github.com/qiboteam/qibo/pull/1276, "as_tensor is not keeping the gradient ... stack is doing the work")
expect: raises"""
import math

import torch

torch.manual_seed(0)


class TorchBackend:
    dtype = torch.complex128

    def ry_matrix(self, theta):
        c, s = torch.cos(theta / 2), torch.sin(theta / 2)
        return torch.stack([torch.stack([c, -s]), torch.stack([s, c])]).to(self.dtype)

    def apply_gate(self, state, matrix, qubit, nqubits):
        state = state.reshape([2] * nqubits)
        state = torch.tensordot(matrix, state, dims=([1], [qubit]))
        return torch.movedim(state, 0, qubit).reshape(-1)

    def execute_circuit(self, angles, nqubits):
        state = torch.zeros(2 ** nqubits, dtype=self.dtype)
        state[0] = 1
        for qubit, theta in enumerate(angles):
            state = self.apply_gate(state, self.ry_matrix(theta), qubit, nqubits)
        return state

    def expectation_z(self, state, nqubits):
        probs = (state.conj() * state).real.reshape([2] * nqubits)
        total = 0
        for qubit in range(nqubits):
            marginal = probs.sum(dim=[q for q in range(nqubits) if q != qubit])
            total = total + marginal[0] - marginal[1]
        return total / nqubits


BACKEND = TorchBackend()


class QuantumCircuit(torch.nn.Module):
    def __init__(self, nqubits):
        super().__init__()
        self.nqubits = nqubits
        self.circuit_parameters = torch.nn.Parameter(torch.rand(nqubits, dtype=torch.float64))

    def forward(self, x):
        angles = x * math.pi + self.circuit_parameters
        state = BACKEND.execute_circuit(angles, self.nqubits)
        return BACKEND.expectation_z(state, self.nqubits)


model = QuantumCircuit(nqubits=3)
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
data = torch.rand(8, 3, dtype=torch.float64)
targets = torch.where(data.sum(dim=1) > 1.5, 1.0, -1.0).double()

losses = []
for epoch in range(4):
    for x, y in zip(data, targets):
        optimizer.zero_grad()
        loss = (model(x) - y) ** 2
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

result = {"circuit_parameters": model.circuit_parameters.detach().clone(), "losses": torch.tensor(losses)}
