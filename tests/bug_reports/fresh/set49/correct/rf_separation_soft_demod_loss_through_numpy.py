"""RF signal separation (the MIT RF Challenge: recover an OFDM signal of interest from a mixture
with interference): a 1-D U-Net maps the mixture, real and imaginary parts as two channels, to
the signal of interest, trained with SoftDemodLoss = MSE of the waveform + MSE of the soft
demodulated symbols. The soft term goes through the demodulator on
`sig_pred.detach().cpu()` (a TensorFlow / NumPy OFDM demodulator) and comes back as
`torch.tensor(np.real(soft_pred))`, a constant; `loss.requires_grad_(True)` then hides that the
term has no graph. backward() only trains the waveform MSE: the soft-demodulation term, the
point of the loss, never moves a weight, silently. The change demodulates in torch (the same
FFT per OFDM symbol, on the prediction itself), so the soft term's gradient reaches the
network.
Source: https://github.com/AhmedTarek62/ENEL645_ML_Project_RF_Challenge/blob/be07be467ca0dcfd5aa9bca955f89aa3eb6132a4/training_utils/SoftDemodLoss.py
expect: silent"""
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)
FFT_SIZE, CP_LEN = 16, 4


def split_to_complex_batch(torch_tensor):
    # comm_utils.sig_helper.split_to_complex_batch: tf.complex(x[:, 0, :], x[:, 1, :])
    array = np.asarray(torch_tensor)
    return array[:, 0, :] + 1j * array[:, 1, :]


def demodulate_ofdm_signal(x):
    # strip the cyclic prefix of every OFDM symbol and take its FFT: (hard bits, soft symbols)
    symbols = x.reshape(x.shape[0], -1, FFT_SIZE + CP_LEN)[:, :, CP_LEN:]
    soft = np.fft.fft(symbols, axis=-1) / np.sqrt(FFT_SIZE)
    hard = np.stack([soft.real < 0, soft.imag < 0], axis=-1)
    return hard, soft


class SoftDemodLoss(nn.Module):
    def __init__(self, demodulator, device):
        super(SoftDemodLoss, self).__init__()
        self.demodulator = demodulator
        self.device = device
        self.criterion = nn.MSELoss()

    def forward(self, sig_pred, sig_target):
        pred_tf = torch.complex(sig_pred[:, 0, :], sig_pred[:, 1, :])
        target_tf = torch.complex(sig_target[:, 0, :], sig_target[:, 1, :])
        soft_pred = torch.fft.fft(pred_tf.reshape(pred_tf.shape[0], -1, FFT_SIZE + CP_LEN)[:, :, CP_LEN:], dim=-1) / np.sqrt(FFT_SIZE)
        soft_target = torch.fft.fft(target_tf.reshape(target_tf.shape[0], -1, FFT_SIZE + CP_LEN)[:, :, CP_LEN:], dim=-1) / np.sqrt(FFT_SIZE)
        soft_loss = self.criterion(soft_target.real, soft_pred.real) + self.criterion(soft_target.imag, soft_pred.imag)
        mse_loss = self.criterion(sig_pred, sig_target)
        loss = soft_loss + mse_loss
        return loss


class UNet(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.down = nn.Sequential(nn.Conv1d(2, channels, 5, padding=2), nn.ReLU())
        self.up = nn.Conv1d(channels + 2, 2, 5, padding=2)

    def forward(self, x):
        return self.up(torch.cat([self.down(x), x], dim=1))


def train_epoch(model, batches, criterion, optimizer, device):
    model.train()
    total = 0.0
    for sig_mixture, sig_target in batches:
        optimizer.zero_grad()
        sig_pred = model(sig_mixture.to(device))
        loss = criterion(sig_pred, sig_target.to(device))
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(batches)


device = "cpu"
model = UNet()
criterion = SoftDemodLoss(demodulate_ofdm_signal, device)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
length = 4 * (FFT_SIZE + CP_LEN)
targets = torch.randn(4, 4, 2, length)
batches = [(t + 0.7 * torch.randn_like(t), t) for t in targets]
losses = [train_epoch(model, batches, criterion, optimizer, device) for epoch in range(3)]
result = {"losses": torch.tensor(losses), "weights": [p.detach().clone() for p in model.parameters()]}
