"""Liquid networks from ncps trained for a few steps on a sine task: LTC cells on an AutoNCP wiring
(ODE unfolds; with explicit constraints, apply_weight_constraints() clips four parameters through
`.data` after each step), CfC in its three modes with mixed memory (an LSTM beside it) and a
backbone, a wired CfC on an NCP wiring, truncated sequences carrying the state.
Prints losses and checksums."""
import torch
from torch import nn
from ncps.torch import CfC, LTC
from ncps.wirings import AutoNCP, NCP


def checksum(module):
    return f'{sum(p.double().sum().item() for p in module.parameters()):.8f}'


torch.manual_seed(0)
time = torch.linspace(0, 6.28, 24)
x = torch.stack([torch.sin(time), torch.cos(time)], dim=-1).expand(4, -1, -1).contiguous()
y = torch.sin(2 * time).view(1, -1, 1).expand(4, -1, -1)

models = {
    'ltc': lambda: LTC(2, AutoNCP(12, 1), batch_first=True),
    'ltc-explicit': lambda: LTC(2, AutoNCP(12, 1, seed=1), batch_first=True, implicit_param_constraints=False, ode_unfolds=4),
    'cfc-default': lambda: CfC(2, 12, proj_size=1, mixed_memory=True, backbone_units=16, backbone_layers=2, backbone_dropout=0.1),
    'cfc-pure': lambda: CfC(2, 12, proj_size=1, mode='pure'),
    'cfc-no_gate': lambda: CfC(2, 12, proj_size=1, mode='no_gate', activation='silu'),
    'wired-cfc': lambda: CfC(2, NCP(inter_neurons=6, command_neurons=4, motor_neurons=1, sensory_fanout=2,
                                    inter_fanout=2, recurrent_command_synapses=2, motor_fanin=2, seed=3)),
}
for name, make in models.items():
    torch.manual_seed(1)
    model = make()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(5):
        state, loss = None, 0.0
        for part in (slice(0, 12), slice(12, 24)):  # truncated sequences: the state is carried, its graph cut
            out, state = model(x[:, part], hx=state)
            loss = loss + nn.functional.mse_loss(out, y[:, part])
            state = tuple(s.detach() for s in state) if isinstance(state, tuple) else state.detach()
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if isinstance(model, LTC):
            model.rnn_cell.apply_weight_constraints()
        print(name, step, f'{loss.item():.8f}')
    with torch.no_grad():
        print(name, 'checksum', checksum(model), f'{model(x)[0].sum().item():.8f}')
