"""The privacy core, at the bottom of the package: what is spent, and how it is accounted.

- :mod:`synthflow.privacy.ledger`: the append-only ledger of charges, the one budget
  check (:meth:`~synthflow.privacy.ledger.Ledger.can_afford`, and the refusal of a charge
  that would overspend), the dataset's and the command's ledgers;
- :mod:`synthflow.privacy.head`: the ledger's head recorded under ``$SYNTHFLOW_HOME``
  (a deleted or rolled-back ledger is refused); reservations of budget still being
  spent by a running command are the ledger's own (``_reservations``);
- :mod:`synthflow.privacy.rng`: the CSPRNG and the samplers every mechanism draws from;
- :mod:`synthflow.privacy.zcdp`, :mod:`synthflow.privacy.accounting` and
  :mod:`synthflow.privacy.pld`: zCDP, Renyi and privacy-loss-distribution accounting.

It imports nothing of synthflow's but :mod:`synthflow.errors` and :mod:`synthflow._util.files`:
every other package may import it, and it imports none of them ([stages]).
"""
