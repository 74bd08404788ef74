"""TimeGAN rebuilt in PyTorch (AlanDongMu/TimeGAN_PytorchRebuild), issue 2: running `main.py`
with the defaults fails in the joint-training loop, in `train_embedder()`, with "Trying to
backward through the graph a second time (or directly access saved tensors after they have
already been freed)"; setting `retain_graph=True` did not make it go away.  The `TimeGAN`
class runs every network once per batch in `gen_batch()` (embedder, recovery, supervisor,
generator, discriminator) and keeps the outputs on `self`; in the joint phase the loop calls
`train_generator()` and then `train_embedder(join_train=True)` on the same batch.  The
generator's loss contains the supervised loss `G_loss_S = MSE(H_hat_supervise, H)` through the
embedder's latent codes `H`, so its `backward()` frees that part of the graph (and the
supervisor's optimizer steps); the embedder's joint loss then backpropagates through the same
`H` and `H_hat_supervise`.  The maintainer's fix (commit 9cab6ea) split the forward out of
`gen_batch()` into `batch_forward()` and ran it again before each `train_*` call.
Re-created with the class's methods and the joint loop of `run.train`; small GRU networks on
random sequences in place of the stock data.
Buggy line: `self.E_loss.backward()` through the forward that `train_generator` already
backpropagated.
Source: https://github.com/AlanDongMu/TimeGAN_PytorchRebuild/issues/2"""
import torch
import torch.nn as nn


class _RNNHead(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, activation=torch.sigmoid):
        super().__init__()
        self.rnn = nn.GRU(input_dim, hidden_dim, batch_first=True)
        self.fc = nn.Linear(hidden_dim, output_dim)
        self.activation = activation

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.activation(self.fc(out))


class Embedder(_RNNHead):
    def __init__(self, para):
        super().__init__(para['input_dim'], para['hidden_dim'], para['hidden_dim'])


class Recovery(_RNNHead):
    def __init__(self, para):
        super().__init__(para['hidden_dim'], para['hidden_dim'], para['input_dim'])


class Generator(_RNNHead):
    def __init__(self, para):
        super().__init__(para['input_dim'], para['hidden_dim'], para['hidden_dim'])


class Supervisor(_RNNHead):
    def __init__(self, para):
        super().__init__(para['hidden_dim'], para['hidden_dim'], para['hidden_dim'])


class Discriminator(_RNNHead):
    def __init__(self, para):
        super().__init__(para['hidden_dim'], para['hidden_dim'], 1)


class Options:
    batch_size = 8
    hidden_dim = 6
    lr = 1e-3
    gamma = 1.0
    iterations = 2


