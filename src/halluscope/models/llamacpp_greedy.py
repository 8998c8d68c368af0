"""Greedy decoding under a constraint, checking the best token first (the ``llamacpp`` backend).

Why a module of its own: llama.cpp's grammar sampler checks every token of the vocabulary
against the grammar before a greedy pick (~7-12 ms per token for SmolLM2's 49,152 tokens), while
under greedy decoding only the winner matters. Both processors here pick exactly the token the
grammar sampler followed by the greedy sampler would (the highest logit among allowed tokens,
the lowest id on ties), checking the best candidate first:

- :class:`GreedyObjectList`: the ``object-list`` language (``{"objects": ["a", "b"]}``) checked
  in Python (:func:`object_list_step`); the request param ``constraint: object-list``;
- :class:`GreedyGrammar`: any GBNF grammar or JSON schema, checked by llama.cpp's own grammar
  engine on the best token alone, the whole vocabulary only when that token is rejected (as
  llama.cpp's ``common_sampler`` does); used by :func:`greedy_grammar` for every greedy request
  with a grammar or schema unless the model spec sets ``greedy_grammar: false``.
"""

from __future__ import annotations

from typing import Any

_VOCABS: dict[int, tuple[list[bytes], frozenset[int]]] = {}

_OPEN = b'{"objects": ['
_MAX_ITEMS = 12
_CHAR_BAN = frozenset(b'"\\' + bytes(range(0x20)))


def object_list_step(state: tuple[str, int, int] | None, data: bytes):
    """Run the ``object-list`` language (the GBNF ``OBJECTS_GBNF`` of
    :mod:`halluscope.objects.llm_extract`: ``{"objects": ["a", "b"]}``, 0-12 names of at least
    one character other than ``"``, ``\\`` and control characters) over ``data`` from
    ``state`` (``None`` = the start). Returns the new state, or ``None`` when ``data`` leaves
    the language. States: ``(kind, position in the opening literal, names so far)``."""
    kind, pos, items = state or ("open", 0, 0)
    for byte in data:
        if kind == "open":
            if byte != _OPEN[pos]:
                return None
            pos += 1
            if pos == len(_OPEN):
                kind = "first"
        elif kind == "first":  # after "[": a name or the end
            if byte == 0x22:
                kind = "name0"
            elif byte == 0x5D:
                kind = "close"
            else:
                return None
        elif kind == "name0":  # inside a name, no character yet
            if byte in _CHAR_BAN:
                return None
            kind = "name"
        elif kind == "name":
            if byte == 0x22:
                kind, items = "after", items + 1
            elif byte in _CHAR_BAN:
                return None
        elif kind == "after":  # after a name: ", " or "]"
            if byte == 0x2C and items < _MAX_ITEMS:
                kind = "comma"
            elif byte == 0x5D:
                kind = "close"
            else:
                return None
        elif kind == "comma":
            if byte != 0x20:
                return None
            kind = "quote"
        elif kind == "quote":
            if byte != 0x22:
                return None
            kind = "name0"
        elif kind == "close":
            if byte != 0x7D:
                return None
            kind = "done"
        else:  # done: nothing may follow but the end of generation
            return None
    return kind, pos, items


def vocab_pieces(model: Any) -> tuple[list[bytes], frozenset[int]]:
    """Every token's piece (no special rendering) and the end-of-generation tokens."""
    key = id(model)
    found = _VOCABS.get(key)
    if found is None:
        import llama_cpp.llama_cpp as lib

        inner = model._model
        n_vocab = model.n_vocab()
        pieces = [inner.detokenize([i], special=False) for i in range(n_vocab)]
        eog = frozenset(i for i in range(n_vocab) if lib.llama_vocab_is_eog(inner.vocab, i))
        found = _VOCABS[key] = (pieces, eog)
    return found


class GreedyObjectList:
    """A logits processor: greedy decoding constrained to the ``object-list`` language.

    The same choice as llama.cpp's grammar sampler followed by greedy sampling (the highest
    logit among the tokens the language allows, the lowest id on ties), found by checking the
    candidates best first (usually the first one is allowed) instead of every token of the
    vocabulary. Keeps only the chosen token's logit; everything else becomes ``-inf``.
    """

    def __init__(self, model: Any) -> None:
        self.pieces, self.eog = vocab_pieces(model)
        self.prompt_len: int | None = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import numpy as np

        if self.prompt_len is None:
            self.prompt_len = len(input_ids)
        state = object_list_step(
            None, b"".join(self.pieces[int(t)] for t in input_ids[self.prompt_len :])
        )
        chosen = self._choose(state, scores, int(np.argmax(scores)))
        if chosen is None:
            order = np.argsort(-scores, kind="stable")
            chosen = next((int(t) for t in order if self._allowed(state, int(t))), None)
        out = np.full_like(scores, -np.inf)
        if chosen is not None:
            out[chosen] = scores[chosen]
        return out

    def _choose(self, state, scores, best: int) -> int | None:
        return best if self._allowed(state, best) else None

    def _allowed(self, state, token: int) -> bool:
        if state is None:
            return False
        if token in self.eog:
            return state[0] == "done"
        piece = self.pieces[token]
        return bool(piece) and object_list_step(state, piece) is not None


