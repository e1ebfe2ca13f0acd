"""synthflow: differentially private synthetic microdata a government can publish.

The package reads like the pipeline (SPEC sec. 1):

* :mod:`synthflow.config` -- the release spec (YAML) as typed, frozen objects;
  :mod:`synthflow.space` -- the configuration space with stable ids.
* :mod:`synthflow.data` -- reading and cleaning input against the public domain.
* :mod:`synthflow.transform` -- binning alternatives and the bins-to-numbers rule.
* :mod:`synthflow.ledger` -- the one privacy accountant; :mod:`synthflow.rng` -- CSPRNG.
* :mod:`synthflow.generators` -- DP generators behind one protocol (PrivBayes, ...).
* :mod:`synthflow.filtering` -- plausibility constraints; :mod:`synthflow.kanon` --
  the minimal-occurrence projection.
* :mod:`synthflow.flow` -- one flow end to end; :mod:`synthflow.cli` -- the CLI.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
