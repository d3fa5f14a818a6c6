"""The claim's words (``detection.verdicts``): each family under its question with its
contrasts named, the seeds' own differences, the rates and the power; which pools confirm; the
paper's gain as the paper states it; the answer box short enough for a first screen."""

import pandas as pd

from srlib.detection.verdicts import claim_headline, paper_sentences


def _claims(rows: list[tuple[str, str, float, float, float]], role="discrimination"):
    """A contrast table (as ``contrast_table`` makes it) from (contrast, part, d, low, high)."""
    return pd.DataFrame(
        [
            {"contrast": c, "role": role, "part": p, "a": c.split(" − ")[0],
             "b": c.split(" − ")[1].split(" (")[0], "metric": "mcc", "difference": d,
             "low": lo, "high": hi}
            for c, p, d, lo, hi in rows
        ]
    )  # fmt: skip


def test_the_claim_headline_names_each_contrast_under_its_question():
    rows = [
        ("SR gray − PPL", "seed 0", 0.2, 0.1, 0.3),
        ("SR gray − PPL", "seed 1", 0.1, -0.05, 0.25),
        ("SR gray − PPL", "pooled", 0.15, 0.05, 0.25),
        ("SR gray − Zlib", "seed 0", -0.2, -0.3, -0.1),
        ("SR gray − Zlib", "seed 1", -0.1, -0.2, -0.01),
        ("SR gray − Zlib", "pooled", -0.15, -0.25, -0.05),
        ("SR black − NGO", "seed 0", 0.0, -0.1, 0.1),
        ("SR black − NGO", "seed 1", 0.05, -0.1, 0.2),
        ("SR black − NGO", "pooled", 0.02, -0.05, 0.1),
    ]
    claims = _claims(rows).assign(seed_sd=0.07)
    lead, ppl, zlib, ngo, record = claim_headline(claims)
    assert lead.startswith("Discrimination — which score ranks leaked problems above unseen")
    assert "(pooled over 2 seeds, 3 contrasts, Holm, MCC)" in lead
    assert "SR gray is better than PPL (+0.150 [+0.050, +0.250]); is worse than Zlib" in lead
    assert "SR black shows no evidence of a difference from NGO (+0.020 [-0.050, +0.100])" in lead
    assert ppl.startswith("SR gray − PPL: +0.150 [+0.050, +0.250] MCC, better")
    assert "the seeds' own differences +0.200, +0.100 (SD 0.070)" in ppl
    assert record.startswith("Exploratory: the families were chosen after results on seeds 0, 1")
    transport = claim_headline(claims.assign(role="transport"))
    assert transport[0].startswith("Transport — whose decisions hold when the threshold")
    assert claim_headline(claims, "transport") == ["No transport contrast was computed."]


