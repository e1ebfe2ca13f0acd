"""Budget planning: the least epsilon at which a release still passes (``synthflow plan``).

Built on a public sweep's planning records (:mod:`synthflow.plan.simulate`), a greedy
search over the budgets (:mod:`synthflow.plan.optimize`), and the planned spec, written
as the input spec with only its budgets changed (:mod:`synthflow.plan.specfile`). The
job that reads the files and writes the plan is :func:`synthflow.plan.job.plan_budget`.
"""

__all__ = ["PLAN_FILES"]

PLAN_FILES = ("spec.yaml", "candidates.yaml", "plan.json", "plan.html")
"""What ``synthflow plan`` writes into its output directory."""
