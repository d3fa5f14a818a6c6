"""Greedy decoding of a padded batch, with the model calls Hugging Face ``generate`` makes and
less around them: the same prefill and per-step inputs (left-padded ids, the mask dropped when
nothing is padded, positions from the mask, the last position's logits only, a dynamic KV
cache), the same float32 argmax, the same stops (end of sequence, the token budget, a row's
first ``k`` code tokens settled) and the same padded output. What it leaves out: the logits
processors (none apply to greedy decoding), a stopping check that decodes every row of the
batch at every step (here only the row that grew, and only its new tokens), and the rows that
have stopped, which ``generate`` keeps computing until the last row stops. A row's numbers
do not depend on which other rows share the batch at a step (``tests/test_greedy.py`` checks
that every output equals ``generate``'s on padded batches that stop row by row;
``bench/generation.py`` sets both side by side on the book's prompts)."""

from __future__ import annotations

import inspect

from srlib.codetext import code_tokens_settled


def _eos_ids(model) -> set[int]:
    """The generation config's end-of-sequence ids (one id or a list; none: no such stop)."""
    eos = model.generation_config.eos_token_id
    if eos is None:
        return set()
    return {int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos])}


NEUTRAL = {
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "decoder_start_token_id",
    "use_cache",
    "output_attentions",
    "output_hidden_states",
    "transformers_version",
    "_from_model_config",
    "max_length",
    "do_sample",
    "temperature",
    "top_k",
    "top_p",
}  # settings of a generation config that change nothing in greedy decoding with a budget


def applies(model, enc) -> bool:
    """Whether ``greedy`` decodes ``enc`` as ``generate`` would: the model's generation config
    sets nothing that processes logits (a repetition penalty, banned words, a minimum length…)
    and the inputs are ids and a mask only; elsewhere the caller keeps ``generate``."""
    changed = set(model.generation_config.to_diff_dict()) - NEUTRAL
    return not changed and set(enc) <= {"input_ids", "attention_mask"}


def greedy(model, tokenizer, enc, max_new_tokens: int, settle: int = 0) -> list[list[int]]:
    """New token ids of each row of ``enc`` (a left-padded ``BatchEncoding``), padded with the
    tokenizer's pad id to the longest row as ``generate`` returns them. ``settle`` > 0 stops a
    row once its first ``settle`` code tokens are final (``code_tokens_settled``)."""
    import torch
    from transformers import DynamicCache

    ids, mask = enc["input_ids"], enc["attention_mask"]
    rows, pad, eos = ids.shape[0], tokenizer.pad_token_id, _eos_ids(model)
    forward_takes = inspect.signature(model.forward).parameters
    kwargs: dict = {"cache": DynamicCache(config=model.config), "use_cache": True}
    if "position_ids" in forward_takes:
        kwargs["position_ids"] = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)
    if "logits_to_keep" in forward_takes:
        kwargs["logits_to_keep"] = 1
    padded = not bool((mask == 1).all())
    out: list[list[int]] = [[] for _ in range(rows)]
    live = list(range(rows))  # rows still generating, in batch order
    step_ids = ids
    for _ in range(max_new_tokens):
        logits = model(
            input_ids=step_ids, attention_mask=mask if padded else None, return_dict=True, **kwargs
        ).logits
        nxt = logits[:, -1].to(dtype=torch.float32).argmax(-1).tolist()
        keep = []
        for j, (row, token) in enumerate(zip(live, nxt, strict=True)):
            out[row].append(token)
            text = tokenizer.decode(out[row], skip_special_tokens=True) if settle else ""
            stop = token in eos or (settle and code_tokens_settled(text, settle))
            if not stop:
                keep.append(j)
        if not keep:
            break
        if len(keep) < len(live):
            index = torch.tensor(keep, device=ids.device)
            kwargs["cache"].reorder_cache(index)
            mask = mask[index]
            live = [live[j] for j in keep]
            nxt = [nxt[j] for j in keep]
            if "position_ids" in kwargs:
                kwargs["position_ids"] = kwargs["position_ids"][index]
        step_ids = torch.tensor(nxt, device=ids.device)[:, None]
        mask = torch.cat([mask, mask.new_ones((mask.shape[0], 1))], dim=-1)
        if "position_ids" in kwargs:
            kwargs["position_ids"] = kwargs["position_ids"][:, -1:] + 1
    longest = max(len(o) for o in out)
    return [o + [pad] * (longest - len(o)) for o in out]
