"""The book's statistics, shared by both studies and the testbed (and importing neither):
metrics with bootstrap intervals (``metrics``), rates against chance and an empirical null
(``rates``), the resamplers of each unit that repeats (``resample``), bootstrap p-values and
Holm (``significance``), and the sentences intervals allow (``verdicts``)."""
