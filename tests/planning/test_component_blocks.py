"""How a component adds its noise: vector noise of d coordinates on a longer vector of records in blocks of d
consecutive values, each block with its own draw; a value and a vector of the noise's own shape as they are."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from privnoise.planning import Component


class _Recorder:
    """A stand-in noise of shape ``shape`` whose addition adds 1000·(block index) + coordinate to a batch of
    blocks, 0.5 to anything else, and records what it was given."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape
        self.seen: list[np.ndarray] = []

    def default_grid_exponent(self) -> int:
        return -10

    def add_one(self, value: float, generator: Any, grid_exponent: int | None = None) -> float | None:
        return None

    def add_to(self, values: Any, *, rng: Any, grid_exponent: int | None = None) -> Any:
        v = np.asarray(values, dtype=float)
        self.seen.append(v.copy())
        if v.ndim == 2:
            return v + 1000.0 * np.arange(v.shape[0])[:, None] + np.arange(v.shape[1])
        return v + 0.5


def _component(shape: tuple[int, ...]) -> tuple[Component[Any], _Recorder]:
    noise = _Recorder(shape)
    return Component(name="values", noise=noise, sensitivity=1.0), noise  # type: ignore[arg-type]


@pytest.mark.parametrize("cells", [1, 2, 5, 6])
def test_vector_noise_of_two_coordinates_draws_once_for_each_pair_of_cells(cells: int) -> None:
    component, noise = _component((2,))
    values = np.arange(cells, dtype=float) + 0.5
    out = component.add(values, np.random.default_rng(0))
    if cells == 2:  # a vector of the noise's own shape: one draw, added as it is
        assert noise.seen[0].shape == (2,) and out.tolist() == (values + 0.5).tolist()
        return
    assert noise.seen[0].shape == ((cells + 1) // 2, 2)
    offsets = [1000.0 * (i // 2) + (i % 2) for i in range(cells)]
    assert out.tolist() == (values + offsets).tolist()


def test_records_are_cut_into_blocks_of_the_noise_dimension_the_last_one_padded() -> None:
    component, noise = _component((2,))
    out = component.add(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.random.default_rng(0))
    np.testing.assert_array_equal(out, [1.0, 3.0, 1003.0, 1005.0, 2005.0])
    np.testing.assert_array_equal(noise.seen[0], [[1.0, 2.0], [3.0, 4.0], [5.0, 0.0]])
    even, _ = _component((3,))
    np.testing.assert_array_equal(even.add([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], np.random.default_rng(0)),
                                  [1, 3, 5, 1004, 1006, 1008])


def test_a_value_or_a_vector_of_the_noises_own_shape_is_added_as_it_is() -> None:
    scalar, seen = _component(())
    assert scalar.add(2.0, np.random.default_rng(0)).tolist() == 2.5 and seen.seen[0].shape == ()
    np.testing.assert_array_equal(scalar.add([1.0, 2.0], np.random.default_rng(0)), [1.5, 2.5])
    vector, noise = _component((4,))
    np.testing.assert_array_equal(vector.add([1.0, 2.0, 3.0, 4.0], np.random.default_rng(0)), [1.5, 2.5, 3.5, 4.5])
    assert noise.seen[0].shape == (4,)
