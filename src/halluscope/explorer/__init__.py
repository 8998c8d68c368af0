"""The explorer page: every caption and answer of a profile, per image, in one offline HTML page.

Why a page of examples: the tables give rates, and a reader judging a model also reads what it
said. The page builder (:mod:`halluscope.stages.explorer`, rule ``explorer``) knows no
benchmark: each benchmark with per-image outputs has an ``explorer.py`` in its folder that turns
its own result files into the records of :mod:`halluscope.explorer.records` (captions with their
objects marked, or answers with their truth and judge), and :mod:`halluscope.explorer.page`
writes them, with the page's script and style inlined, into one HTML file that opens from
``file://`` with no network.
"""