def test_each_contrast_says_its_family_verdict_rates_auc_and_power():
    claims = _claims(
        [
            ("SR gray − PPL (discrimination)", "seed 0", 0.2, 0.01, 0.3),
            ("SR gray − Zlib (discrimination)", "seed 0", 0.01, -0.02, 0.03),
        ]
    )
    claims = claims.assign(
        p=[0.04, 0.5], p_holm=[0.06, 0.5], p_equivalent_holm=[0.9, 0.01], margin=0.05,
        family_verdict=["inconclusive", "equivalent"], detectable=[0.12, 0.04],
        seeds_needed=[6.0, float("inf")], seeds_needed_equivalence=[9.0, float("inf")],
        a_null_rate=[0.3, 0.3], b_null_rate=[0.29, 0.31], a_held_out_rate=[0.8, 0.8],
        b_held_out_rate=[0.79, 0.81], a_leaked_rate=[0.9, 0.9], b_leaked_rate=[0.85, 0.9],
    )  # fmt: skip
    auc = _claims([("SR gray − PPL (AUC)", "seed 0", 0.03, -0.01, 0.07)], "secondary")
    lead, ppl, zlib = claim_headline(pd.concat([claims, auc], ignore_index=True))
    assert "on seed 0" in lead and "SR gray is equivalent to Zlib" in lead
    assert "is inconclusive against PPL" in lead
    assert ppl.startswith("SR gray − PPL: inconclusive family-wise (Holm p = 0.06; equivalence")
    assert "; AUC +0.030 [-0.010, +0.070]" in ppl
    assert "held-out flag rates 80.0% and 79.0%; leaked-half flag rates 90.0% and 85.0%" in ppl
    assert "the design detects 0.120 with 80% power (6 seeds would detect ±0.05, 9 seeds" in ppl
    assert ppl.endswith("null-control flag rates 30.0% and 29.0%; the design detects 0.120 with"
                        " 80% power (6 seeds would detect ±0.05, 9 seeds show equivalence"
                        " within it).")  # fmt: skip
    assert zlib.startswith("SR gray − Zlib: equivalent family-wise") and "seeds would" not in zlib
    zero = claim_headline(claims.assign(p_holm=0.0, family_verdict="better"))[1]
    assert "(Holm p ≈ 0 (no resample crossed the bound)" in zero
    partial = claims.assign(family_verdict=["", "equivalent"], p_holm=[float("nan"), 0.5])
    lead, ppl, _ = claim_headline(partial)  # a row Holm could not read keeps its own interval
    assert "SR gray is better than PPL" in lead and "equivalent to Zlib" in lead
    assert ppl.startswith("SR gray − PPL: +0.200 [+0.010, +0.300] MCC, better")
    far = claim_headline(claims.assign(detectable=0.3))[1]
    assert "(6 seeds would detect ±0.05, 9 seeds" in far
    assert "no number of seeds would detect" in claim_headline(claims.assign(detectable=0.3))[2]


def test_the_papers_gain_is_tested_as_the_paper_states_it():
    claims = _claims([("SR gray − PPL", "pooled", 0.1, -0.1, 0.3)]).assign(
        p=0.3, p_holm=0.3, p_equivalent_holm=0.5, margin=0.05, family_verdict="inconclusive"
    )
    paper = _claims(
        [
            ("SR gray − mean of 4 baselines (F1, held-out)", "pooled", 0.02, -0.01, 0.05),
            ("SR gray − mean of 4 baselines (F1, transport)", "pooled", 0.15, 0.05, 0.3),
        ],
        "paper",
    ).assign(
        a="SR gray", paper_gain=0.2152, p_holm=[0.001, 0.4], p_above_zero_holm=[0.2, 0.01],
        family_verdict=["not reproduced here", "reproduced"],
    )  # fmt: skip
    said = claim_headline(pd.concat([claims, paper], ignore_index=True))[-1]
    assert said.startswith("The paper reports SR gray +21.52 F1 points over the mean of its")
    assert "at the held-out point +2.0 [-1.0, +5.0] points: not reproduced here (below" in said
    assert "at the transport point +15.0 [+5.0, +30.0] points: reproduced (above zero" in said
    odd = paper.assign(family_verdict="inconclusive")
    assert "inconclusive (neither shown below" in paper_sentences(odd)[0]


def test_a_pool_of_seeds_no_family_was_chosen_on_is_confirmatory():
    rows = [("SR gray − PPL", f"seed {s}", 0.1, 0.0, 0.2) for s in (3, 4)]
    rows.append(("SR gray − PPL", "pooled", 0.1, 0.0, 0.2))
    said = claim_headline(_claims(rows).assign(seed_sd=0.0))
    assert said[-1].startswith("Every seed here is confirmatory: no family was chosen on any")
    lead, only = claim_headline(_claims([("SR gray − PPL", "seed 3", 0.1, -0.1, 0.3)]))
    assert "on seed 3" in lead and "shows no evidence of a difference from PPL" in lead
    assert only.endswith("no evidence.") and "seeds" not in only
    assert claim_headline(_claims([]).reindex(columns=["role"])) == [
        "No declared contrast was computed."
    ]


