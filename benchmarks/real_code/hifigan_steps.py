"""A few steps of hifi-gan's train.py loop (GAN, weight_norm generator, spectral_norm discriminator,
two AdamW optimizers, ExponentialLR), on random audio.  The project's models.py is used as is; the
mel loss uses a torch.stft magnitude instead of librosa's mel filters (librosa is not installed)."""
import itertools, json, sys, types, torch
# utils.py imports matplotlib for its spectrogram plots only (not installed, not used here)
sys.modules['matplotlib'] = types.SimpleNamespace(use=lambda *a: None, pylab=None)
sys.modules['matplotlib.pylab'] = types.ModuleType('matplotlib.pylab')
import torch.nn.functional as F
from env import AttrDict
from models import Generator, MultiPeriodDiscriminator, MultiScaleDiscriminator, feature_loss, generator_loss, discriminator_loss

torch.manual_seed(1234)
h = AttrDict(json.load(open('config_v1.json')))
h.update(upsample_rates=[4, 4], upsample_kernel_sizes=[8, 8], upsample_initial_channel=32,
         resblock_kernel_sizes=[3, 5], resblock_dilation_sizes=[[1, 3, 5], [1, 3, 5]])
generator, mpd, msd = Generator(h), MultiPeriodDiscriminator(), MultiScaleDiscriminator()
optim_g = torch.optim.AdamW(generator.parameters(), h.learning_rate, betas=[h.adam_b1, h.adam_b2])
optim_d = torch.optim.AdamW(itertools.chain(msd.parameters(), mpd.parameters()), h.learning_rate, betas=[h.adam_b1, h.adam_b2])
scheduler_g = torch.optim.lr_scheduler.ExponentialLR(optim_g, gamma=h.lr_decay)
scheduler_d = torch.optim.lr_scheduler.ExponentialLR(optim_d, gamma=h.lr_decay)

def spectrogram(wave):
    return torch.stft(wave, 64, 16, 64, torch.hann_window(64), return_complex=True).abs()

generator.train(); mpd.train(); msd.train()
for epoch in range(2):
    for step in range(2):
        x = torch.randn(2, h.num_mels, 32)
        y = torch.randn(2, 1, 32 * 16) * 0.1
        y_mel = spectrogram(y.squeeze(1))
        y_g_hat = generator(x)
        y_g_hat_mel = spectrogram(y_g_hat.squeeze(1))
        optim_d.zero_grad()
        y_df_hat_r, y_df_hat_g, _, _ = mpd(y, y_g_hat.detach())
        loss_disc_f, _, _ = discriminator_loss(y_df_hat_r, y_df_hat_g)
        y_ds_hat_r, y_ds_hat_g, _, _ = msd(y, y_g_hat.detach())
        loss_disc_s, _, _ = discriminator_loss(y_ds_hat_r, y_ds_hat_g)
        loss_disc_all = loss_disc_s + loss_disc_f
        loss_disc_all.backward()
        optim_d.step()
        optim_g.zero_grad()
        loss_mel = F.l1_loss(y_mel, y_g_hat_mel) * 45
        y_df_hat_r, y_df_hat_g, fmap_f_r, fmap_f_g = mpd(y, y_g_hat)
        y_ds_hat_r, y_ds_hat_g, fmap_s_r, fmap_s_g = msd(y, y_g_hat)
        loss_gen_all = (generator_loss(y_ds_hat_g)[0] + generator_loss(y_df_hat_g)[0]
                        + feature_loss(fmap_s_r, fmap_s_g) + feature_loss(fmap_f_r, fmap_f_g) + loss_mel)
        loss_gen_all.backward()
        optim_g.step()
        print(f'epoch {epoch} step {step}: disc {loss_disc_all.item():.10f} gen {loss_gen_all.item():.10f}')
    scheduler_g.step(); scheduler_d.step()
generator.eval(); generator.remove_weight_norm()
with torch.no_grad():
    print('eval output sum', generator(torch.randn(1, h.num_mels, 8)).sum().item())
print('param checksum', sum(p.double().sum().item() for p in itertools.chain(generator.parameters(), mpd.parameters(), msd.parameters())))
