"""Breast cancer histology classification in two stages: a patch-wise network is trained first,
then an image-wise network is trained on the stacked patch features. The image-wise classifier is
`Linear -> ReLU(inplace=True) -> Dropout(inplace=True) -> ...`; the in-place dropout overwrites
the ReLU's output, which the ReLU keeps for its backward, so `loss.backward()` in the image-wise
training fails with "one of the variables needed for gradient computation has been modified by an
inplace operation". The reporter's change: `nn.Dropout()` (not in place) in the classifier.
Source: https://github.com/ImagingLab/ICIAR2018/issues/10
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class ImageWiseNetwork(nn.Module):
    def __init__(self, channels=8, patches=12):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(patches * channels, 16, kernel_size=3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
            nn.Conv2d(16, 8, kernel_size=1),
            nn.BatchNorm2d(8),
            nn.ReLU(inplace=True),
        )
        self.classifier = nn.Sequential(
            nn.Linear(8 * 4 * 4, 32),
            nn.ReLU(inplace=True),
            nn.Dropout(),
            nn.Linear(32, 32),
            nn.ReLU(inplace=True),
            nn.Dropout(),
            nn.Linear(32, 4),
        )

    def forward(self, x):
        x = self.features(x)
        x = x.view(x.size(0), -1)
        return self.classifier(x)


class ImageWiseModel:
    def __init__(self, network):
        self.network = network

    def train(self, batches, epochs=2, lr=1e-3):
        self.network.train()
        optimizer = torch.optim.Adam(self.network.parameters(), lr=lr, betas=(0.9, 0.999))
        loss_fn = nn.CrossEntropyLoss()
        losses = []
        for epoch in range(epochs):
            for patch_features, labels in batches:
                optimizer.zero_grad()
                output = self.network(patch_features)
                loss = loss_fn(output, labels)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
        return losses


batches = [(torch.randn(6, 12 * 8, 4, 4), torch.randint(0, 4, (6,))) for _ in range(3)]
iw_model = ImageWiseModel(ImageWiseNetwork())
losses = iw_model.train(batches)

result = {"losses": losses, "weights": [p.detach().clone() for p in iw_model.network.parameters()]}
