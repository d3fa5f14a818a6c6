"""A researcher's own detectors, as the book's example chapter registers them: each is one
function whose argument names say its kind (see ``srlib.detection.plugins``)."""

import math


def sure_tokens(token_scores, text):
    """The share of a text's tokens the model gives more than half its probability (so each
    is its top choice): a rank-based cousin of Min-K%, higher where the model knows more of
    the text by heart."""
    logprobs = token_scores.logprobs
    if not len(logprobs):
        return math.nan  # nothing to score: undecided, and counted as such
    return sum(lp > math.log(0.5) for lp in logprobs) / len(logprobs)
