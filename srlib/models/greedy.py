"""Greedy decoding of a padded batch, with the model calls Hugging Face ``generate`` makes and
less around them: the same prefill and per-step inputs (left-padded ids, the mask dropped when
nothing is padded, positions from the mask, the last position's logits only, a dynamic KV
cache, here one that grows in place: ``srlib.models.kvcache``), the same float32 argmax, the
same stops (end of sequence, the token budget, a row's first ``k`` code tokens settled) and
the same padded output. What it leaves out: the logits processors (none apply to greedy
decoding), a stopping check that decodes every row of the batch at every step (here only the
rows still generating), and, on a CPU, the rows that have stopped, which ``generate`` keeps
computing until the last row stops. On a CPU a row's numbers do not depend on which other
rows share the batch (``tests/test_greedy.py`` checks that every output equals
``generate``'s on padded batches that stop row by row, on the machine it runs on); elsewhere
(a GPU's kernels pick their algorithm by batch size) stopped rows stay in the batch, fed the
pad token, as ``generate`` keeps them. ``bench/generation.py`` sets the two side by side on
the book's prompts."""

from __future__ import annotations

import inspect

from srlib.codetext import code_tokens_settled

NEUTRAL = {
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "decoder_start_token_id",
    "transformers_version",
    "_from_model_config",
    "max_length",
    "do_sample",
    "temperature",
    "top_k",
    "top_p",
}  # settings of a generation config that change nothing here: ids, and the sampling ones
# (``HFModel`` passes ``do_sample=False`` with ``max_new_tokens``, which overrides max_length)
DEFAULTS = {"use_cache": True, "output_attentions": False, "output_hidden_states": False}
"""Settings a config may state only at these values (another changes the model's calls)."""


def _eos_ids(model) -> set[int]:
    """The generation config's end-of-sequence ids (one id or a list; none: no such stop)."""
    eos = model.generation_config.eos_token_id
    if eos is None:
        return set()
    return {int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos])}


def applies(model, enc, settle: int = 0) -> bool:
    """Whether ``greedy`` decodes ``enc`` as ``generate`` would; elsewhere the caller keeps
    ``generate``. It must be a decoder-only model that prepares its inputs, updates them and
    caches as ``generate``'s defaults do (no model-specific input preparation, no remote
    code, a dynamic cache), whose generation config processes no logits (a repetition
    penalty, banned words, a minimum length…), with ids and a mask as its only inputs, and,
    for a settled stop, an end-of-sequence id (without one ``generate`` keeps appending
    tokens to a row that has stopped)."""
    from transformers.generation.utils import GenerationMixin

    cls, config = type(model), model.generation_config
    diff = config.to_diff_dict()
    standard = (
        not model.config.is_encoder_decoder
        and cls.prepare_inputs_for_generation is GenerationMixin.prepare_inputs_for_generation
        and cls._update_model_kwargs_for_generation
        is GenerationMixin._update_model_kwargs_for_generation
        and model._supports_default_dynamic_cache()
        and not model.is_remote_code()
    )
    plain = not set(diff) - NEUTRAL - set(DEFAULTS) and all(
        diff.get(k, v) in (v, None) for k, v in DEFAULTS.items()
    )
    inputs = set(enc) <= {"input_ids", "attention_mask"}
    return standard and plain and inputs and (not settle or bool(_eos_ids(model)))


def greedy(
    model, tokenizer, enc, max_new_tokens: int, settle: int = 0, drop: bool | None = None
) -> list[list[int]]:
    """New token ids of each row of ``enc`` (a left-padded ``BatchEncoding``), padded with the
    tokenizer's pad id to the longest row as ``generate`` returns them. ``settle`` > 0 stops a
    row once its first ``settle`` code tokens are final (``code_tokens_settled``). ``drop``:
    whether stopped rows leave the batch (None: on a CPU only)."""
    import torch
    from transformers import DynamicCache

    from srlib.models.kvcache import roomy

    ids, mask = enc["input_ids"], enc["attention_mask"]
    rows, pad, eos = ids.shape[0], tokenizer.pad_token_id, _eos_ids(model)
    drop = ids.device.type == "cpu" if drop is None else drop  # see the module docstring
    forward_takes = inspect.signature(model.forward).parameters
    cache = roomy(DynamicCache(config=model.config), max_new_tokens)
    kwargs: dict = {"cache": cache, "use_cache": True}
    if "position_ids" in forward_takes:
        kwargs["position_ids"] = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)
    if "logits_to_keep" in forward_takes:
        kwargs["logits_to_keep"] = 1
    padded = not bool((mask == 1).all())
    out: list[list[int]] = [[] for _ in range(rows)]
    batch = list(range(rows))  # the rows in the batch, in batch order
    stopped: set[int] = set()

    def step(step_ids, mask):
        """The batch's next-token logits (the last position's)."""
        return model(
            input_ids=step_ids, attention_mask=mask if padded else None, return_dict=True, **kwargs
        ).logits[:, -1]

    logits = step(ids, mask)  # the prefill, outside the decode steps' settings (as generate)
    with model._optimize_model_for_decode():
        for t in range(max_new_tokens):
            nxt = logits.to(dtype=torch.float32).argmax(-1).tolist()
            for j, row in enumerate(batch):
                if row in stopped:
                    nxt[j] = pad
                    continue
                out[row].append(nxt[j])
                text = tokenizer.decode(out[row], skip_special_tokens=True) if settle else ""
                if nxt[j] in eos or (settle and code_tokens_settled(text, settle)):
                    stopped.add(row)
            if len(stopped) == rows or t == max_new_tokens - 1:
                break
            if drop and stopped & set(batch):
                keep = [j for j, row in enumerate(batch) if row not in stopped]
                index = torch.tensor(keep, device=ids.device)
                kwargs["cache"].reorder_cache(index)
                mask = mask[index]
                batch, nxt = [batch[j] for j in keep], [nxt[j] for j in keep]
                if "position_ids" in kwargs:
                    kwargs["position_ids"] = kwargs["position_ids"][index]
            mask = torch.cat([mask, mask.new_ones((mask.shape[0], 1))], dim=-1)
            if "position_ids" in kwargs:
                kwargs["position_ids"] = kwargs["position_ids"][:, -1:] + 1
            logits = step(torch.tensor(nxt, device=ids.device)[:, None], mask)
    longest = max(len(o) for o in out)
    return [o + [pad] * (longest - len(o)) for o in out]