class GreedyGrammar:
    """A logits processor: greedy decoding under a llama.cpp grammar, checking the best token first.

    llama.cpp's grammar sampler checks every token of the vocabulary against the grammar before
    the greedy pick (~12 ms per token for SmolLM2's 49,152 tokens with a schema grammar). Under
    greedy decoding only the winner matters, so this asks the same grammar engine
    (``llama_sampler_init_grammar``) about the highest-logit token alone and scans the whole
    vocabulary only when that token is rejected, as llama.cpp's own ``common_sampler`` does.
    The chosen token is the one the grammar sampler followed by the greedy sampler would choose
    (the highest logit among the allowed tokens, the lowest id on ties), so replies are the same
    bytes; only the time per token changes. Temperature 0 only.
    """

    def __init__(self, model: Any, grammar: Any) -> None:
        import llama_cpp.llama_cpp as lib

        self._lib = lib
        self._sampler = lib.llama_sampler_init_grammar(
            model._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self._sampler:
            raise ValueError("llamacpp: the grammar does not parse")
        self._one = (lib.llama_token_data * 1)()
        self._one_array = lib.llama_token_data_array(self._one, 1, -1, False)
        self.prompt_len: int | None = None
        self._accepted = 0
        self.full_scans = 0  # tokens for which the best candidate was not allowed

    def __del__(self) -> None:
        sampler = getattr(self, "_sampler", None)
        if sampler:
            self._lib.llama_sampler_free(sampler)
            self._sampler = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import ctypes

        import numpy as np

        lib = self._lib
        if self.prompt_len is None:
            self.prompt_len = len(input_ids)
        for token in input_ids[self.prompt_len + self._accepted :]:
            lib.llama_sampler_accept(self._sampler, int(token))
            self._accepted += 1
        best = int(np.argmax(scores))
        self._one[0].id, self._one[0].logit, self._one[0].p = best, float(scores[best]), 0.0
        self._one_array.size, self._one_array.selected, self._one_array.sorted = 1, -1, False
        lib.llama_sampler_apply(self._sampler, ctypes.byref(self._one_array))
        chosen: int | None = best if self._one[0].logit != -np.inf else None
        if chosen is None:  # the best token is not allowed: the whole vocabulary, as llama.cpp
            self.full_scans += 1
            n = len(scores)
            data = (lib.llama_token_data * n)()
            view = np.frombuffer(data, dtype=np.dtype(
                [("id", np.intc), ("logit", np.single), ("p", np.single)], align=True
            ))  # fmt: skip
            view["id"] = np.arange(n, dtype=np.intc)
            view["logit"] = scores
            view["p"] = 0.0
            array = lib.llama_token_data_array(data, n, -1, False)
            lib.llama_sampler_apply(self._sampler, ctypes.byref(array))
            logits = view["logit"]
            if np.isfinite(logits).any():
                chosen = int(np.argmax(logits))
        out = np.full_like(scores, -np.inf)
        if chosen is not None:
            out[chosen] = scores[chosen]
        return out


def greedy_grammar(model: Any, kwargs: dict[str, Any]) -> None:
    """Under greedy decoding without penalties, swap a request's grammar (``grammar`` or the
    schema's ``response_format``) for :class:`GreedyGrammar`: the same tokens, found faster."""
    if kwargs["temperature"] != 0.0 or float(kwargs.get("repeat_penalty", 1.0)) != 1.0:
        return
    grammar = kwargs.pop("grammar", None)
    if grammar is None and "response_format" in kwargs:
        from llama_cpp.llama_chat_format import _grammar_for_response_format

        grammar = _grammar_for_response_format(kwargs.pop("response_format"))
    if grammar is None:
        return
    from llama_cpp import LogitsProcessorList

    kwargs["logits_processor"] = LogitsProcessorList([GreedyGrammar(model, grammar)])
