"""Anomaly Transformer's minimax training: `loss1.backward(retain_graph=True)`,
`self.optimizer.step()`, then `loss2.backward()` through the same forward
pass, whose layers the step has just changed ("output 0 of
AsStridedBackward0, is at version 2; expected version 1").
Source: https://github.com/thuml/Anomaly-Transformer/issues/1"""
import math

import torch
import torch.nn as nn


class AnomalyAttention(nn.Module):
    def __init__(self, win_size, d_model):
        super().__init__()
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.sigma = nn.Linear(d_model, 1)
        distances = torch.arange(win_size)[:, None] - torch.arange(win_size)[None, :]
        self.register_buffer("distances", distances.abs().float())

    def forward(self, x):
        q, k, v = self.query(x), self.key(x), self.value(x)
        scale = 1.0 / math.sqrt(x.shape[-1])
        series = torch.softmax(scale * q @ k.transpose(1, 2), dim=-1)
        sigma = torch.sigmoid(self.sigma(x) * 5) + 1e-5
        sigma = torch.pow(3, sigma) - 1
        prior = 1.0 / (math.sqrt(2 * math.pi) * sigma) * torch.exp(-self.distances ** 2 / 2 / (sigma ** 2))
        return series @ v, series, prior, sigma


class AnomalyTransformer(nn.Module):
    def __init__(self, win_size, enc_in, d_model=8, e_layers=2):
        super().__init__()
        self.embedding = nn.Linear(enc_in, d_model)
        self.attentions = nn.ModuleList([AnomalyAttention(win_size, d_model) for _ in range(e_layers)])
        self.projection = nn.Linear(d_model, enc_in)

    def forward(self, x):
        enc_out = self.embedding(x)
        series_list, prior_list, sigma_list = [], [], []
        for attention in self.attentions:
            enc_out, series, prior, sigma = attention(enc_out)
            series_list.append(series)
            prior_list.append(prior)
            sigma_list.append(sigma)
        return self.projection(enc_out), series_list, prior_list, sigma_list


def my_kl_loss(p, q):
    res = p * (torch.log(p + 0.0001) - torch.log(q + 0.0001))
    return torch.mean(torch.sum(res, dim=-1), dim=1)


class Solver:
    def __init__(self, win_size=6, input_c=3, k=3, lr=1e-4, num_epochs=1):
        self.k = k
        self.num_epochs = num_epochs
        self.model = AnomalyTransformer(win_size=win_size, enc_in=input_c)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.criterion = nn.MSELoss()
        self.train_loader = [(torch.randn(4, win_size, input_c), torch.zeros(4))]

    def train(self):
        for epoch in range(self.num_epochs):
            self.model.train()
            for i, (input_data, labels) in enumerate(self.train_loader):
                self.optimizer.zero_grad()
                input = input_data.float()
                output, series, prior, _ = self.model(input)

                series_loss = 0.0
                prior_loss = 0.0
                for u in range(len(prior)):
                    norm_prior = prior[u] / torch.unsqueeze(torch.sum(prior[u], dim=-1), dim=-1)
                    series_loss += torch.mean(my_kl_loss(series[u], norm_prior.detach())) + torch.mean(
                        my_kl_loss(norm_prior.detach(), series[u]))
                    prior_loss += torch.mean(my_kl_loss(norm_prior, series[u].detach())) + torch.mean(
                        my_kl_loss(series[u].detach(), norm_prior))
                series_loss = series_loss / len(prior)
                prior_loss = prior_loss / len(prior)

                rec_loss = self.criterion(output, input)
                loss1 = rec_loss - self.k * series_loss
                loss2 = rec_loss + self.k * prior_loss

                # Minimax strategy
                loss1.backward(retain_graph=True)
                self.optimizer.step()  # expect: ADL003
                loss2.backward()
                self.optimizer.step()


def run():
    torch.manual_seed(0)
    Solver().train()