def test_the_answer_box_leads_with_what_was_decided():
    """Flag rates first, then the blind premise, the ranking (the family's decided verdicts;
    the exploratory AUCs on one side of zero only where a cell prints it), transport, the
    paper's gain at this book's points; the undecided contrasts last, each with its expected
    power."""
    from srlib.detection.answer import claim_answer

    family = _claims(
        [("SR gray − mean of 4 baselines (AUC)", "pooled", 0.02, -0.01, 0.05),
         ("SR black − mean of 2 baselines (AUC)", "pooled", -0.04, -0.06, -0.02)]
    ).assign(metric="auc", family_verdict=["inconclusive", "worse"], seeds=4,
             problem_se=0.006, seed_sd=0.01)  # fmt: skip
    transport = _claims(
        [("SR gray − mean of 4 baselines (MCC, transport)", "pooled", 0.05, 0.01, 0.09)],
        "transport",
    ).assign(family_verdict="better", a_held_out_rate=0.86, a_leaked_rate=0.9, seeds=4,
             problem_se=0.01, seed_sd=0.02)  # fmt: skip
    auc = _claims(
        [("SR gray − Min-K%++ (AUC)", "pooled", -0.12, -0.15, -0.09),
         ("SR gray − PPL (AUC)", "pooled", 0.01, -0.02, 0.04)],
        "secondary",
    ).assign(metric="auc", family_verdict="")  # fmt: skip
    paper = _claims(
        [("SR gray − mean of 4 baselines (F1, transport)", "pooled", 0.02, 0.01, 0.03)], "paper"
    ).assign(a="SR gray", metric="f1", paper_gain=0.2152, family_verdict="smaller but positive")
    claims = pd.concat([family, transport, auc, paper], ignore_index=True)
    premise = {"auc": 0.93, "flag_rate": 0.97, "chance": 1 / 6, "problems": 664.0,
               "p_above_chance": 1e-9}  # fmt: skip
    said = claim_answer(claims, premise=premise)
    assert said[0] == (
        "**What SR flags**: SR gray 86% of problems the leaked model never saw, 90% of those"
        " it saw."
    )
    assert said[1].startswith("**Without a model**") and "AUC 0.93" in said[1]
    assert "tell originals from variants (AUC 0.93); SR's rule on them flags 97%" in said[1]
    quiet = claim_answer(claims, premise=premise | {"p_above_chance": 0.4})[1]
    assert "do not tell originals from variants beyond chance (AUC" in quiet
    assert said[2] == (
        "**Ranking leaked problems**: SR black − mean of 2 baselines -0.04 [-0.06, -0.02]"
        " AUC, worse."
    )
    assert said[3].startswith("**At a clean model's threshold**") and "better" in said[3]
    assert said[4] == (
        "**The paper's F1 gain, at this book's matched points**: SR gray (paper +22): +2.0"
        " transport (smaller but positive)."
    )
    assert said[5].startswith("**Undecided**: SR gray AUC (expected power")
    assert said[5].endswith("% for 0.05).")
    assert len(said) == 6 and sum(s.count("inconclusive") for s in said) == 0
    printed = claim_answer(claims, markdown=False, exploratory=True)
    assert printed[0].startswith("What SR flags: SR gray")
    assert printed[2] == (
        "Exploratory rankings: SR gray ranks leaked problems worse than Min-K%++"
        " (-0.12 [-0.15, -0.09]) (exploratory, each interval unadjusted: rule − score)."
    )


