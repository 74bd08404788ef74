"""A zero-shot sketch-based image retrieval model (semantically tied paired
cycle consistency) updates its generators and then its discriminators in
`backward`: `loss_gen.backward(retain_graph=True); self.optimizer_gen.step()`,
then the semantic discriminator's loss on the generators' outputs
`self.sketch_semantic` and `self.image_semantic`, not detached, and
`loss_disc_se.backward()`.  That backward goes through the generators'
graph, whose weights `optimizer_gen.step()` changed in place ("one of the
variables needed for gradient computation has been modified by an inplace
operation").  The fix detaches the generated embeddings for the
discriminator (or steps after both backward passes).
Buggy line: `self.optimizer_gen.step()` in `SEM_PCYC.backward`.
Expected finding: ADL003 there.
Source: https://github.com/AnjanDutta/sem-pcyc/issues/30"""
import torch
import torch.nn as nn


class GANLoss(nn.Module):
    def forward(self, prediction, target_is_real):
        target = torch.ones_like(prediction) if target_is_real else torch.zeros_like(prediction)
        return nn.functional.binary_cross_entropy_with_logits(prediction, target)


class SEM_PCYC(nn.Module):
    def __init__(self, feat_dim=10, sem_dim=6, num_classes=3):
        super().__init__()
        self.sketch_gen = nn.Sequential(nn.Linear(feat_dim, 8), nn.LeakyReLU(0.2), nn.Linear(8, sem_dim))
        self.image_gen = nn.Sequential(nn.Linear(feat_dim, 8), nn.LeakyReLU(0.2), nn.Linear(8, sem_dim))
        self.disc_se = nn.Sequential(nn.Linear(sem_dim, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
        self.classifier_se = nn.Linear(sem_dim, num_classes)
        self.criterion_gan = GANLoss()
        self.criterion_cls = nn.CrossEntropyLoss()
        self.lambda_gen_adv = 1.0
        self.lambda_ret_cls = 1.0
        self.lambda_disc_se = 0.5
        gen_params = list(self.sketch_gen.parameters()) + list(self.image_gen.parameters()) + list(self.classifier_se.parameters())
        self.optimizer_gen = torch.optim.Adam(gen_params, lr=1e-3)
        self.optimizer_disc = torch.optim.SGD(self.disc_se.parameters(), lr=1e-3)

    def forward(self, sk, im):
        self.sketch_semantic = self.sketch_gen(sk)
        self.image_semantic = self.image_gen(im)

    def backward(self, semantic, label_cls):
        loss_gen_adv = self.criterion_gan(self.disc_se(self.sketch_semantic), True) + \
            self.criterion_gan(self.disc_se(self.image_semantic), True)
        loss_gen_adv = self.lambda_gen_adv * loss_gen_adv
        loss_ret_cls = self.criterion_cls(self.classifier_se(self.sketch_semantic), label_cls) + \
            self.criterion_cls(self.classifier_se(self.image_semantic), label_cls)
        loss_gen = loss_gen_adv + self.lambda_ret_cls * loss_ret_cls
        self.optimizer_gen.zero_grad()
        loss_gen.backward(retain_graph=True)
        self.optimizer_gen.step()  # expect: ADL003

        self.optimizer_disc.zero_grad()
        loss_disc_se = self.criterion_gan(self.disc_se(semantic), True) + \
            0.5 * self.criterion_gan(self.disc_se(self.sketch_semantic), False) + \
            0.5 * self.criterion_gan(self.disc_se(self.image_semantic), False)
        loss_disc_se = self.lambda_disc_se * loss_disc_se
        loss_disc_se.backward()
        self.optimizer_disc.step()
        return {'gen': loss_gen, 'disc': loss_disc_se}

    def optimize_params(self, sk, im, se, cl):
        self.forward(sk, im)
        return self.backward(se, cl)


def run():
    torch.manual_seed(0)
    model = SEM_PCYC()
    model.optimize_params(torch.randn(4, 10), torch.randn(4, 10), torch.randn(4, 6), torch.tensor([0, 1, 2, 0]))
