"""Thin-Structure-Inpainting (completing thin structures such as roads and vessels with a U-Net
generator and local/global discriminators), `trainer/gan_trainer.py`: `_train_epoch` steps the
local and global discriminators, then "fixes" their weights for the generator step with
`for p in self.local_discriminator.parameters(): p.require_grad = False` (and the same for the
global one) and unfreezes them with `p.require_grad = True` before the next discriminator step.
`require_grad` is not `requires_grad`: the loops set a new attribute and leave the parameters
trainable, so `backward_G`'s backward through `self.local_discriminator(G)` computes and
accumulates the discriminators' gradients all the same.
Re-created in my own words with the trainer's structure: `BaseGANTrainer`, `GANTrainer` with
`forward`, `backward_local_D` on patches of the detached output, `backward_global_D`,
`backward_G` with the cross-entropy and local adversarial terms, and `_train_epoch`.
Nothing raises: `bug_shows()` shows the generator's backward still computing gradients for the
"frozen" local discriminator's weights.
Buggy lines: the four `p.require_grad = ...` assignments.
Source: https://github.com/Hhhhhhao/Thin-Structure-Inpainting/blob/70e4e4f5c31285f45de6bf699b1e538530799088/trainer/gan_trainer.py"""
import torch
import torch.nn as nn


def extract_patch_from_tensor(x, patch_size=(4, 4)):
    h, w = patch_size
    return [x[:, :, i:i + h, j:j + w] for i in range(0, x.shape[2], h) for j in range(0, x.shape[3], w)]


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 2, 3, padding=1))

    def forward(self, x):
        outputs = self.net(x)
        return outputs, torch.softmax(outputs, dim=1)


class PatchDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.LeakyReLU(0.2), nn.AdaptiveAvgPool2d(1),
                                 nn.Flatten(), nn.Linear(4, 1))

    def forward(self, x):
        return self.net(x)


class GlobalDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.LeakyReLU(0.2), nn.AdaptiveAvgPool2d(1),
                                 nn.Flatten(), nn.Linear(4, 1), nn.Sigmoid())

    def forward(self, x, y):
        return self.net(torch.cat([x, y], dim=1))


class BaseGANTrainer:
    def __init__(self, models, optimizers, loss, config):
        self.generator, self.local_discriminator, self.global_discriminator = models
        (self.generator_optimizer, self.local_discriminator_optimizer,
         self.global_discriminator_optimizer) = optimizers
        self.loss = loss
        self.config = config
        self.device = torch.device("cpu")


