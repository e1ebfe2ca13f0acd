"""Budget planning: the least epsilon at which a release still passes (``synthflow plan``).

Built on a public sweep's planning records (:mod:`synthflow.plan.simulate`), a greedy
search over the budgets (:mod:`synthflow.plan.optimize`), and the planned spec, written
as the input spec with only its budgets changed (:mod:`synthflow.plan.specfile`).
"""

from synthflow.plan.cli import PLAN_FILES, plan_command

__all__ = ["PLAN_FILES", "plan_command"]
