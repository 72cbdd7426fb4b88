"""What lesson 06's test modules share: a check that samples look like measured durations."""

from __future__ import annotations

import math


def all_positive(samples: list[float]) -> bool:
    return all(isinstance(x, float) and x > 0 and math.isfinite(x) for x in samples)
