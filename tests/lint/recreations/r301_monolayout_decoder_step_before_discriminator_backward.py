"""MonoLayout trains an encoder-decoder that predicts a top view and a
discriminator on it.  Past `discr_train_epoch` the trainer backpropagates the
generator loss with `retain_graph=True`, steps the encoder and decoder
(`self.model_optimizer.step()`), then backpropagates the discriminator loss,
which reads `fake_pred = discriminator(outputs["topview"])` without
`.detach()`: that backward goes through the decoder's convolutions, whose
weights the step just changed ("one of the variables needed for gradient
computation has been modified by an inplace operation: [torch.cuda.FloatTensor
[2, 16, 3, 3]] is at version 2").  The fix steps both optimizers after both
backward passes (or detaches the top view for the discriminator).
Buggy line: `self.model_optimizer.step()` between the two backward passes in
`Trainer.run_epoch`.
Expected finding: ADL003 there.
Source: https://github.com/manila95/monolayout/issues/6"""
import torch
import torch.nn as nn
import torch.optim as optim


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU())

    def forward(self, x):
        return self.conv(x)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 2, 3, padding=1))

    def forward(self, features):
        return self.convs(features)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Conv2d(2, 4, 3, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(16, 1))

    def forward(self, x):
        return self.main(x)


class Trainer:
    def __init__(self, discr_train_epoch=0, lambda_D=0.01):
        self.models = {"encoder": Encoder(), "decoder": Decoder(), "discriminator": Discriminator()}
        self.parameters_to_train = list(self.models["encoder"].parameters()) + list(self.models["decoder"].parameters())
        self.model_optimizer = optim.Adam(self.parameters_to_train, 1e-3)
        self.model_optimizer_D = optim.Adam(self.models["discriminator"].parameters(), 1e-3)
        self.criterion_d = nn.BCEWithLogitsLoss()
        self.criterion = nn.CrossEntropyLoss()
        self.discr_train_epoch = discr_train_epoch
        self.lambda_D = lambda_D
        self.epoch = 1

    def process_batch(self, inputs):
        features = self.models["encoder"](inputs["color"])
        outputs = {"topview": self.models["decoder"](features)}
        losses = {"loss": self.criterion(outputs["topview"], inputs["static"])}
        return outputs, losses

    def run_epoch(self, batches):
        for inputs in batches:
            outputs, losses = self.process_batch(inputs)
            self.model_optimizer.zero_grad()
            fake_pred = self.models["discriminator"](outputs["topview"])
            real_pred = self.models["discriminator"](inputs["discr"])
            valid, fake = torch.ones_like(fake_pred), torch.zeros_like(fake_pred)
            loss_GAN = self.criterion_d(fake_pred, valid)
            loss_D = self.criterion_d(fake_pred, fake) + self.criterion_d(real_pred, valid)
            loss_G = self.lambda_D * loss_GAN + losses["loss"]
            if self.epoch > self.discr_train_epoch:
                loss_G.backward(retain_graph=True)
                self.model_optimizer.step()  # expect: ADL003
                self.model_optimizer_D.zero_grad()
                loss_D.backward()
                self.model_optimizer_D.step()
            else:
                losses["loss"].backward()
                self.model_optimizer.step()


def run():
    torch.manual_seed(0)
    trainer = Trainer()
    batch = {
        "color": torch.randn(2, 3, 8, 8),
        "static": torch.randint(0, 2, (2, 4, 4)),
        "discr": torch.rand(2, 2, 4, 4),
    }
    trainer.run_epoch([batch])