class TimeGAN:
    def __init__(self, opt, ori_data):
        self.opt = opt
        self.ori_data = ori_data
        self.no, self.seq_len, self.z_dim = ori_data.shape
        self.para = {'input_dim': self.z_dim, 'hidden_dim': opt.hidden_dim}
        self.embedder = Embedder(self.para)
        self.recovery = Recovery(self.para)
        self.generator = Generator(self.para)
        self.discriminator = Discriminator(self.para)
        self.supervisor = Supervisor(self.para)

        self.optim_embedder = torch.optim.Adam(self.embedder.parameters(), lr=opt.lr)
        self.optim_recovery = torch.optim.Adam(self.recovery.parameters(), lr=opt.lr)
        self.optim_generator = torch.optim.Adam(self.generator.parameters(), lr=opt.lr)
        self.optim_discriminator = torch.optim.Adam(self.discriminator.parameters(), lr=opt.lr)
        self.optim_supervisor = torch.optim.Adam(self.supervisor.parameters(), lr=opt.lr)

        self.MSELoss = torch.nn.MSELoss()
        self.BCELoss = torch.nn.BCELoss()

    def gen_batch(self):
        idx = torch.randperm(self.no)[:self.opt.batch_size]
        self.X = self.ori_data[idx]
        self.Z = torch.rand(self.opt.batch_size, self.seq_len, self.z_dim)

        # total networks forward
        self.H = self.embedder(self.X)
        self.X_tilde = self.recovery(self.H)
        self.H_hat_supervise = self.supervisor(self.H)

        self.E_hat = self.generator(self.Z)
        self.H_hat = self.supervisor(self.E_hat)
        self.X_hat = self.recovery(self.H_hat)

        self.Y_real = self.discriminator(self.H)
        self.Y_fake = self.discriminator(self.H_hat)
        self.Y_fake_e = self.discriminator(self.E_hat)

    def train_embedder(self, join_train=False):
        self.embedder.train()
        self.recovery.train()
        self.optim_embedder.zero_grad()
        self.optim_recovery.zero_grad()
        self.E_loss_T0 = self.MSELoss(self.X, self.X_tilde)
        self.E_loss0 = 10 * torch.sqrt(self.E_loss_T0)
        if not join_train:
            self.E_loss0.backward()
        else:
            self.G_loss_S = self.MSELoss(self.H[:, 1:, :], self.H_hat_supervise[:, :-1, :])
            self.E_loss = self.E_loss0 + 0.1 * self.G_loss_S
            self.E_loss.backward()  # missed: ADL019
        self.optim_embedder.step()
        self.optim_recovery.step()

    def train_supervisor(self):
        self.generator.train()
        self.supervisor.train()
        self.optim_generator.zero_grad()
        self.optim_supervisor.zero_grad()
        self.G_loss_S = self.MSELoss(self.H[:, 1:, :], self.H_hat_supervise[:, :-1, :])
        self.G_loss_S.backward()
        self.optim_generator.step()
        self.optim_supervisor.step()

    def train_generator(self):
        self.optim_generator.zero_grad()
        self.optim_supervisor.zero_grad()
        self.G_loss_U = self.BCELoss(self.Y_fake, torch.ones_like(self.Y_fake))
        self.G_loss_U_e = self.BCELoss(self.Y_fake_e, torch.ones_like(self.Y_fake_e))
        self.G_loss_V1 = torch.mean(torch.abs(torch.sqrt(torch.std(self.X_hat, [0])[1] + 1e-6)
                                              - torch.sqrt(torch.std(self.X, [0])[1] + 1e-6)))
        self.G_loss_V2 = torch.mean(torch.abs(torch.mean(self.X_hat, [0]) - torch.mean(self.X, [0])))
        self.G_loss_V = self.G_loss_V1 + self.G_loss_V2
        self.G_loss_S = self.MSELoss(self.H_hat_supervise[:, :-1, :], self.H[:, 1:, :])
        self.G_loss = (self.G_loss_U + self.opt.gamma * self.G_loss_U_e
                       + torch.sqrt(self.G_loss_S) * 100 + self.G_loss_V * 100)
        self.G_loss.backward()
        self.optim_generator.step()
        self.optim_supervisor.step()

    def train_discriminator(self):
        self.discriminator.train()
        self.optim_discriminator.zero_grad()
        self.D_loss_real = self.BCELoss(self.Y_real, torch.ones_like(self.Y_real))
        self.D_loss_fake = self.BCELoss(self.Y_fake, torch.zeros_like(self.Y_fake))
        self.D_loss_fake_e = self.BCELoss(self.Y_fake_e, torch.zeros_like(self.Y_fake_e))
        self.D_loss = self.D_loss_real + self.D_loss_fake + self.opt.gamma * self.D_loss_fake_e
        if self.D_loss > 0.15:
            self.D_loss.backward()
            self.optim_discriminator.step()


def train(opt, ori_data):
    model = TimeGAN(opt, ori_data)

    # 1. Embedding network training
    for i in range(opt.iterations):
        model.gen_batch()
        model.train_embedder()

    # 2. Training only with supervised loss
    for i in range(opt.iterations):
        model.gen_batch()
        model.train_supervisor()

    # 3. Joint training
    for i in range(opt.iterations):
        for kk in range(2):
            model.gen_batch()
            model.train_generator()
            model.train_embedder(join_train=True)
        model.gen_batch()
        model.train_discriminator()
    return model


def run():
    torch.manual_seed(0)
    ori_data = torch.rand(32, 10, 3)
    return train(Options(), ori_data)


if __name__ == "__main__":
    run()
