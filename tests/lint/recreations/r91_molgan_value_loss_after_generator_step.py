"""MolGAN: the solver backpropagates the generator's loss with
`retain_graph=True`, steps the generator, and then backpropagates the value
network's loss, whose reward term `V(edges_hat, nodes_hat)` was computed from
the generator's output before that step.  The second backward goes through
the generator's layers with their weights already updated ("output 0 of
TBackward0, is at version 2; expected version 1").
Source: https://github.com/kfzyqin/Implementation-MolGAN-PyTorch/issues/1"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Generator(nn.Module):
    def __init__(self, z_dim=8, vertexes=5, edges=3, nodes=4):
        super().__init__()
        self.vertexes, self.edges, self.nodes = vertexes, edges, nodes
        self.layers = nn.Sequential(nn.Linear(z_dim, 16), nn.Tanh(), nn.Linear(16, 32), nn.Tanh())
        self.edges_layer = nn.Linear(32, edges * vertexes * vertexes)
        self.nodes_layer = nn.Linear(32, vertexes * nodes)

    def forward(self, x):
        output = self.layers(x)
        edges_logits = self.edges_layer(output).view(-1, self.edges, self.vertexes, self.vertexes)
        edges_logits = (edges_logits + edges_logits.permute(0, 1, 3, 2)) / 2
        edges_logits = edges_logits.permute(0, 2, 3, 1)
        nodes_logits = self.nodes_layer(output).view(-1, self.vertexes, self.nodes)
        return edges_logits, nodes_logits


class Discriminator(nn.Module):
    def __init__(self, vertexes=5, edges=3, nodes=4):
        super().__init__()
        self.fc = nn.Linear(vertexes * vertexes * edges + vertexes * nodes, 16)
        self.out = nn.Linear(16, 1)

    def forward(self, adj, hidden, node, activation=None):
        h = torch.cat([adj.flatten(1), node.flatten(1)], dim=1)
        features = torch.tanh(self.fc(h))
        output = self.out(features)
        output = activation(output) if activation is not None else output
        return output, features


class Solver:
    def __init__(self, la=0.5):
        self.G = Generator()
        self.D = Discriminator()
        self.V = Discriminator()
        self.g_optimizer = torch.optim.Adam(self.G.parameters(), 1e-3)
        self.d_optimizer = torch.optim.Adam(self.D.parameters(), 1e-3)
        self.v_optimizer = torch.optim.Adam(self.V.parameters(), 1e-3)
        self.la = la

    def reset_grad(self):
        self.g_optimizer.zero_grad()
        self.d_optimizer.zero_grad()
        self.v_optimizer.zero_grad()

    def postprocess(self, inputs, temperature=1.0):
        return [F.gumbel_softmax(e_logits / temperature, hard=False) for e_logits in inputs]

    def train_step(self, a_tensor, x_tensor, z, reward_r, reward_f):
        edges_logits, nodes_logits = self.G(z)
        (edges_hat, nodes_hat) = self.postprocess((edges_logits, nodes_logits))
        logits_fake, features_fake = self.D(edges_hat, None, nodes_hat)

        value_logit_real, _ = self.V(a_tensor, None, x_tensor, torch.sigmoid)
        value_logit_fake, _ = self.V(edges_hat, None, nodes_hat, torch.sigmoid)

        loss_G = torch.mean(-logits_fake)
        loss_V = torch.mean(torch.abs(value_logit_real - reward_r) + torch.abs(value_logit_fake - reward_f))
        loss_RL = torch.mean(-value_logit_fake)
        alpha = torch.abs(loss_G.detach() / loss_RL.detach()).detach()
        train_step_G = self.la * loss_G + (1 - self.la) * alpha * loss_RL
        train_step_V = loss_V

        self.reset_grad()
        train_step_G.backward(retain_graph=True)
        self.g_optimizer.step()  # expect: ADL003

        train_step_V.backward()
        self.v_optimizer.step()


def run():
    torch.manual_seed(0)
    solver = Solver()
    a_tensor = F.one_hot(torch.randint(0, 3, (4, 5, 5)), 3).float()
    x_tensor = F.one_hot(torch.randint(0, 4, (4, 5)), 4).float()
    solver.train_step(a_tensor, x_tensor, torch.randn(4, 8), torch.rand(4, 1), torch.rand(4, 1))
