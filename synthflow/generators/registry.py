"""The generator registry: the names the spec's space uses -> generator classes."""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping

from synthflow.errors import ConfigError
from synthflow.generators.protocol import Generator
from synthflow.generators.table import GENERATORS
from synthflow.transform import Transformer

__all__ = ["REGISTRY", "check_public_only", "make_generator", "register"]

REGISTRY: MutableMapping[str, type[Generator]] = GENERATORS.classes
"""Generator family -> its class: a view of the one table
(:data:`~synthflow.generators.table.GENERATORS`), each class imported on first use."""


def make_generator(
    model: str,
    hyperparameters: dict[str, object],
    *,
    epsilon: float,
    transformer: Transformer | None = None,
) -> Generator:
    """Instantiate the registered generator ``model``.

    ``transformer`` (public: the spec and the configuration's bins) is handed to
    generators that derive their measurements from the spec (``needs_transformer``).

    Raises:
        KeyError: If ``model`` is not registered.
        TypeError: For unknown hyperparameter names.
        ValueError: For invalid hyperparameter values.
    """
    cls = REGISTRY[model]
    hp = cls.Hyperparameters(**hyperparameters)
    if cls.needs_transformer:
        return cls(hp, epsilon=epsilon, transformer=transformer)  # type: ignore[call-arg]
    gen: Generator = cls(hp, epsilon=epsilon)
    return gen


def check_public_only(models: Iterable[str], *, public: bool, api: bool = False) -> None:
    """Refuse generators that read their input as public data on data not declared public.

    The one check (``requires_public_data``): jobs (:func:`synthflow.jobs.open_job`),
    the flow and a release's candidates all call it.

    Raises:
        ConfigError: Naming the generators and the fix.
    """
    if public:
        return
    needs = sorted({m for m in models if REGISTRY[m].requires_public_data})
    if needs:
        declare = "public=True" if api else "--public"
        raise ConfigError(
            f"generator(s) {needs} read their input as public data and run only on data "
            f"declared public ({declare}; see docs/generators.md): choose other generators "
            "for private data"
        )


def register(cls: type[Generator]) -> type[Generator]:
    """Add a generator defined outside the package (docs/adding-a-generator.md).

    The one step a plug-in takes: the class joins the one table
    (:data:`~synthflow.generators.table.GENERATORS`), whose views
    :data:`REGISTRY` and ``HYPERPARAMETERS`` (what the spec loader reads) then both
    name it. On the command line, ``synthflow --plugin MODULE_OR_FILE ...`` imports the module
    that calls this. Returns ``cls`` (usable as a class decorator).

    Raises:
        ConfigError: A name taken by another generator, or a class without ``name``,
            ``Hyperparameters`` or the protocol's flags.
    """
    missing = [
        a
        for a in ("name", "Hyperparameters", "requires_public_data", "needs_transformer")
        if not hasattr(cls, a)
    ]
    if missing:
        raise ConfigError(
            f"generator class {cls.__name__} lacks {missing}: subclass "
            "synthflow.generators.protocol.GeneratorBase (docs/adding-a-generator.md)"
        )
    if cls.name in GENERATORS.names() and GENERATORS.class_of(cls.name) is not cls:
        raise ConfigError(f"a generator named {cls.name!r} is already registered")
    GENERATORS.add(cls.name, cls)
    return cls
