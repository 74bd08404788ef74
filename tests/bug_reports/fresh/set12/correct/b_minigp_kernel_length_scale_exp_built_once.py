"""Mini-GP stgp demo: the kernel's length scale was one exp node built at construction from an unregistered Parameter.
Source: https://github.com/IceLab-X/Mini-GP/issues/13 (the log length scale becomes an nn.Parameter; exp is taken at each evaluation)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
JITTER = 1e-1


def kronecker(A, B):
    AB = torch.einsum("ab,cd->acbd", A, B)
    return AB.view(A.size(0) * B.size(0), A.size(1) * B.size(1))


class SE_kernel(nn.Module):
    def __init__(self, length_scale=1.0):
        super().__init__()
        self.log_length_scale = nn.Parameter(torch.log(torch.tensor(length_scale)))

    def forward(self, X, X2):
        length_scale = torch.exp(self.log_length_scale)
        X = X / length_scale.expand(X.size(0), X.size(1))
        X2 = X2 / length_scale.expand(X2.size(0), X2.size(1))
        X_norm2 = torch.sum(X * X, dim=1).view(-1, 1)
        X2_norm2 = torch.sum(X2 * X2, dim=1).view(-1, 1)
        K = -2.0 * X @ X2.t() + X_norm2.expand(X.size(0), X2.size(0)) + X2_norm2.t().expand(X.size(0), X2.size(0))
        return torch.exp(-K)


class STGP(nn.Module):
    def __init__(self, latlong_length_scale=2.0, elevation_length_scale=1.0, time_length_scale=0.5, noise_variance=0.1):
        super().__init__()
        self.log_noise_variance = nn.Parameter(torch.log(torch.tensor(noise_variance)))
        self.latlong_kernel = SE_kernel(latlong_length_scale)
        self.elevation_kernel = SE_kernel(elevation_length_scale)
        self.temporal_kernel = SE_kernel(time_length_scale)

    def negative_log_likelihood(self, space_coordinates, time_coordinates, stData):
        latlong_K = self.latlong_kernel(space_coordinates[:, 0:2], space_coordinates[:, 0:2])
        elevation_K = self.elevation_kernel(space_coordinates[:, 2:3], space_coordinates[:, 2:3])
        spatial_K = latlong_K * elevation_K + torch.eye(latlong_K.size(0)) * JITTER
        temporal_K = self.temporal_kernel(time_coordinates, time_coordinates) + torch.eye(time_coordinates.size(0)) * JITTER
        eigen_value_s, eigen_vector_s = torch.linalg.eigh(spatial_K, UPLO="L")
        eigen_value_t, eigen_vector_t = torch.linalg.eigh(temporal_K, UPLO="L")
        eigen_vector_st = kronecker(eigen_vector_t, eigen_vector_s)
        eigen_value_st = kronecker(eigen_value_t.view(-1, 1), eigen_value_s.view(-1, 1)).view(-1)
        inverse = 1.0 / (eigen_value_st + torch.exp(self.log_noise_variance))
        sigma_inverse = eigen_vector_st @ inverse.diag_embed() @ eigen_vector_st.transpose(-2, -1)
        alpha = sigma_inverse @ stData.transpose(-2, -1).reshape(-1, 1)
        nll = 0.5 * (eigen_value_st + torch.exp(self.log_noise_variance)).log().sum()
        nll = nll + 0.5 * (stData.transpose(-2, -1).reshape(1, -1) @ alpha).sum()
        return nll


n_stations, n_times = 6, 5
space = torch.cat([torch.rand(n_stations, 2) * 4, torch.rand(n_stations, 1)], dim=1)
times = torch.linspace(0, 1, n_times).view(-1, 1)
pm25 = torch.sin(space[:, :1] + 3 * times.t()) + 0.1 * torch.randn(n_stations, n_times)

model = STGP()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
losses = []
for epoch in range(5):
    optimizer.zero_grad()
    loss = model.negative_log_likelihood(space, times, pm25)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
