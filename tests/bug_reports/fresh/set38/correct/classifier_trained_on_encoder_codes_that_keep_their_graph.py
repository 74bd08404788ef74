"""A classifier is trained on features produced once by a pre-trained autoencoder: the whole
training set is encoded before the loop (`X_train_encoded, loss = autoencoder(X_train_tensor)`),
and the loop slices mini-batches out of that tensor. The encoding ran with grad mode on, so every
slice shares the encoder's graph; the first `loss.backward()` frees it and the second batch
raises "Trying to backward through the graph a second time". The post's answer: encode under
`torch.no_grad()` ("This line is crucial"), so the codes are plain inputs to the classifier.
Source: https://devgem.io/posts/understanding-pytorch-s-runtimeerror-backward-through-the-graph-a-second-time
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

n_samples, n_in, n_code, n_classes = 48, 10, 4, 3
batch_size, max_iters = 16, 3


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_in, 8), nn.ReLU(), nn.Linear(8, n_code))
        self.decoder = nn.Sequential(nn.Linear(n_code, 8), nn.ReLU(), nn.Linear(8, n_in))

    def forward(self, x):
        code = self.encoder(x)
        return code, F.mse_loss(self.decoder(code), x)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_code, 16), nn.ReLU(), nn.Linear(16, n_classes))

    def forward(self, x, y):
        out = self.net(x)
        loss = F.cross_entropy(out, y)
        accuracy = (out.argmax(1) == y).float().mean()
        return out, loss, accuracy


X_train_tensor = torch.randn(n_samples, n_in)
y_train_tensor = torch.randint(0, n_classes, (n_samples,))

autoencoder = AutoEncoder()
ae_optimizer = torch.optim.Adam(autoencoder.parameters(), lr=1e-2)
for _ in range(10):
    ae_optimizer.zero_grad()
    _, rec = autoencoder(X_train_tensor)
    rec.backward()
    ae_optimizer.step()

autoencoder.eval()
with torch.no_grad():
    X_train_encoded, _ = autoencoder(X_train_tensor)

model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for iter in range(max_iters):
    start_ix = 0
    while start_ix < len(X_train_encoded):
        end_ix = min(start_ix + batch_size, len(X_train_encoded))
        out, loss, accuracy = model(X_train_encoded[start_ix:end_ix], y_train_tensor[start_ix:end_ix])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
        start_ix = end_ix

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
