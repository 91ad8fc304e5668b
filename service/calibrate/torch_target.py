"""What the PyTorch backend's measurements run on: the torch module and one of its devices.

Kept apart from ``backend_torch`` so that the matrix products (``backend_torch_mm``) read a
device without importing the backend that calls them.
"""

from __future__ import annotations

from typing import Any, Protocol

from service.calibrate.model import DeviceKind


class TorchTarget(Protocol):
    """A torch device to measure on (``backend_torch.TorchBackend`` is one).

    Attributes:
        torch: The imported ``torch`` module (imported only when a calibration runs).
        device: The ``torch.device`` measured.
        kind: cpu or cuda.
    """

    torch: Any
    device: Any
    kind: DeviceKind
