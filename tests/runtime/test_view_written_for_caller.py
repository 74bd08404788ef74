"""AD104 (a piece of unbind/chunk/split written in place) inside a function that writes its argument
in place for its caller and returns nothing: `def scale_(piece, s): piece.mul_(s)`. The out-of-place
help, `piece = piece.mul(s)`, rebinds the function's local name only: the program then runs, and
the caller's tensor keeps its old values (held-out set 14, pytorch/vision#3025: make_grid's
`norm_ip(img, ...)`, help wrong on the first run). No rebinding is offered there; the report says
why. This program is another one: feature maps rescaled to [0, 1] channel by channel for a plot."""

from __future__ import annotations

import torch

from helpers import run_plain, run_program

STANDARDISED_FOR_PLOT = """
    import torch

    torch.manual_seed(0)
    conv = torch.nn.Conv2d(1, 3, 3)
    image = torch.randn(1, 1, 6, 6)


    def standardise_(channel):
        low, high = channel.min().item(), channel.max().item()
        channel.sub_(low)  # WRITE
        channel.div_(high - low + 1e-5)


    maps = conv(image)[0].clone()
    for channel in maps:
        standardise_(channel)
    result = maps
"""

# What the program means: the maps are plotted, not trained, so they are taken without a graph.
MEANT = STANDARDISED_FOR_PLOT.replace("maps = conv(image)[0].clone()", "maps = conv(image)[0].detach().clone()")

# A piece written in place in the function that owns it: the rebinding stays the first help.
OWN_PIECE = """
    import torch

    torch.manual_seed(0)
    w = torch.randn(4, requires_grad=True)
    first, second = (w * 2).chunk(2)
    first.mul_(3)  # WRITE
    (first.sum() + second.sum()).backward()
"""


def test_no_rebinding_is_offered_for_an_argument_written_for_the_caller(tmp_path):
    outcome = run_program(tmp_path, STANDARDISED_FOR_PLOT)
    assert isinstance(outcome.error, RuntimeError)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD104"]
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert not any(s.replacement for s in diagnosis.help), [s.replacement for s in diagnosis.help]
    assert any(note.startswith("channel is an argument of standardise_(), which writes it in place for its caller")
               for note in diagnosis.notes), diagnosis.notes
    assert diagnosis.help[0].message.startswith("if the values are only read (plotted, logged, copied), give "
                                                "standardise_() a tensor without a graph: .detach()")


def test_the_rebinding_would_have_left_the_maps_unstandardised(tmp_path):
    meant = run_plain(tmp_path, MEANT, "meant.py")["result"]
    rebound = STANDARDISED_FOR_PLOT.replace("channel.sub_(low)  # WRITE", "channel = channel.sub(low)")
    assert not torch.allclose(run_plain(tmp_path, rebound, "rebound.py")["result"].detach(), meant)
    assert float(meant[0].min()) == 0.0  # the meant program did rescale


def test_a_piece_written_where_it_is_owned_keeps_the_out_of_place_help(tmp_path):
    outcome = run_program(tmp_path, OWN_PIECE)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD104"]
    assert diagnosis.help[0].replacement == "first = first.mul(3)"
