"""A key-value cache for greedy decoding that grows in place: the same numbers as Hugging
Face's ``DynamicCache``, without copying the whole cache at every step
(``bench/generation.py`` measures what that saves)."""

from __future__ import annotations

from transformers.cache_utils import DynamicLayer


class RoomyLayer(DynamicLayer):
    """A ``DynamicLayer`` that keeps its keys and values in a buffer with ``room`` for more
    positions than the prefill, so a decode step writes one position in place instead of
    copying the whole cache (``torch.cat``). It
    hands attention a view of the filled positions: the same values and shape as the plain
    layer's, so the same numbers (``tests/test_greedy.py`` checks the continuations against
    ``generate``'s). Outgrown, it moves to a buffer with as much room again."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room, self.filled = max(1, room), 0
        self.buffers: tuple | None = None

    def update(self, key_states, value_states, *args, **kwargs):
        """Write the new positions after the filled ones; the filled keys and values."""
        import torch

        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        new = key_states.shape[-2]
        if self.buffers is None or self.filled + new > self.buffers[0].shape[-2]:
            size = self.filled + new + self.room
            grown = tuple(
                torch.empty((*s.shape[:-2], size, s.shape[-1]), dtype=s.dtype, device=s.device)
                for s in (key_states, value_states)
            )
            if self.buffers is not None:
                for old, buffer in zip(self.buffers, grown, strict=True):
                    buffer[..., : self.filled, :] = old[..., : self.filled, :]
            self.buffers = grown
        for buffer, states in zip(self.buffers, (key_states, value_states), strict=True):
            buffer[..., self.filled : self.filled + new, :] = states
        self.filled += new
        self._view()
        return self.keys, self.values

    def _view(self) -> None:
        self.keys, self.values = (b[..., : self.filled, :] for b in self.buffers)

    def _rows(self, pick) -> None:
        """The buffers' rows as ``pick`` (a function of one buffer) leaves them."""
        if self.buffers is not None:
            self.buffers = tuple(pick(b) for b in self.buffers)
            self._view()

    def reorder_cache(self, beam_idx) -> None:
        """Keep the rows ``beam_idx`` (the rows still generating), in that order."""
        self._rows(lambda b: b.index_select(0, beam_idx.to(b.device)))

    def batch_select_indices(self, indices) -> None:
        """Keep the rows ``indices``."""
        self._rows(lambda b: b[indices, ...])

    def batch_repeat_interleave(self, repeats: int) -> None:
        """Repeat each row ``repeats`` times."""
        self._rows(lambda b: b.repeat_interleave(repeats, dim=0))

    def crop(self, tokens_to_remove: int) -> None:
        """Forget the last ``-tokens_to_remove`` positions (``DynamicLayer.crop``'s sign)."""
        if tokens_to_remove > 0:
            raise ValueError(f"crop takes a negative count of positions, not {tokens_to_remove}")
        if self.buffers is not None and tokens_to_remove:
            self.filled = max(0, self.filled + tokens_to_remove)
            self._view()

    def reset(self) -> None:
        """Empty, as new."""
        self.buffers, self.filled = None, 0
        super().reset()

    def offload(self) -> None:
        """Not kept off the device: decoding here holds its cache where it computes."""
        raise NotImplementedError("RoomyLayer does not offload its cache")

    prefetch = offload


def roomy(cache, room: int):
    """``cache`` with each plain ``DynamicLayer`` (a sliding-window or other layer is kept)
    replaced by a ``RoomyLayer`` with ``room`` positions to spare."""
    cache.layers = [
        RoomyLayer(room) if type(layer) is DynamicLayer else layer for layer in cache.layers
    ]
    if cache.layer_class_to_replicate is DynamicLayer:
        cache.layer_class_to_replicate = lambda: RoomyLayer(room)
    return cache
