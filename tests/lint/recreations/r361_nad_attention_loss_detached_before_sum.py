"""Neural Attention Distillation fine-tunes a backdoored student under a
teacher with an attention-map loss at three depths, but each attention term
was detached after the criterion: `at3_loss = criterionAT(activation3_s,
activation3_t).detach() * opt.beta3`.  The sum `at_loss = at1_loss +
at2_loss + at3_loss + cls_loss` then backpropagates only the cross-entropy;
the distillation (the method itself) contributes no gradient.  Nothing
raises.  The fix detaches the teacher's activations instead:
`criterionAT(activation3_s, activation3_t.detach())`.
Buggy line: `at3_loss = criterionAT(...).detach() * opt.beta3` in
`train_step` (and the two lines after it).
Expected finding: none yet (a loss term computed from the student's graph and
detached before it is added to the loss that is backpropagated).
Source: https://github.com/bboylyg/NAD/issues/8"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AT(nn.Module):
    def __init__(self, p=2):
        super().__init__()
        self.p = p

    def attention_map(self, fm, eps=1e-6):
        am = torch.pow(torch.abs(fm), self.p).mean(dim=1, keepdim=True)
        norm = torch.norm(am, dim=(2, 3), keepdim=True)
        return am / (norm + eps)

    def forward(self, fm_s, fm_t):
        return F.mse_loss(self.attention_map(fm_s), self.attention_map(fm_t))


class WideResNetLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = nn.Conv2d(3, 4, 3, padding=1)
        self.block2 = nn.Conv2d(4, 4, 3, padding=1)
        self.block3 = nn.Conv2d(4, 4, 3, padding=1)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        a1 = torch.relu(self.block1(x))
        a2 = torch.relu(self.block2(a1))
        a3 = torch.relu(self.block3(a2))
        return a1, a2, a3, self.fc(a3.mean(dim=(2, 3)))


class Opt:
    beta1, beta2, beta3 = 500.0, 1000.0, 1000.0


def train_step(opt, batches, snet, tnet, optimizer, criterionCls, criterionAT):
    snet.train()
    for img, target in batches:
        activation1_s, activation2_s, activation3_s, output_s = snet(img)
        activation1_t, activation2_t, activation3_t, _ = tnet(img)
        cls_loss = criterionCls(output_s, target)
        at3_loss = criterionAT(activation3_s, activation3_t).detach() * opt.beta3  # missed: none
        at2_loss = criterionAT(activation2_s, activation2_t).detach() * opt.beta2
        at1_loss = criterionAT(activation1_s, activation1_t).detach() * opt.beta1
        at_loss = at1_loss + at2_loss + at3_loss + cls_loss
        optimizer.zero_grad()
        at_loss.backward()
        optimizer.step()


def bug_shows():
    """The student's first block gets exactly the gradient of the
    classification loss alone: the attention terms add nothing."""
    torch.manual_seed(0)
    snet, tnet = WideResNetLike(), WideResNetLike()
    img, target = torch.randn(2, 3, 5, 5), torch.tensor([0, 2])
    optimizer = torch.optim.SGD(snet.parameters(), lr=0.0)
    train_step(Opt(), [(img, target)], snet, tnet, optimizer, nn.CrossEntropyLoss(), AT())
    got = snet.block1.weight.grad.clone()
    snet.zero_grad()
    nn.CrossEntropyLoss()(snet(img)[3], target).backward()
    return torch.allclose(got, snet.block1.weight.grad)
