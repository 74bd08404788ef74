"""Re-cycle GAN (unpaired video-to-video translation): `backward()` accumulates, for each time step,
the generator/predictor loss `updateGenerator(true_a_tuple, fake_b_tuple, true_a_frame_list[i],
true_b_frame_list[i], P_A, P_B, G_B_to_A, D_B)`, whose 4th argument is scored by the discriminator
as the generator's adversarial term: `fake_pred = net_D(fake_y_next)`. Passing the real frame of
domain B there makes the adversarial term a function of the data and the discriminator only: it has
a value, but no gradient reaches either generator, which train on the recycle and prediction
losses alone (no error is raised). The maintainer's fix passes the generated frame,
`fake_b_frame_list[-1]` (and `fake_a_frame_list[-1]` for the other direction).
Source: https://github.com/SunnerLi/RecycleGAN/issues/2
expect: silent"""
import itertools

import torch
import torch.nn as nn

torch.manual_seed(0)


def conv_net(in_channels, out_channels):
    return nn.Sequential(nn.Conv2d(in_channels, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, out_channels, 3, padding=1), nn.Tanh())


class ReCycleGAN(nn.Module):
    def __init__(self, t=2, T=3, C=3):
        super().__init__()
        self.t, self.T = t, T
        self.G_A_to_B = conv_net(C, C)
        self.G_B_to_A = conv_net(C, C)
        self.P_A = conv_net(t * C, C)
        self.P_B = conv_net(t * C, C)
        self.D_A = nn.Sequential(nn.Conv2d(C, 8, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 3, padding=1))
        self.D_B = nn.Sequential(nn.Conv2d(C, 8, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 3, padding=1))
        self.criterion_l2 = nn.MSELoss()
        self.optim_G = torch.optim.Adam(itertools.chain(self.G_A_to_B.parameters(), self.G_B_to_A.parameters(),
                                                        self.P_A.parameters(), self.P_B.parameters()), lr=0.001)
        self.optim_D = torch.optim.Adam(itertools.chain(self.D_A.parameters(), self.D_B.parameters()), lr=0.001)

    def criterion_adv(self, pred, is_real):
        return self.criterion_l2(pred, torch.ones_like(pred) if is_real else torch.zeros_like(pred))

    def setInput(self, true_a_seq, true_b_seq):
        self.true_a_seq, self.true_b_seq = true_a_seq, true_b_seq

    def updateGenerator(self, true_x_tuple, fake_y_tuple, true_x_next, fake_y_next, P_X, P_Y, net_Y_to_X, net_D):
        fake_x_next = P_X(true_x_tuple)
        reco_x_next = net_Y_to_X(P_Y(fake_y_tuple))
        fake_pred = net_D(fake_y_next)
        return self.criterion_adv(fake_pred, True) + \
            self.criterion_l2(reco_x_next, true_x_next) * 10. + \
            self.criterion_l2(fake_x_next, true_x_next) * 10.

    def updateDiscriminator(self, fake_frame, true_frame, net_D):
        fake_pred = net_D(fake_frame.detach())
        true_pred = net_D(true_frame)
        return self.criterion_adv(true_pred, True) + self.criterion_adv(fake_pred, False)

    def backward(self):
        true_a_frame_list = [frame.squeeze(1) for frame in torch.chunk(self.true_a_seq, self.T, dim=1)]
        true_b_frame_list = [frame.squeeze(1) for frame in torch.chunk(self.true_b_seq, self.T, dim=1)]
        self.loss_D = 0.0
        self.loss_G = 0.0
        for i in range(self.t, self.T):
            fake_b_frame_list = []
            fake_a_frame_list = []
            for j in range(self.t + 1):
                fake_b_frame_list.append(self.G_A_to_B(true_a_frame_list[i + j - self.t]))
                fake_a_frame_list.append(self.G_B_to_A(true_b_frame_list[i + j - self.t]))
            true_a_tuple = torch.cat(true_a_frame_list[i - self.t: i], dim=1)
            true_b_tuple = torch.cat(true_b_frame_list[i - self.t: i], dim=1)
            fake_a_tuple = torch.cat(fake_a_frame_list[:-1], dim=1)
            fake_b_tuple = torch.cat(fake_b_frame_list[:-1], dim=1)

            self.loss_G += self.updateGenerator(true_a_tuple, fake_b_tuple, true_a_frame_list[i], true_b_frame_list[i], self.P_A, self.P_B, self.G_B_to_A, self.D_B)
            self.loss_G += self.updateGenerator(true_b_tuple, fake_a_tuple, true_b_frame_list[i], true_a_frame_list[i], self.P_B, self.P_A, self.G_A_to_B, self.D_A)

            self.loss_D += self.updateDiscriminator(fake_b_frame_list[-1], true_b_frame_list[i], self.D_B)
            self.loss_D += self.updateDiscriminator(fake_a_frame_list[-1], true_a_frame_list[i], self.D_A)

        self.optim_G.zero_grad()
        self.loss_G.backward()
        self.optim_G.step()

        self.optim_D.zero_grad()
        self.loss_D.backward()
        self.optim_D.step()


model = ReCycleGAN()
losses = []
for step in range(3):
    model.setInput(torch.rand(2, 3, 3, 16, 16) * 2 - 1, torch.rand(2, 3, 3, 16, 16) * 2 - 1)
    model.backward()
    losses.append(torch.stack([model.loss_G.detach(), model.loss_D.detach()]))
result = {"losses": torch.stack(losses),
          "generators": [p.detach().clone() for p in itertools.chain(model.G_A_to_B.parameters(), model.G_B_to_A.parameters())]}
