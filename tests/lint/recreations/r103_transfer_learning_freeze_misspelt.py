"""Transfer learning (Udacity deep-learning solution notebook): the
convolutional "features" of a pretrained VGG16 are meant to be frozen with
`for param in vgg16.features.parameters(): param.require_grad = False`.  The
attribute is misspelt (`require_grad`), so it only adds an unused attribute:
the features keep requiring grad and the optimizer over `vgg16.parameters()`
still trains them.  Silent; `bug_shows()` shows the first conv layer's weight
changing after one step.
Source: https://github.com/udacity/deep-learning-v2-pytorch/issues/12"""
import torch
import torch.nn as nn
import torch.optim as optim


class VGG(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=2, stride=2))
        self.classifier = nn.Sequential(
            nn.Linear(16 * 2 * 2, 32), nn.ReLU(True), nn.Dropout(),
            nn.Linear(32, num_classes))

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


def build_model(n_classes=5):
    vgg16 = VGG()
    # Freeze training for all "features" layers
    for param in vgg16.features.parameters():
        param.require_grad = False  # expect: ADL016
    n_inputs = vgg16.classifier[3].in_features
    vgg16.classifier[3] = nn.Linear(n_inputs, n_classes)
    return vgg16


def train_one_batch(vgg16, optimizer, criterion, data, target):
    optimizer.zero_grad()
    output = vgg16(data)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()
    return loss.item()


def bug_shows():
    torch.manual_seed(0)
    vgg16 = build_model()
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(vgg16.parameters(), lr=0.1)
    before = vgg16.features[0].weight.detach().clone()
    train_one_batch(vgg16, optimizer, criterion, torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,)))
    return not torch.equal(before, vgg16.features[0].weight.detach())
