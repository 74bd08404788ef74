"""Deep_Reinforcement_Learning_SUT, CA17 notebook, `QuantumValueNetwork` and
`QuantumRLAgent.train_step`: the value network encodes each state with a linear layer, then
leaves torch for its simulated circuit (`torch.tanh(encoded_state).squeeze().detach().numpy()`,
amplitude encoding, the variational circuit and the observable in numpy), scales the expectation
with the trainable `value_scale` and `value_bias`, keeps `scaled_value.item()`, and returns
`torch.FloatTensor(values)`.  `train_step` computes `values = self.value_net(states)`, the targets
from `next_values`, `value_loss = mse_loss(values, targets.detach())` and calls
`value_loss.backward()` on a loss with no graph.
Re-created in my own words with the notebook's structure, the circuit reduced to a numpy stand-in
(`VariationalQuantumCircuit` applying RY rotations from its parameters and a ring of CNOT-like
permutations to a state vector): `QuantumStateEncoder.amplitude_encoding`, `QuantumValueNetwork`,
a small policy, and `train_step(states, actions, rewards, next_states, dones)`.
Raises at `value_loss.backward()` ("element 0 of tensors does not require grad").
Source: https://github.com/tahamajs/Deep_Reinforcement_Learning_SUT/blob/fcde31352f67821be64ed366b6a1a159bccefa57/CAs/No%20Answer/CA17.ipynb"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class QuantumStateEncoder:
    def __init__(self, n_qubits):
        self.n_states = 2 ** n_qubits

    def amplitude_encoding(self, data):
        data = data.real.astype(float)
        padded = np.zeros(self.n_states)
        padded[: min(len(data), self.n_states)] = data[: self.n_states]
        norm = np.linalg.norm(padded)
        return padded / norm if norm > 0 else np.eye(self.n_states)[0]


class VariationalQuantumCircuit(nn.Module):
    def __init__(self, n_qubits, n_layers):
        super().__init__()
        self.n_qubits = n_qubits
        self.params = nn.Parameter(torch.randn(n_layers, n_qubits) * 0.1)

    def forward(self, state):
        angles = self.params.detach().numpy()
        for layer in angles:
            for q, theta in enumerate(layer):
                c, s = np.cos(theta / 2), np.sin(theta / 2)
                state = state.reshape([2] * self.n_qubits)
                state = np.moveaxis(state, q, 0)
                state = np.stack([c * state[0] - s * state[1], s * state[0] + c * state[1]])
                state = np.moveaxis(state, 0, q).reshape(-1)
            state = np.roll(state, 1)
        return state.astype(complex)


class QuantumValueNetwork(nn.Module):
    def __init__(self, state_dim, n_qubits=3, n_layers=2):
        super().__init__()
        self.state_encoder = nn.Linear(state_dim, min(2 ** n_qubits, 8))
        self.vqc = VariationalQuantumCircuit(n_qubits, n_layers)
        self.quantum_encoder = QuantumStateEncoder(n_qubits)
        self.value_observable = np.eye(2 ** n_qubits, dtype=complex)
        for i in range(2 ** n_qubits):
            if i & 1:
                self.value_observable[i, i] = -1.0
        self.value_scale = nn.Parameter(torch.tensor(1.0))
        self.value_bias = nn.Parameter(torch.tensor(0.0))

    def forward(self, state):
        values = []
        for b in range(state.shape[0]):
            encoded_state = self.state_encoder(state[b:b + 1])
            encoded_state = torch.tanh(encoded_state).squeeze().detach().numpy()
            quantum_state = self.quantum_encoder.amplitude_encoding(encoded_state)
            output_state = self.vqc(quantum_state)
            value_expectation = np.real(np.conj(output_state) @ self.value_observable @ output_state)
            scaled_value = self.value_scale * value_expectation + self.value_bias
            values.append(scaled_value.item())
        return torch.FloatTensor(values).unsqueeze(-1)


class QuantumRLAgent:
    def __init__(self, state_dim, action_dim, learning_rate=1e-3):
        self.policy = nn.Sequential(nn.Linear(state_dim, 16), nn.Tanh(), nn.Linear(16, action_dim))
        self.value_net = QuantumValueNetwork(state_dim)
        self.policy_optimizer = torch.optim.Adam(self.policy.parameters(), lr=learning_rate)
        self.value_optimizer = torch.optim.Adam(self.value_net.parameters(), lr=learning_rate)

    def train_step(self, states, actions, rewards, next_states, dones, gamma=0.99):
        values = self.value_net(states).squeeze()
        next_values = self.value_net(next_states).squeeze()
        targets = rewards + gamma * next_values * (1 - dones.float())
        advantages = targets - values
        value_loss = F.mse_loss(values, targets.detach())
        policy_actions = self.policy(states)
        action_diff = F.mse_loss(policy_actions, actions, reduction="none")
        log_probs = -action_diff.sum(dim=-1)
        policy_loss = -(log_probs * advantages.detach()).mean()
        self.value_optimizer.zero_grad()
        value_loss.backward()  # missed: ADL034 across classes: .detach().numpy() and .item() in QuantumValueNetwork.forward
        self.value_optimizer.step()
        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()
        return {"policy_loss": policy_loss.item(), "value_loss": value_loss.item()}


def run():
    torch.manual_seed(0)
    agent = QuantumRLAgent(4, 2)
    states, next_states = torch.randn(6, 4), torch.randn(6, 4)
    actions, rewards = torch.randn(6, 2), torch.randn(6)
    agent.train_step(states, actions, rewards, next_states, torch.zeros(6, dtype=torch.bool))
