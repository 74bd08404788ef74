"""Next-location (POI) recommendation with a Flashback RNN: check-in sequences of a batch of users
are fed window by window, the RNN's hidden state `h` is carried from one window to the next (reset
only for users that just joined the batch), the RNN outputs are averaged with temporal and spatial
weights, and the user embedding is added. `h` is handed to the next window as it is, still tied to
the previous window's graph; `loss.backward(retain_graph=True)` keeps that graph, and
`optimizer.step()` then updates the RNN weights it saved. The second window's backward() goes on
through the first window's graph and fails: "one of the variables needed for gradient computation
has been modified by an inplace operation". The change truncated BPTT needs: carry the hidden
state detached between windows (`h = h.detach()`), so each backward() stays in its own window.
Source: https://github.com/eXascaleInfolab/Flashback_code/issues/2
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Flashback(nn.Module):
    def __init__(self, input_size, user_count, hidden_size, f_t, f_s):
        super().__init__()
        self.hidden_size = hidden_size
        self.f_t = f_t
        self.f_s = f_s
        self.encoder = nn.Embedding(input_size, hidden_size)
        self.user_encoder = nn.Embedding(user_count, hidden_size)
        self.rnn = nn.RNN(hidden_size, hidden_size)
        self.fc = nn.Linear(2 * hidden_size, input_size)

    def forward(self, x, t, s, h, active_user):
        seq_len, user_len = x.size()
        x_emb = self.encoder(x)
        out, h = self.rnn(x_emb, h)
        out_w = torch.zeros(seq_len, user_len, self.hidden_size)
        for i in range(seq_len):
            sum_w = torch.zeros(user_len, 1)
            for j in range(i + 1):
                w_j = (self.f_t(t[i] - t[j]) * self.f_s(torch.norm(s[i] - s[j], dim=-1))).unsqueeze(1) + 1e-10
                sum_w += w_j
                out_w[i] += w_j * out[j]
            out_w[i] /= sum_w
        p_u = self.user_encoder(active_user).view(user_len, self.hidden_size)
        out_pu = torch.cat([out_w, p_u.unsqueeze(0).expand(seq_len, -1, -1)], dim=2)
        return self.fc(out_pu), h


class FixNoiseStrategy:
    def __init__(self, hidden_size):
        self.h0 = torch.randn(hidden_size) / hidden_size

    def on_init(self, user_len):
        return torch.stack([self.h0] * user_len, dim=0).view(1, user_len, -1)

    def on_reset(self, user):
        return self.h0


seq_len, user_len, n_locations, n_users = 5, 4, 20, 6
model = Flashback(n_locations, n_users, 8, f_t=lambda dt: torch.exp(-0.1 * dt),
                  f_s=lambda ds: torch.exp(-0.5 * ds))
h0_strategy = FixNoiseStrategy(8)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
cross_entropy = nn.CrossEntropyLoss()

windows = []
for k in range(4):
    x = torch.randint(0, n_locations, (seq_len, user_len))
    t = torch.rand(seq_len, user_len).cumsum(0) + k * seq_len
    s = torch.rand(seq_len, user_len, 2)
    y = torch.randint(0, n_locations, (seq_len, user_len))
    reset_h = [k == 0] * user_len
    windows.append((x, t, s, y, reset_h, torch.arange(user_len)))

losses = []
h = h0_strategy.on_init(user_len)
for x, t, s, y, reset_h, active_users in windows:
    for j, reset in enumerate(reset_h):
        if reset:
            h[0, j] = h0_strategy.on_reset(active_users[j])
    optimizer.zero_grad()
    out, h = model(x, t, s, h, active_users)
    loss = cross_entropy(out.view(-1, n_locations), y.view(-1))
    loss.backward(retain_graph=True)
    losses.append(loss.item())
    optimizer.step()

result = {"losses": torch.tensor(losses), "fc": model.fc.weight.detach().clone(),
          "rnn": model.rnn.weight_hh_l0.detach().clone()}
