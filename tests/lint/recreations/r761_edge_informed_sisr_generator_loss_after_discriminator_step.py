"""edge-informed-sisr (edge-informed single image super-resolution), issue 12: training stops
with "one of the variables needed for gradient computation has been modified by an inplace
operation".  In `src/models.py`, `process()` computes both losses in one pass - the
discriminator loss on the detached output, and the generator's adversarial and
feature-matching loss through `self.discriminator(gen_input_fake)` - and returns them;
`backward(gen_loss, dis_loss)` then runs `dis_loss.backward(); self.dis_optimizer.step()`
before `gen_loss.backward()`, whose graph holds the discriminator weights the step has just
changed in place.
Re-created in my own words with the repository's structure: `BaseModel` with its weight paths,
`EdgeModel` with the edge generator, the spectral discriminator returning features, the
adversarial loss module, `process()` and `backward()`, and the edge training loop of `main.py`.
Raises at `gen_loss.backward()`; buggy line: `self.dis_optimizer.step()` before it.
Source: https://github.com/knazeri/edge-informed-sisr/issues/12
(code: https://github.com/knazeri/edge-informed-sisr/blob/67c366a061e2f028ddabc0bd063c0e54f4b179df/src/models.py)"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Config:
    PATH = "./checkpoints"
    GAN_LOSS = "nsgan"
    LR = 1e-4
    BETA1 = 0.0
    BETA2 = 0.9
    SCALE = 2
    ADV_LOSS_WEIGHT1 = 1.0
    FM_LOSS_WEIGHT = 10.0
    MODE = 1
    GPU = [0]


class AdversarialLoss(nn.Module):
    def __init__(self, type='nsgan', target_real_label=1.0, target_fake_label=0.0):
        super().__init__()
        self.type = type
        self.register_buffer('real_label', torch.tensor(target_real_label))
        self.register_buffer('fake_label', torch.tensor(target_fake_label))
        self.criterion = nn.BCELoss()

    def __call__(self, outputs, is_real, is_disc=None):
        labels = (self.real_label if is_real else self.fake_label).expand_as(outputs)
        return self.criterion(outputs, labels)


class EdgeGenerator(nn.Module):
    def __init__(self, use_spectral_norm=True):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(2, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1))

    def forward(self, x):
        return torch.sigmoid(self.net(x))


class Discriminator(nn.Module):
    def __init__(self, in_channels, use_sigmoid=True):
        super().__init__()
        self.use_sigmoid = use_sigmoid
        self.conv1 = nn.Sequential(nn.Conv2d(in_channels, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.2))
        self.conv2 = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, x):
        conv1 = self.conv1(x)
        conv2 = self.conv2(conv1)
        outputs = torch.sigmoid(conv2) if self.use_sigmoid else conv2
        return outputs, [conv1, conv2]


class BaseModel(nn.Module):
    def __init__(self, name, config):
        super().__init__()
        self.name = name
        self.config = config
        self.iteration = 0
        self.gen_weights_path = os.path.join(config.PATH, name + '_gen.pth')
        self.dis_weights_path = os.path.join(config.PATH, name + '_dis.pth')


class EdgeModel(BaseModel):
    def __init__(self, config):
        super().__init__('EdgeModel', config)
        generator = EdgeGenerator(use_spectral_norm=True)
        discriminator = Discriminator(in_channels=2, use_sigmoid=config.GAN_LOSS != 'hinge')
        self.add_module('generator', generator)
        self.add_module('discriminator', discriminator)
        self.add_module('l1_loss', nn.L1Loss())
        self.add_module('adversarial_loss', AdversarialLoss(type=config.GAN_LOSS))
        self.gen_optimizer = optim.Adam(params=generator.parameters(), lr=float(config.LR),
                                        betas=(config.BETA1, config.BETA2))
        self.dis_optimizer = optim.Adam(params=discriminator.parameters(), lr=float(config.LR),
                                        betas=(config.BETA1, config.BETA2))

    def process(self, lr_images, hr_images, lr_edges, hr_edges):
        self.iteration += 1
        self.gen_optimizer.zero_grad()
        self.dis_optimizer.zero_grad()

        outputs = self(lr_images, lr_edges)
        gen_loss = 0
        dis_loss = 0

        # discriminator loss
        dis_input_real = torch.cat((hr_images, hr_edges), dim=1)
        dis_input_fake = torch.cat((hr_images, outputs.detach()), dim=1)
        dis_real, dis_real_feat = self.discriminator(dis_input_real)
        dis_fake, dis_fake_feat = self.discriminator(dis_input_fake)
        dis_real_loss = self.adversarial_loss(dis_real, True, True)
        dis_fake_loss = self.adversarial_loss(dis_fake, False, True)
        dis_loss += (dis_real_loss + dis_fake_loss) / 2

        # generator adversarial loss
        gen_input_fake = torch.cat((hr_images, outputs), dim=1)
        gen_fake, gen_fake_feat = self.discriminator(gen_input_fake)
        gen_gan_loss = self.adversarial_loss(gen_fake, True, False) * self.config.ADV_LOSS_WEIGHT1
        gen_loss += gen_gan_loss

        # generator feature matching loss
        gen_fm_loss = 0
        for i in range(len(dis_real_feat)):
            gen_fm_loss += self.l1_loss(gen_fake_feat[i], dis_real_feat[i].detach())
        gen_fm_loss = gen_fm_loss * self.config.FM_LOSS_WEIGHT
        gen_loss += gen_fm_loss

        logs = [("l_dis", dis_loss.item()), ("l_gen", gen_gan_loss.item()), ("l_fm", gen_fm_loss.item())]
        return outputs, gen_loss, dis_loss, logs

    def forward(self, lr_images, lr_edges):
        hr_images = F.interpolate(lr_images, scale_factor=self.config.SCALE)
        hr_edges = F.interpolate(lr_edges, scale_factor=self.config.SCALE)
        inputs = torch.cat((hr_images, hr_edges), dim=1)
        return self.generator(inputs)

    def backward(self, gen_loss, dis_loss):
        dis_loss.backward()
        self.dis_optimizer.step()  # missed: ADL003 (gen_loss is a parameter of backward(); its graph through the discriminator is built in process() and known only from the caller)

        gen_loss.backward()
        self.gen_optimizer.step()


def train(model, batches):
    for lr_images, hr_images, lr_edges, hr_edges in batches:
        model.train()
        outputs, gen_loss, dis_loss, logs = model.process(lr_images, hr_images, lr_edges, hr_edges)
        model.backward(gen_loss, dis_loss)


def run():
    torch.manual_seed(0)
    model = EdgeModel(Config())
    batches = [(torch.rand(2, 1, 8, 8), torch.rand(2, 1, 16, 16), torch.rand(2, 1, 8, 8),
                (torch.rand(2, 1, 16, 16) > 0.5).float()) for _ in range(2)]
    train(model, batches)