class GANTrainer(BaseGANTrainer):
    def __init__(self, models, optimizers, loss, config, data_loader):
        super().__init__(models, optimizers, loss, config)
        self.train_data_loader = data_loader
        self.lambda_1 = config["trainer"]["lambda_1"]
        self.lambda_2 = config["trainer"]["lambda_2"]

    def forward(self, batch_x):
        output, prob = self.generator(batch_x)
        return output, prob

    def backward_local_D(self, generator_outputs, ground_truths, real_labels, fake_labels):
        list_X = extract_patch_from_tensor(generator_outputs.detach())
        list_Y = extract_patch_from_tensor(ground_truths.unsqueeze(1).float())
        discriminator_loss = 0
        for X, Y in zip(list_X, list_Y):
            generated_loss = self.loss["lsgan"](self.local_discriminator(X), fake_labels)
            target_loss = self.loss["lsgan"](self.local_discriminator(Y), real_labels)
            discriminator_loss += generated_loss + target_loss
        discriminator_loss = discriminator_loss / len(list_X)
        discriminator_loss.backward()
        return discriminator_loss.item()

    def backward_global_D(self, outputs, targets, real_labels, fake_labels):
        outputs = torch.where(outputs >= 0.5, torch.ones_like(outputs), torch.zeros_like(outputs))
        dissimilarity = self.global_discriminator(outputs, targets.unsqueeze(1).float())
        similarity = self.global_discriminator(targets.unsqueeze(1).float(), targets.unsqueeze(1).float())
        discriminator_loss = self.loss["vanilla_gan"](dissimilarity, fake_labels) + \
            self.loss["vanilla_gan"](similarity, real_labels)
        discriminator_loss.backward()
        return discriminator_loss.item()

    def backward_G(self, outputs, probs, targets, real_labels):
        generator_local_loss = 0
        list_G = extract_patch_from_tensor(probs)
        for G in list_G:
            generator_local_loss += self.loss["lsgan"](self.local_discriminator(G), real_labels)
        generator_local_loss = generator_local_loss / len(list_G)
        generator_cce_loss = self.loss["ce"](outputs, targets)
        generator_loss = self.lambda_1 * generator_cce_loss + self.lambda_2 * generator_local_loss
        generator_loss.backward()
        return generator_loss.item()

    def _train_epoch(self, epoch):
        self.generator.train()
        self.local_discriminator.train()
        self.global_discriminator.train()
        for batch_idx, (inputs, targets) in enumerate(self.train_data_loader):
            inputs, targets = inputs.to(self.device), targets.to(self.device)
            batch_size = inputs.size(0)
            real_labels = torch.ones((batch_size, 1)).to(self.device)
            fake_labels = torch.zeros((batch_size, 1)).to(self.device)

            # forward G
            outputs, probs = self.forward(inputs)
            probs = probs[:, 1:, :, :]

            # fix weigths for training discriminator
            for p in self.local_discriminator.parameters():
                p.require_grad = True  # the unfreeze half of the typo: harmless alone
            # fix weigths for training discriminator
            for p in self.global_discriminator.parameters():
                p.require_grad = True  # the unfreeze half of the typo: harmless alone

            # train the discriminator
            self.local_discriminator_optimizer.zero_grad()
            self.global_discriminator_optimizer.zero_grad()
            self.backward_local_D(probs.detach(), targets, real_labels, fake_labels)
            self.backward_global_D(probs.detach(), targets, real_labels, fake_labels)
            self.local_discriminator_optimizer.step()
            self.global_discriminator_optimizer.step()

            # fix weigths for training discriminator
            for p in self.local_discriminator.parameters():
                p.require_grad = False  # expect: ADL016
            # fix weigths for training discriminator
            for p in self.global_discriminator.parameters():
                p.require_grad = False  # expect: ADL016

            # backward G
            self.generator_optimizer.zero_grad()
            self.backward_G(outputs, probs, targets, real_labels)
            self.generator_optimizer.step()


def build():
    torch.manual_seed(0)
    models = (UNet(), PatchDiscriminator(), GlobalDiscriminator())
    optimizers = tuple(torch.optim.Adam(m.parameters(), lr=1e-4) for m in models)
    loss = {"ce": nn.CrossEntropyLoss(), "lsgan": nn.MSELoss(), "vanilla_gan": nn.BCELoss()}
    config = {"trainer": {"lambda_1": 1.0, "lambda_2": 0.1}}
    images = torch.rand(4, 1, 8, 8)
    data = [(images[i:i + 2], (images[i:i + 2, 0] > 0.5).long()) for i in (0, 2)]
    return GANTrainer(models, optimizers, loss, config, data)


def run():
    trainer = build()
    trainer._train_epoch(1)
    return trainer


def bug_shows():
    # the generator's backward still reaches the "frozen" local discriminator's weights
    trainer = build()
    in_generator_step, reached = [], []
    backward_generator = trainer.backward_G

    def backward_G(*args):
        in_generator_step.append(True)
        try:
            return backward_generator(*args)
        finally:
            in_generator_step.pop()

    trainer.backward_G = backward_G
    for p in trainer.local_discriminator.parameters():
        p.register_hook(lambda grad: reached.append(bool(in_generator_step)))
    trainer._train_epoch(1)
    return any(reached)
