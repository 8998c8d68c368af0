"""CAOS's K: the top-k most frequent objects of the training data (``caos.frequent``).

Why its own module in the CAOS folder: K is a CAOS notion (CAOS_K and the k-sweep of Figure 4),
read by the embed stage (the K names get vectors), scoring, the sensitivity tables and the
figures; each of them takes the order from here. The named orders are MSCOCO class orders
(:data:`halluscope.objects.coco.FREQUENT_ORDERS`, with where each comes from).
"""

from __future__ import annotations


def frequent_objects(frequent: str | list[str]) -> list[str]:
    """The K list of CAOS: a named order of ``FREQUENT_ORDERS`` (``coco`` = MSCOCO classes by
    training instances), or an explicit list."""
    if isinstance(frequent, str):
        from halluscope.objects.coco import FREQUENT_ORDERS

        if frequent not in FREQUENT_ORDERS:
            raise ValueError(
                f"caos.frequent: unknown order {frequent!r}; valid: {', '.join(FREQUENT_ORDERS)}"
            )
        return list(FREQUENT_ORDERS[frequent])
    return list(frequent)
