"""Metric learning with a classifier head: the classifier is an MLP built as
`nn.Sequential(*layer_list)` whose first layer is `nn.ReLU(inplace=True)`; it
is applied to the embeddings that the metric loss also uses (normalized, which
saves them), so backward fails ("modified by an inplace operation").
Source: https://github.com/KevinMusgrave/powerful-benchmarker/issues/78"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    # layer_sizes[0] is the dimension of the input
    # layer_sizes[-1] is the dimension of the output
    def __init__(self, layer_sizes, final_relu=False):
        super().__init__()
        layer_list = []
        layer_sizes = [int(x) for x in layer_sizes]
        num_layers = len(layer_sizes) - 1
        final_relu_layer = num_layers if final_relu else num_layers - 1
        for i in range(len(layer_sizes) - 1):
            input_size = layer_sizes[i]
            curr_size = layer_sizes[i + 1]
            if i < final_relu_layer:
                layer_list.append(nn.ReLU(inplace=True))
            layer_list.append(nn.Linear(input_size, curr_size))
        self.net = nn.Sequential(*layer_list)
        self.last_linear = self.net[-1]

    def forward(self, x):
        return self.net(x)


def contrastive_loss(embeddings, labels, margin=0.5):
    embeddings = F.normalize(embeddings, p=2, dim=1)
    sim = embeddings @ embeddings.t()
    same = labels[:, None] == labels[None, :]
    return (F.relu(margin - sim) * (~same)).mean() + ((1 - sim) * same).mean()


class TrainWithClassifier:
    def __init__(self, models, optimizers):
        self.models = models
        self.optimizers = optimizers

    def compute_embeddings(self, data):
        return self.models["embedder"](self.models["trunk"](data))

    def calculate_loss(self, data, labels):
        embeddings = self.compute_embeddings(data)
        metric_loss = contrastive_loss(embeddings, labels)
        logits = self.models["classifier"](embeddings)  # missed: ADL001
        classifier_loss = F.cross_entropy(logits, labels)
        return metric_loss + classifier_loss

    def train_step(self, data, labels):
        for opt in self.optimizers.values():
            opt.zero_grad()
        loss = self.calculate_loss(data, labels)
        loss.backward()
        for opt in self.optimizers.values():
            opt.step()


def run():
    torch.manual_seed(0)
    models = {
        "trunk": nn.Sequential(nn.Linear(10, 16), nn.ReLU()),
        "embedder": MLP([16, 8]),
        "classifier": MLP([8, 8, 3]),
    }
    optimizers = {name: torch.optim.Adam(m.parameters(), lr=1e-3) for name, m in models.items()}
    TrainWithClassifier(models, optimizers).train_step(torch.randn(6, 10), torch.tensor([0, 1, 2, 0, 1, 2]))
