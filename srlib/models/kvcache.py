"""A key-value cache for greedy decoding on a CPU that grows in place: the same numbers as
Hugging Face's ``DynamicCache``, without copying the whole cache at every step."""

from __future__ import annotations

from transformers.cache_utils import DynamicLayer


class RoomyLayer(DynamicLayer):
    """A ``DynamicLayer`` that keeps its keys and values in a buffer with ``room`` for more
    positions than the prefill, so a decode step writes one position in place instead of
    copying the whole cache (``torch.cat``, a fifth of decoding a small model on a CPU). It
    hands attention a view of the filled positions: the same values and shape as the plain
    layer's, so the same numbers (``tests/test_greedy.py`` checks the continuations against
    ``generate``'s). Outgrown, it moves to a buffer with as much room again.

    A drop-in layer: a method it inherits (``crop``, ``reset``, ``batch_select_indices``,
    ``batch_repeat_interleave``) replaces ``keys`` and ``values`` with other tensors, and the
    next ``update`` or ``reorder_cache`` adopts those as the filled positions (``_adopt``), so
    no position such a method dropped comes back."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room, self.filled = max(1, room), 0
        self.buffers: tuple | None = None
        self._handed: tuple | None = None  # the views ``update`` last handed out

    def update(self, key_states, value_states, *args, **kwargs):
        """Write the new positions after the filled ones; the filled keys and values."""
        import torch

        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        self._adopt()
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
        self._handed = (self.keys, self.values)

    def _adopt(self) -> None:
        """Where another method replaced ``keys`` or ``values`` since the last ``update``, take
        them as the filled positions (their buffer has no room: the next write grows it)."""
        if self._handed is not None and all(
            a is b for a, b in zip(self._handed, (self.keys, self.values), strict=True)
        ):
            return
        empty = self.keys is None or self.keys.numel() == 0
        self.buffers = None if empty else (self.keys, self.values)
        self.filled = 0 if empty else self.keys.shape[-2]
        self._handed = None

    def reorder_cache(self, beam_idx) -> None:
        """Keep the rows ``beam_idx`` (the rows still generating), in that order."""
        self._adopt()
        if self.buffers is not None:
            self.buffers = tuple(b.index_select(0, beam_idx.to(b.device)) for b in self.buffers)
            self._view()


def roomy(cache, room: int):
    """``cache`` with each plain ``DynamicLayer`` (a sliding-window or other layer is kept)
    replaced by a ``RoomyLayer`` with ``room`` positions to spare."""
    cache.layers = [
        RoomyLayer(room) if type(layer) is DynamicLayer else layer for layer in cache.layers
    ]
    if cache.layer_class_to_replicate is DynamicLayer:
        cache.layer_class_to_replicate = lambda: RoomyLayer(room)
    return cache
