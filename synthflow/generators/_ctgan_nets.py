"""CTGAN's networks, built from the CSPRNG stream: DP-CTGAN's and PATE-CTGAN's.

Split from :mod:`synthflow.generators.dpsgd` (which re-exports them): the generator of
residual blocks ending in a Gumbel-softmax per column, the discriminator as explicit
parameters with explicit dropout masks, and the two losses. Every weight and every
random draw comes from the :class:`~synthflow.generators.dpsgd.TorchStream`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from synthflow.generators.dpsgd import TorchStream


def _linear(torch: Any, stream: TorchStream, fan_in: int, fan_out: int) -> Any:
    """A linear layer initialised as torch's (uniform +-1/sqrt(fan_in)), from the stream.

    Built here rather than as ``nn.Linear``, whose constructor runs torch's initialiser.
    """
    nn = torch.nn
    bound = 1.0 / math.sqrt(fan_in)

    class Linear(nn.Module):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.weight = nn.Parameter(stream.uniform(fan_out, fan_in, low=-bound, high=bound))
            self.bias = nn.Parameter(stream.uniform(fan_out, low=-bound, high=bound))

        def forward(self, x: Any) -> Any:
            return nn.functional.linear(x, self.weight, self.bias)

    return Linear()


def _generator_network(torch: Any, stream: TorchStream, dim_z: int, hidden: int, out: int) -> Any:
    nn = torch.nn

    class Residual(nn.Module):  # type: ignore[name-defined]  # CTGAN's block: [ReLU(BN(Wx)), x]
        def __init__(self, i: int, o: int) -> None:
            super().__init__()
            self.fc = _linear(torch, stream, i, o)
            self.bn = nn.BatchNorm1d(o)

        def forward(self, x: Any) -> Any:
            return torch.cat([torch.relu(self.bn(self.fc(x))), x], dim=1)

    return nn.Sequential(
        Residual(dim_z, hidden),
        Residual(dim_z + hidden, hidden),
        _linear(torch, stream, dim_z + 2 * hidden, out),
    )


def _discriminator_params(torch: Any, stream: TorchStream, dim: int, hidden: int) -> dict[str, Any]:
    layers = [_linear(torch, stream, dim, hidden), _linear(torch, stream, hidden, hidden)]
    layers.append(_linear(torch, stream, hidden, 1))
    params = {}
    for i, layer in enumerate(layers):
        params[f"w{i}"] = layer.weight.detach().clone().requires_grad_(True)
        params[f"b{i}"] = layer.bias.detach().clone().requires_grad_(True)
    return params


def _discriminate(torch: Any, params: dict[str, Any], x: Any, masks: tuple[Any, Any]) -> Any:
    """CTGAN's discriminator with explicit dropout masks (kept 1/0, scaled by 2)."""
    f = torch.nn.functional
    h = f.leaky_relu(f.linear(x, params["w0"], params["b0"]), 0.2) * masks[0] * 2.0
    h = f.leaky_relu(f.linear(h, params["w1"], params["b1"]), 0.2) * masks[1] * 2.0
    return f.linear(h, params["w2"], params["b2"]).squeeze(-1)


def _real_loss(torch: Any, loss: str) -> Callable[[Any], Any]:
    f = torch.nn.functional
    return (lambda d: f.softplus(-d)) if loss == "cross_entropy" else (lambda d: -d)


def _fake_loss(torch: Any, loss: str) -> Callable[[Any], Any]:
    f = torch.nn.functional
    return f.softplus if loss == "cross_entropy" else (lambda d: d)


def _gumbel_softmax(torch: Any, logits: Any, sizes: tuple[int, ...], stream: TorchStream) -> Any:
    """CTGAN's output activation: a Gumbel-softmax (tau 0.2) per column, noise from the stream."""
    y = (logits + stream.gumbel(*logits.shape)) / 0.2
    parts, st = [], 0
    for k in sizes:
        parts.append(torch.softmax(y[:, st : st + k], dim=1))
        st += k
    return torch.cat(parts, dim=1)


def _fake_rows(
    torch: Any, gen_net: Any, stream: TorchStream, rows: int, *, dim_z: int, sizes: tuple[int, ...]
) -> Any:
    """``rows`` generated rows: latent normals, the generator, a Gumbel-softmax per column."""
    return _gumbel_softmax(torch, gen_net(stream.normal(rows, dim_z)), sizes, stream)
