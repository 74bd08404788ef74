"""SAM (Structural Agnostic Model) training step: the discriminator scores the
generated variables twice, detached for its own loss and attached for the
generators' loss; `disc_loss.backward(); d_optimizer.step()` runs first, and
the generators' loss is backpropagated afterwards through the discriminator's
stepped weights ("output 0 of TBackward, is at version 3", PyTorch 1.5).
Source: https://github.com/FenTechSolutions/CausalDiscoveryToolbox/issues/66"""
import torch as th
import torch.nn as nn


class SAMDiscriminator(nn.Module):
    def __init__(self, nfeatures, dnh, hlayers=2):
        super().__init__()
        layers = [nn.Linear(nfeatures, dnh), nn.BatchNorm1d(dnh), nn.LeakyReLU(.2)]
        for _ in range(hlayers - 1):
            layers += [nn.Linear(dnh, dnh), nn.BatchNorm1d(dnh), nn.LeakyReLU(.2)]
        layers.append(nn.Linear(dnh, 1))
        self.layers = nn.Sequential(*layers)

    def forward(self, x, obs_data=None):
        if obs_data is not None:
            return [self.layers(i) for i in th.unbind(obs_data.unsqueeze(1) * (1 - th.eye(x.shape[1]))
                                                      + x.unsqueeze(1) * th.eye(x.shape[1]), 1)]
        return self.layers(x)


class SAMGenerators(nn.Module):
    def __init__(self, nfeatures, nh):
        super().__init__()
        self.weights = nn.Parameter(th.randn(nfeatures, nfeatures + 1, nh) * 0.1)
        self.out = nn.Parameter(th.randn(nfeatures, nh) * 0.1)

    def forward(self, data, noise, adj_matrix):
        x = th.cat([data, noise], 1)
        masked = x.unsqueeze(1) * th.cat([adj_matrix, th.ones(adj_matrix.shape[0], 1)], 1)
        hidden = th.tanh(th.einsum("bij,ijk->bik", masked, self.weights))
        return (hidden * self.out).sum(-1)


def run_SAM(data, lr_gen=0.01, lr_disc=0.01, nh=8, dnh=8, train=2, lambda1=0.01):
    rows, cols = data.shape
    sam = SAMGenerators(cols, nh)
    discriminator = SAMDiscriminator(cols, dnh)
    graph_logits = nn.Parameter(th.zeros(cols, cols))
    g_optimizer = th.optim.Adam(sam.parameters(), lr=lr_gen)
    graph_optimizer = th.optim.Adam([graph_logits], lr=lr_gen)
    d_optimizer = th.optim.Adam(discriminator.parameters(), lr=lr_disc)
    nb_var = cols
    for epoch in range(train):
        batch = data
        g_optimizer.zero_grad()
        graph_optimizer.zero_grad()
        d_optimizer.zero_grad()
        drawn_graph = th.sigmoid(graph_logits) * (1 - th.eye(cols))
        generated_variables = sam(batch, th.randn(rows, 1), drawn_graph)

        disc_vars_d = discriminator(generated_variables.detach(), batch)
        disc_vars_g = discriminator(generated_variables, batch)
        true_vars_disc = discriminator(batch)

        disc_loss = sum([th.mean(th.exp(gen - 1)) for gen in disc_vars_d]) / nb_var - th.mean(true_vars_disc)
        gen_loss = -sum([th.mean(th.exp(gen - 1)) for gen in disc_vars_g])

        disc_loss.backward()
        d_optimizer.step()  # expect: ADL003

        struc_loss = lambda1 * drawn_graph.sum()
        loss = gen_loss + struc_loss
        loss.backward(retain_graph=True)
        g_optimizer.step()
        graph_optimizer.step()
    return th.sigmoid(graph_logits).detach()


def run():
    th.manual_seed(0)
    run_SAM(th.randn(16, 3))
