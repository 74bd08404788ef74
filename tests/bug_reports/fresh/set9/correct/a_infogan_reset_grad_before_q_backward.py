"""InfoGAN on MNIST-sized vectors with hand-made weight tensors (wiseodd/generative-models'
GAN/infogan/infogan_pytorch.py): after each phase, `reset_grad()` zeroes `p.grad.data` for every
parameter of G, D and Q. The discriminator's loss never reaches Q's weights, so after the first
`D_loss.backward()` their `.grad` is still None and `reset_grad()` fails with "AttributeError:
'NoneType' object has no attribute 'data'" - an autograd fact (Q is not in D's graph yet) seen as
an attribute error.
Source: https://github.com/wiseodd/generative-models/issues/26 ("AttributeError: 'NoneType'
object has no attribute 'data'" in `reset_grad`; the author's answer: skip the parameters whose
`.grad` is None, `if p.grad is not None:`).
expect: raises"""
import numpy as np
import torch
import torch.nn.functional as nn
import torch.optim as optim

torch.manual_seed(0)
np.random.seed(0)
mb_size, Z_dim, X_dim, h_dim = 8, 4, 20, 16


def xavier_init(size):
    xavier_stddev = 1. / np.sqrt(size[0] / 2.)
    return (torch.randn(*size) * xavier_stddev).requires_grad_()


def create_bias(size):
    return torch.zeros(mb_size, size, requires_grad=True)


Wzh, bzh = xavier_init([Z_dim + 10, h_dim]), create_bias(h_dim)
Whx, bhx = xavier_init([h_dim, X_dim]), create_bias(X_dim)
Wxh, bxh = xavier_init([X_dim, h_dim]), create_bias(h_dim)
Why, bhy = xavier_init([h_dim, 1]), create_bias(1)
Wqxh, bqxh = xavier_init([X_dim, h_dim]), create_bias(h_dim)
Whc, bhc = xavier_init([h_dim, 10]), create_bias(10)


def G(z, c):
    h = nn.relu(torch.cat([z, c], 1) @ Wzh + bzh)
    return torch.sigmoid(h @ Whx + bhx)


def D(X):
    h = nn.relu(X @ Wxh + bxh)
    return torch.sigmoid(h @ Why + bhy)


def Q(X):
    h = nn.relu(X @ Wqxh + bqxh)
    return nn.softmax(h @ Whc + bhc, dim=1)


G_params = [Wzh, bzh, Whx, bhx]
D_params = [Wxh, bxh, Why, bhy]
Q_params = [Wqxh, bqxh, Whc, bhc]
params = G_params + D_params + Q_params


def reset_grad():
    for p in params:
        if p.grad is not None:
            p.grad.data.zero_()


G_solver = optim.Adam(G_params, lr=1e-3)
D_solver = optim.Adam(D_params, lr=1e-3)
Q_solver = optim.Adam(G_params + Q_params, lr=1e-3)


def sample_c(size):
    c = np.random.multinomial(1, 10 * [0.1], size=size)
    return torch.from_numpy(c.astype('float32'))


data = torch.rand(64, X_dim)
losses = []
for it in range(4):
    X = data[it * mb_size:(it + 1) * mb_size]
    z = torch.randn(mb_size, Z_dim)
    c = sample_c(mb_size)

    G_sample = G(z, c)
    D_loss = -torch.mean(torch.log(D(X) + 1e-8) + torch.log(1 - D(G_sample) + 1e-8))
    D_loss.backward()
    D_solver.step()
    reset_grad()

    G_loss = -torch.mean(torch.log(D(G(z, c)) + 1e-8))
    G_loss.backward()
    G_solver.step()
    reset_grad()

    Q_c_given_x = Q(G(z, c))
    crossent_loss = torch.mean(-torch.sum(c * torch.log(Q_c_given_x + 1e-8), dim=1))
    ent_loss = torch.mean(-torch.sum(c * torch.log(c + 1e-8), dim=1))
    mi_loss = crossent_loss + ent_loss
    mi_loss.backward()
    Q_solver.step()
    reset_grad()
    losses.append(torch.stack([D_loss.detach(), G_loss.detach(), mi_loss.detach()]))
result = {"losses": losses, "params": [p.detach().clone() for p in params]}