def longest_answer() -> str:
    """The longest answer box ``claim_answer`` can write for the book's declared contrasts:
    every confirmatory contrast in each of its three states (decided with the longest verdict,
    inconclusive with its power, no verdict), every number at its widest, both rules' flag
    rates, the blind premise undecided, the paper's gain with a verdict per point."""
    import itertools

    from srlib.book.answer import answer_text
    from srlib.detection.answer import claim_answer
    from srlib.detection.declared import DESIGN

    wide = {"difference": -1.0, "low": -1.0, "high": 1.0, "seeds": 4, "part": "pooled"}
    premise = {"auc": 0.5, "flag_rate": 1.0, "chance": 1.0, "p_above_chance": 1.0}
    paper = [
        {"contrast": f"{rule} − mean of {n} baselines (F1, {point})", "role": "paper",
         "a": rule, "metric": "f1", "paper_gain": 0.2152, **wide,
         "family_verdict": verdict}
        for rule, n in (("SR gray", 4), ("SR black", 2))
        for point, verdict in (("held-out", "smaller but positive"),
                               ("transport", "not reproduced here"))
    ]  # fmt: skip
    longest = ""
    for states in itertools.product(("equivalent", "inconclusive", "no verdict"), repeat=4):
        rows = [
            {"contrast": plan.contrast, "a": plan.contrast.split(" − ")[0],
             "role": "transport" if "transport" in plan.contrast else "discrimination",
             "metric": "mcc" if "MCC" in plan.contrast else "auc", "family_verdict": state,
             "problem_se": 0.9, "seed_sd": 0.9, "a_held_out_rate": 1.0, "a_leaked_rate": 1.0,
             **wide}
            for plan, state in zip(DESIGN, states, strict=True)
        ]  # fmt: skip
        said = answer_text(*claim_answer(pd.DataFrame(rows + paper), premise=premise))
        longest = max(longest, said, key=len)
    return longest


def test_the_longest_answer_box_names_every_part_once():
    """The box's length has a bound: the exploratory rankings stay out of it, and the longest
    box the code can write holds each part once."""
    said = longest_answer()
    assert said.count("**What SR flags**") == 1 and "Exploratory" not in said
    labels = ["**What SR flags**", "**Without a model**", "**Ranking leaked problems**",
              "**At a clean model's threshold**", "**The paper's", "**Undecided**"]  # fmt: skip
    assert all(said.count(label) <= 1 for label in labels), said
    assert len(said.split()) < 170, said


def test_a_decided_verdict_says_what_it_rests_on():
    """Beside a decided confirmatory verdict: its family's Holm p, the p Holm gives it over all
    four confirmatory contrasts, and the floor an exact sign-flip test has over four seeds."""
    from srlib.detection.verdicts import rests_on

    rows = [
        ("SR gray − mean of 4 baselines (AUC)", "discrimination", 0.019, 0.038, "better"),
        ("SR black − mean of 2 baselines (AUC)", "discrimination", 0.5, 0.5, "inconclusive"),
        ("SR gray − mean of 4 baselines (MCC, transport)", "transport", 0.3, 0.6, "inconclusive"),
        ("SR black − mean of 2 baselines (MCC, transport)", "transport", 0.6, 0.6, "inconclusive"),
    ]
    table = pd.DataFrame(
        [{"contrast": c, "role": role, "part": "pooled", "p": p, "p_holm": q,
          "p_equivalent": 0.9, "p_equivalent_holm": 0.9, "family_verdict": v, "seeds": 4}
         for c, role, p, q, v in rows]
    )  # fmt: skip
    (said,) = rests_on(table)
    assert said.startswith("SR gray − mean of 4 baselines (AUC) is better with Holm p = 0.038")
    assert "in its family of 2; over all 4 confirmatory contrasts Holm would give p = 0.076" in said
    assert "no sign-flip test over 4 seeds goes below 0.125" in said
    assert rests_on(table.assign(family_verdict="inconclusive")) == []
    equivalent = table.assign(family_verdict=["equivalent", *["inconclusive"] * 3])
    (said,) = rests_on(equivalent)  # two one-sided tests: the one-sided floor
    assert "is equivalent with Holm p = 0.9" in said and "goes below 0.0625" in said
