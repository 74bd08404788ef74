"""Deep Co-Training for semi-supervised image recognition (a PyTorch re-implementation), issue 1:
in `loss_diff` the other network's prediction is the target of each view-difference term --
`S(logit2) * LS(perturbed_logit1)` -- but it is not detached, so the term also pushes the target
network towards the adversarial example's prediction.  The author agreed: "A detach operation is
indeed needed".  Nothing raises; the gradients of both networks are wrong.
Re-created in my own words with the script's structure: the co-training classifier returning
`(softmax, logit)`, `loss_sup`, the Jensen-Shannon `loss_cot`, `loss_diff` over the labelled and
unlabelled batches, the FGSM `get_adv_example`, one SGD optimizer over both networks and the
`train` loop.  `bug_shows()` compares the second network's gradient from `loss_diff` with the one
the detached targets give.
Buggy line: `a = S(logit2) * LS(perturbed_logit1)` (and the three like it).
Source: https://github.com/AlanChou/Deep-Co-Training-for-Semi-Supervised-Image-Recognition/issues/1"""
import torch
import torch.nn as nn
import torch.optim as optim

batch_size = 8
lamda_cot = 1.0
lamda_diff = 0.5


class co_train_classifier(nn.Module):
    def __init__(self):
        super(co_train_classifier, self).__init__()
        self.c1 = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.b1 = nn.BatchNorm2d(8)
        self.r1 = nn.LeakyReLU(negative_slope=0.1)
        self.m1 = nn.MaxPool2d(kernel_size=2, stride=2)
        self.fc = nn.Linear(8, 10)
        self.sf = nn.Softmax(dim=1)

    def forward(self, x):
        x = self.m1(self.r1(self.b1(self.c1(x))))
        x = torch.mean(torch.mean(x, dim=3), dim=2)
        x_logit = self.fc(x)
        return self.sf(x_logit), x_logit


def fgsm_attack(image, epsilon, data_grad):
    return torch.clamp(image + epsilon * data_grad.sign(), -1, 1)


def jsd(p, q):
    kld = nn.KLDivLoss(reduction='batchmean')
    S, LS = nn.Softmax(dim=1), nn.LogSoftmax(dim=1)
    c = LS(0.5 * (p + q))
    return 0.5 * kld(c, S(p)) + 0.5 * kld(c, S(q))


def loss_sup(logit1, logit2, labels_S1, labels_S2):
    ce = nn.CrossEntropyLoss()
    return ce(logit1, labels_S1) + ce(logit2, labels_S2)


def loss_cot(logit1, logit2):
    return jsd(logit1, logit2)


def loss_diff(logit1, logit2, perturbed_logit1, perturbed_logit2, U_logit1, U_logit2, perturbed_logit_U1, perturbed_logit_U2):
    S = nn.Softmax(dim=1)
    LS = nn.LogSoftmax(dim=1)
    a = S(logit2) * LS(perturbed_logit1)  # missed: no rule, the other network's prediction used as the target of a consistency term without a detach (not a TD target)
    a = torch.sum(a)
    b = S(logit1) * LS(perturbed_logit2)
    b = torch.sum(b)
    c = S(U_logit2) * LS(perturbed_logit_U1)
    c = torch.sum(c)
    d = S(U_logit1) * LS(perturbed_logit_U2)
    d = torch.sum(d)
    return -(a + b + c + d) / batch_size


def get_adv_example(net, inputs, labels):
    net.eval()
    inputs = inputs.clone().requires_grad_(True)
    ce = nn.CrossEntropyLoss()
    _, logits = net(inputs)
    loss = ce(logits, labels)
    net.zero_grad()
    loss.backward()
    perturbed_data = fgsm_attack(inputs.detach(), 0.1, inputs.grad.data)
    net.train()
    return perturbed_data


def forward_views(net1, net2, inputs_S1, labels_S1, inputs_S2, labels_S2, inputs_U):
    _, S_logit1 = net1(inputs_S1)
    _, S_logit2 = net2(inputs_S2)
    _, U_logit1 = net1(inputs_U)
    _, U_logit2 = net2(inputs_U)
    perturbed_data1 = get_adv_example(net1, inputs_S1, labels_S1)
    perturbed_data2 = get_adv_example(net2, inputs_S2, labels_S2)
    _, perturbed_logit1 = net1(perturbed_data2)
    _, perturbed_logit2 = net2(perturbed_data1)
    perturbed_data_U1 = get_adv_example(net1, inputs_U, torch.max(U_logit1, 1)[1])
    perturbed_data_U2 = get_adv_example(net2, inputs_U, torch.max(U_logit2, 1)[1])
    _, perturbed_logit_U1 = net1(perturbed_data_U2)
    _, perturbed_logit_U2 = net2(perturbed_data_U1)
    return (S_logit1, S_logit2, perturbed_logit1, perturbed_logit2,
            U_logit1, U_logit2, perturbed_logit_U1, perturbed_logit_U2)


def batches(n=2):
    torch.manual_seed(1)
    return [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,)), torch.randn(4, 3, 8, 8),
             torch.randint(0, 10, (4,)), torch.randn(4, 3, 8, 8)) for _ in range(n)]


def train(net1, net2, optimizer, data):
    net1.train()
    net2.train()
    for inputs_S1, labels_S1, inputs_S2, labels_S2, inputs_U in data:
        views = forward_views(net1, net2, inputs_S1, labels_S1, inputs_S2, labels_S2, inputs_U)
        optimizer.zero_grad()
        Loss_sup = loss_sup(views[0], views[1], labels_S1, labels_S2)
        Loss_cot = loss_cot(views[4], views[5])
        Loss_diff = loss_diff(*views)
        total_loss = Loss_sup + lamda_cot * Loss_cot + lamda_diff * Loss_diff
        total_loss.backward()
        optimizer.step()


def make_nets():
    torch.manual_seed(0)
    net1, net2 = co_train_classifier(), co_train_classifier()
    optimizer = optim.SGD(list(net1.parameters()) + list(net2.parameters()), lr=0.05, momentum=0.9)
    return net1, net2, optimizer


def run():
    net1, net2, optimizer = make_nets()
    train(net1, net2, optimizer, batches())


def bug_shows():
    net1, net2, _ = make_nets()
    inputs_S1, labels_S1, inputs_S2, labels_S2, inputs_U = batches(1)[0]
    views = forward_views(net1, net2, inputs_S1, labels_S1, inputs_S2, labels_S2, inputs_U)
    (l1, l2, p1, p2, u1, u2, pu1, pu2) = views
    as_written = torch.autograd.grad(loss_diff(*views), net2.fc.weight, retain_graph=True)[0]
    detached = torch.autograd.grad(
        loss_diff(l1.detach(), l2.detach(), p1, p2, u1.detach(), u2.detach(), pu1, pu2), net2.fc.weight)[0]
    return not torch.allclose(as_written, detached)
