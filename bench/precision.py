"""Does training in bfloat16 move the science? The profile's main run trained in float32 and in
bfloat16, side by side: the leak's size (leaked and held-out perplexity gain over the base
model, the memorisation p-value) and the two families' contrasts of seed 0 (difference, interval,
verdict), with whether each precision's estimate lies inside the other's interval.

Usage: ``.venv/bin/python bench/precision.py [--profile cpu] [--cache-dir DIR]``. With the
book's cache (``.srlib-cache/testbed``, the default) the bfloat16 side is read from it and
only the float32 side trains (the ``cpu`` profile: base, reference, main run and null control
and their scores, about half an hour on one core).
"""

from __future__ import annotations

import argparse

import pandas as pd

from srlib.stats.verdicts import direction
from srlib.testbed.build import shared
from srlib.testbed.report import claim_table, memorisation_table

DTYPES = ("float32", "bfloat16")


def side(profile_name: str, dtype: str, cache_dir: str) -> tuple[pd.Series, pd.DataFrame]:
    """The main run's last-epoch memorisation row and seed 0's two families in ``dtype``."""
    tb = shared(profile_name, {"train_dtype": dtype}, None, cache_dir, progress=True)
    mem = memorisation_table(tb)
    last = mem[(mem.run == tb.main) & (mem.epoch == tb.config.epochs)].iloc[0]
    claims = claim_table({tb.config.seed: tb})
    families = claims[claims.role.isin(["discrimination", "transport"])].set_index("contrast")
    return last, families[["difference", "low", "high", "verdict"]]


def compare(profile_name: str, caches: dict[str, str]) -> None:
    """Print the two precisions side by side, each built in (or read from) its cache."""
    sides = {d: side(profile_name, d, caches[d]) for d in DTYPES}
    leak = pd.DataFrame({d: mem for d, (mem, _) in sides.items()}).drop(["run", "epoch"])
    print(f"profile {profile_name!r}, main run after its last epoch:")
    print(leak.to_string())
    a, b = (sides[d][1] for d in DTYPES)
    for side_ in (a, b):
        side_["verdict"] = [direction(lo, hi) for lo, hi in zip(side_.low, side_.high, strict=True)]
    table = pd.concat({d: sides[d][1] for d in DTYPES}, axis=1)
    inside = lambda x, y: x.difference.between(y.low, y.high)  # noqa: E731
    table["each inside the other's interval"] = inside(a, b) & inside(b, a)
    table["same verdict"] = a.verdict == b.verdict
    print("\ndiscrimination and transport contrasts (MCC difference, 95% interval), seed 0:")
    print(table.round(3).to_string())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--cache-dir", default=".srlib-cache/testbed")
    parser.add_argument("--float32-cache-dir", help="the float32 side's cache (default: the same)")
    parser.add_argument("--only", choices=DTYPES, help="build one side only (to run it apart)")
    args = parser.parse_args()
    caches = {"bfloat16": args.cache_dir, "float32": args.float32_cache_dir or args.cache_dir}
    if args.only:
        side(args.profile, args.only, caches[args.only])
    else:
        compare(args.profile, caches)
