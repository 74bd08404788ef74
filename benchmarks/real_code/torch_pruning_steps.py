"""Torch-Pruning (VainF/Torch-Pruning) pruning and fine-tuning a small network on CPU, for
docs/real-code.md (its own tests that need no torchvision run on their own; the ones that train use
torchvision's ResNets, not installed here, so this driver does what they do on a network of ours).
Torch-Pruning traces the model by walking the autograd graph of one forward pass (`grad_fn` and
`next_functions`), then replaces each pruned layer's `weight` and `bias` by new `nn.Parameter`s
cut from the old ones, carrying their `.grad` across. Its importance scores read gradients: Taylor
(one backward), Hessian (per-sample `backward(retain_graph=True)` over one graph, squared gradients
accumulated) and weight magnitudes (OBDC's, with its module hooks, is not run: its `_prepare_model`
fails on this snapshot, a `TypeError` on a group its attention helper returns as None); its sparse
training writes into `.grad` in place between backward() and step() (`GroupNormPruner.regularize`,
`BNScalePruner`, `GrowingRegPruner`). Each configuration trains, prunes, then fine-tunes with a new
optimizer over the new parameters. Seeded; prints losses and parameter counts."""
import torch
from torch import nn
import torch.nn.functional as F
import torch_pruning as tp


class SmallNetwork(nn.Module):
    """Convolutions with batch norm, a residual sum and a concatenation, then a classifier."""

    def __init__(self, classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.residual = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16))
        self.branch = nn.Sequential(nn.Conv2d(16, 8, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.hidden = nn.Linear(24, 32)
        self.classifier = nn.Linear(32, classes)

    def forward(self, x):
        x = self.stem(x)
        x = F.relu(x + self.residual(x))
        x = torch.cat([x, self.branch(x)], dim=1)
        return self.classifier(F.relu(self.hidden(x.mean(dim=(2, 3)))))


torch.manual_seed(0)
images = torch.randn(16, 3, 8, 8)
labels = torch.randint(0, 5, (16,))
example_inputs = images[:1]


def loss_of(model):
    return F.cross_entropy(model(images), labels)


def parameter_count(model):
    return sum(p.numel() for p in model.parameters())


def fine_tune(name, model):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for step in range(5):
        loss = loss_of(model)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(name, 'fine-tuned', f'{loss.item():.8f}', parameter_count(model), f'{sum(p.double().sum().item() for p in model.parameters()):.8f}')


def make_pruner(pruner_class, model, importance, **options):
    return pruner_class(model, example_inputs, importance=importance, iterative_steps=2, pruning_ratio=0.5,
                        ignored_layers=[model.classifier], **options)


# importance from gradients: Taylor (one backward), Hessian (per-sample backward passes over one graph)
for name, importance in (('taylor', tp.importance.TaylorImportance()), ('hessian', tp.importance.HessianImportance()),
                         ('magnitude-global', tp.importance.MagnitudeImportance(p=2))):
    torch.manual_seed(1)
    model = SmallNetwork()
    pruner = make_pruner(tp.pruner.MagnitudePruner, model, importance, global_pruning=name.endswith('global'))
    for round in range(2):
        if name == 'taylor':
            model.zero_grad()
            loss_of(model).backward()
        elif name == 'hessian':
            per_sample = F.cross_entropy(model(images[:6]), labels[:6], reduction='none')
            importance.zero_grad()
            for sample_loss in per_sample:
                model.zero_grad()
                sample_loss.backward(retain_graph=True)
                importance.accumulate_grad(model)
        pruner.step()
        print(name, 'round', round, parameter_count(model), f'{loss_of(model).item():.8f}')
    fine_tune(name, model)

# sparse training: the pruner's regulariser written into .grad between backward() and step(), then pruning
for name, pruner_class, importance in (('group-norm', tp.pruner.GroupNormPruner, tp.importance.GroupMagnitudeImportance()),
                                       ('bn-scale', tp.pruner.BNScalePruner, tp.importance.BNScaleImportance()),
                                       ('growing-reg', tp.pruner.GrowingRegPruner, tp.importance.GroupMagnitudeImportance())):
    torch.manual_seed(3)
    model = SmallNetwork()
    pruner = make_pruner(pruner_class, model, importance)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(6):
        loss = loss_of(model)
        optimizer.zero_grad()
        loss.backward()
        pruner.regularize(model)
        optimizer.step()
        if step % 3 == 2:
            pruner.update_regularizer()
    print(name, 'sparse-trained', f'{loss.item():.8f}')
    for round in range(2):
        pruner.step()
    print(name, 'pruned', parameter_count(model))
    fine_tune(name, model)  # a new optimizer: the old one holds the parameters that pruning replaced
