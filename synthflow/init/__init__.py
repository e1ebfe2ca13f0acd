"""``synthflow init``: a draft spec from a public sample, for a person to review.

* :mod:`~synthflow.init.draft`: the draft (:func:`~synthflow.init.draft.draft_spec`);
* :mod:`~synthflow.init.columns` and :mod:`~synthflow.init.codebook`: each column's type
  and domain, from the sample or a codebook;
* :mod:`~synthflow.init.criteria`: the criteria and thresholds the draft proposes;
* :mod:`~synthflow.init.text`: the YAML text, commented.
"""
