"""YAML that cannot hang or be read two ways: :func:`strict_load` for every settings and data
file halluscope reads (``params.yaml``, ``--configfile`` overlays, the demo's annotations).

A module of its own, with nothing but PyYAML, so that the data stages that read YAML do not
take :mod:`halluscope.config` (and its imports) into their code versions.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["MAX_YAML_NODES", "YTE_KEY", "StrictLoader", "StrictYAMLError", "strict_load"]


#: The most nodes a settings file may expand to with its aliases resolved. Why a bound: an
#: alias is a reference, so 500 bytes of nested aliases ("billion laughs") expand to 10^9 nodes,
#: and every reader that walks the config (the schema, Snakemake, DVC) then hangs. The largest
#: file of this project (params.yaml) has under 2,000 nodes.
MAX_YAML_NODES = 100_000


class StrictYAMLError(yaml.YAMLError):
    """A YAML file that parses but would be read two ways or expand without bound; ``mark`` is
    where (0-based, as PyYAML's marks)."""

    def __init__(self, problem: str, mark: yaml.Mark | None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = mark


class StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a duplicate key and a file whose aliases expand past
    :data:`MAX_YAML_NODES`.

    Why: PyYAML (and so Snakemake) keeps the last of two equal keys while DVC's parser refuses
    the file: the two engines would read one ``params.yaml`` two ways. Every reader of a
    settings file in halluscope goes through :func:`strict_load`, and the Snakefile checks
    ``params.yaml`` and every ``--configfile`` with it before Snakemake uses their values.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False):  # type: ignore[override]
        seen: dict[object, yaml.Mark] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:
                continue  # unhashable: SafeLoader's own error follows
            if first is not None:
                raise StrictYAMLError(
                    f"duplicate key {key!r} (first at line {first.line + 1}); "
                    "expected each key once",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """Nodes of ``node`` with every alias expanded (shared nodes counted once per use)."""
    known = memo.get(id(node))
    if known is not None:
        return known
    memo[id(node)] = 1  # a recursive alias counts once (SafeLoader builds it as a cycle)
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, memo) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    memo[id(node)] = min(size, MAX_YAML_NODES + 1)
    return memo[id(node)]


#: The key that makes Snakemake read a config file as a YTE template, whose expressions are
#: Python code: a settings file never runs code, so it is refused.
YTE_KEY = "__use_yte__"


def strict_load(text: str) -> Any:
    """Parse one YAML document as :class:`StrictLoader` does, after bounding its expansion."""
    loader = StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None and _expanded_size(node, {}) > MAX_YAML_NODES:
            raise StrictYAMLError(
                f"its aliases expand to more than {MAX_YAML_NODES:,} values; expected a "
                "settings file (write the values out, or use fewer nested aliases)",
                node.start_mark,
            )
        document = None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()
    if isinstance(document, dict) and YTE_KEY in document:
        mark = next(k.start_mark for k, _ in node.value if getattr(k, "value", None) == YTE_KEY)
        raise StrictYAMLError(
            f"key {YTE_KEY!r} makes Snakemake evaluate the file as a YTE template (Python "
            "code); expected plain settings",
            mark,
        )
    return document
