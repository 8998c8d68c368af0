"""Batched decoding for the ``llamacpp`` backend: several sequences in one llama.cpp context, the
same replies byte for byte as one request at a time.

Why: one sequence at a time, every generated token is a matrix-vector product that reads all
the weights for one row of activations; N sequences decoded together read them once for N rows
(issue 37; ``timings/bench_llm_stages.py`` measures it). Not one byte of a reply may change, so
the batched path keeps everything that makes a reply what it is:

- **llama-cpp-python's own completion code.** Each request runs ``Llama.create_chat_completion``
  (chat template from the GGUF metadata, tokenisation, stop strings, the end-of-generation
  check, the UTF-8 hold-back, streamed chunks, ``max_tokens`` and its context cap, finish
  reasons) in a thread of its own against a stand-in for the ``Llama``
  (:class:`SequenceLlama`) whose ``generate`` asks the engine for each token. The stage's stop
  rules, the greedy grammar check (:mod:`~halluscope.models.llamacpp_greedy`) and JSON-schema
  grammars run unchanged, per request. The threads only hand tokens over: the engine (the
  caller's thread) does every llama.cpp call, so nothing runs concurrently inside llama.cpp.
- **llama-cpp-python's own sampler**: ``Llama._init_sampler`` (logits processors, penalties,
  grammar, greedy or seeded sampling) builds one chain per sequence, applied to that sequence's
  row of logits; so seeded sampling (temperature > 0) gives the same bytes too.
- **the same KV history.** The one-at-a-time ``Llama`` keeps the previous request's tokens and
  evaluates only what follows their longest common prefix with the next prompt; the bits of a
  position's KV depend on how it was evaluated (measured: in a chunk of several tokens vs alone,
  as a generated token is), so a reply can depend on the request before it (a NOPE rewrite
  prompt continues its listing's reply). The engine replays that history: request k starts from
  a copy of request k-1's KV cut at the prefix ``Llama.generate`` would keep (``prefill`` /
  ``step`` below), waiting for k-1 to finish only when k's prompt continues k-1's. Across
  ``generate`` calls the last request's sequence is kept, as the ``Llama`` keeps its state.
- **the same logits**, under the conditions :class:`BatchedContext` enforces (measured; see
  ``docs/reproducibility.md``): each prompt's new tokens are evaluated alone (their own
  ``llama_decode`` calls, in ``n_batch`` chunks from the same position as ``Llama.eval``; two
  prompts in one call change the rows); a decode step carries one token per live sequence; the
  KV cache is not unified (``kv_unified`` false: one stream per sequence, so each sequence's
  attention is computed as if it were alone); flash attention stays off, as in the one-at-a-time
  context; every sequence has the spec's ``n_ctx`` (the context has ``n_ctx`` x streams), so
  ``max_tokens`` is capped as before; all other context parameters are copied from the
  ``Llama``'s context.

A finished sequence's stream is cleared and given to the next request (the lowest free one).
Live sequences are kept on consecutive streams, moving one when a stream in between falls free
(:meth:`BatchedContext.compact`: llama.cpp makes one pass over the weights per run of
consecutive sequence ids), and each decode step lists them in stream order. KV is copied through
llama.cpp's sequence state, byte for byte. One stream more than live sequences holds the finished
predecessor until its successor has copied it. The one-at-a-time path
(``Llama.create_chat_completion`` on the ``Llama`` itself) stays for ``n_seq: 1``.
"""

from __future__ import annotations

import ctypes
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from llama_cpp import Llama
from llama_cpp import _internals as internals
from llama_cpp import llama_cpp as lib

Job = Callable[["SequenceLlama"], Any]


class SequenceLlama:
    """Stands in for a ``Llama`` inside llama-cpp-python's completion code, for one sequence.

    Attributes not defined here are the real ``Llama``'s (tokenizer, chat handlers, metadata,
    ``n_ctx``); ``generate`` asks the engine for each token instead of evaluating; the seed and
    the evaluated tokens (which the logits processors read) are this sequence's own.
    """

    create_chat_completion = Llama.create_chat_completion
    create_completion = Llama.create_completion
    _create_completion = Llama._create_completion
    _init_sampler = Llama._init_sampler

    def __init__(self, llama: Llama, ask: Callable[[tuple], int]) -> None:
        self._llama = llama
        self._ask = ask
        self._seed = llama._seed
        self.ids: list[int] = []  # evaluated tokens, as ``Llama.input_ids[:n_tokens]``
        self._no_scores: np.ndarray | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llama, name)

    def set_seed(self, seed: int) -> None:
        self._seed = seed

    @property
    def _input_ids(self) -> np.ndarray:
        return np.asarray(self.ids, dtype=np.intc)

    @property
    def _scores(self) -> np.ndarray:
        # indexed only for the stopping criteria, which read the tokens (``Llama._scores``
        # rows are never filled without ``logits_all`` either)
        if self._no_scores is None:
            self._no_scores = np.zeros((1, self._llama.n_vocab()), dtype=np.single)
        return self._no_scores

    def generate(
        self, tokens: Sequence[int], stopping_criteria: Any = None, **sampling: Any
    ) -> Iterator[int]:
        """``Llama.generate`` for one sequence: its sampler chain and its stopping check after
        each sampled token; the engine evaluates the prompt and each token fed back."""
        sampler = self._init_sampler(**sampling)
        prompt = list(tokens)
        token = self._ask(("prefill", prompt, sampler))
        sample_idx = len(prompt)
        while True:
            if stopping_criteria is not None and stopping_criteria(
                self._input_ids[:sample_idx], self._scores[0, :]
            ):
                return
            yield token
            token = self._ask(("step", token))
            sample_idx += 1


@dataclass(eq=False)
class _Seq:
    """One request of a run: its job, its stand-in ``Llama``, its stream and sampler."""

    index: int
    job: Job
    inbox: queue.SimpleQueue = field(default_factory=queue.SimpleQueue)
    model: SequenceLlama | None = None
    sampler: Any = None
    stream: int = -1
    prompt_len: int = 0
    finished: bool = False
    done: bool = False  # its thread has ended
    broken: bool = False  # a decode failed: its KV is not the one-at-a-time path's
    last_row: np.ndarray | None = None  # logits of its last evaluated token, once finished
    row_at: tuple[int, int] = (-1, -1)  # (decode serial, output index) of its last logits

    @property
    def ids(self) -> list[int]:
        assert self.model is not None
        return self.model.ids


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix (``Llama.generate``'s prefix match)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class BatchedContext:
    """A llama.cpp context sharing a loaded ``Llama``'s weights, ``n_seq`` sequences at a time.

    Enforces the conditions that keep the logits bit-identical to the ``Llama``'s own context
    (module docstring) and replays its KV history across requests (``history=False``: every
    prompt evaluated from scratch instead, for measurements: that changes replies whose prompt
    continues the previous request's).
    """

    def __init__(self, llama: Llama, n_seq: int, history: bool = True) -> None:
        if n_seq < 1:
            raise ValueError(f"llamacpp: n_seq must be >= 1, got {n_seq}")
        base = llama.context_params
        if base.flash_attn_type != lib.LLAMA_FLASH_ATTN_TYPE_DISABLED:
            raise ValueError("llamacpp: batched decoding keeps flash attention off, as the Llama")
        self.llama = llama
        self.n_seq = n_seq
        self.history = history
        self.n_ctx_seq = llama.n_ctx()
        self.n_batch = llama.n_batch
        self.n_vocab = llama.n_vocab()
        streams = n_seq + 1  # + the finished predecessor of a request not yet started
        params = lib.llama_context_params()
        ctypes.pointer(params)[0] = base  # every field as the one-at-a-time context has it
        params.n_ctx = self.n_ctx_seq * streams
        params.n_seq_max = streams
        params.kv_unified = False
        self.ctx = internals.LlamaContext(model=llama._model, params=params, verbose=False)
        got = lib.llama_n_ctx_seq(self.ctx.ctx)
        if got != self.n_ctx_seq:
            raise ValueError(f"llamacpp: {got} tokens per sequence, not n_ctx {self.n_ctx_seq}")
        self.memory = lib.llama_get_memory(self.ctx.ctx)
        self.batch = internals.LlamaBatch(
            n_tokens=max(self.n_batch, streams), embd=0, n_seq_max=1, verbose=False
        )
        self.free = list(range(streams))
        self.prev: _Seq | None = None  # the last request that reached its prompt
        self.serial = 0  # llama_decode calls so far
        self.copied_tokens = 0  # prompt tokens taken from the predecessor instead of evaluated
        self.evaluated_tokens = 0  # prompt tokens evaluated
        self.moves = 0  # streams moved to keep the live ones together
        self._state = (ctypes.c_uint8 * 0)()  # buffer of sequence copies

    # -- llama.cpp -----------------------------------------------------------------------------

    def _decode(self, rows: Sequence[tuple[int, int, int, bool]]) -> None:
        """One ``llama_decode`` of ``(token, position, stream, logits)`` rows."""
        b = self.batch.batch
        b.n_tokens = len(rows)
        for i, (token, pos, stream, logits) in enumerate(rows):
            b.token[i], b.pos[i] = token, pos
            b.seq_id[i][0], b.n_seq_id[i], b.logits[i] = stream, 1, logits
        self.serial += 1
        self.ctx.decode(self.batch)

    def _row(self, index: int) -> np.ndarray:
        pointer = lib.llama_get_logits_ith(self.ctx.ctx, index)
        return np.ctypeslib.as_array(pointer, shape=(self.n_vocab,)).copy()

    def _take(self) -> int:
        """The lowest free stream (live streams kept together: see :meth:`compact`)."""
        stream = min(self.free)
        self.free.remove(stream)
        return stream

    def _copy(self, source: int, target: int) -> None:
        """Copy a sequence's KV into the empty stream ``target``, byte for byte.

        Through llama.cpp's sequence state (the cells holding data, in cell order, placed from
        the start of the empty stream: the same cell for every position, as positions fill
        their streams from cell 0 here) rather than ``llama_memory_seq_cp``, which copies
        whole streams and then makes the next decode plan its worst-case graph again.
        """
        size = lib.llama_state_seq_get_size(self.ctx.ctx, source)
        if len(self._state) < size:
            self._state = (ctypes.c_uint8 * size)()
        written = lib.llama_state_seq_get_data(self.ctx.ctx, self._state, size, source)
        if not written or not lib.llama_state_seq_set_data(
            self.ctx.ctx, self._state, written, target
        ):
            raise RuntimeError(f"llamacpp: copying sequence {source} to {target} failed")

    def _release(self, stream: int) -> None:
        lib.llama_memory_seq_rm(self.memory, stream, -1, -1)
        self.free.append(stream)

    # -- requests ------------------------------------------------------------------------------

    def must_wait(self, prompt: Sequence[int]) -> bool:
        """Whether a prompt continues the running predecessor's prompt: its kept prefix then
        depends on the predecessor's reply, so it starts once that one has finished."""
        prev = self.prev
        if not self.history or prev is None or prev.finished:
            return False
        return len(prompt) >= prev.prompt_len and (
            common_prefix(prev.ids[: prev.prompt_len], prompt) == prev.prompt_len
        )

    def prefill(self, seq: _Seq, prompt: list[int], sampler: Any) -> int:
        """Evaluate ``seq``'s prompt as ``Llama.generate`` would after the predecessor (the
        kept prefix copied, the rest alone in ``n_batch`` chunks) and sample its first token."""
        assert seq.model is not None
        old, self.prev = self.prev, seq
        prev = old if self.history and old is not None and not old.broken else None
        kept = prev.ids if prev is not None else []
        shared = common_prefix(kept, prompt)
        seq.model.ids, seq.sampler, seq.prompt_len = list(prompt), sampler, len(prompt)
        if prev is not None and len(kept) == len(prompt) == shared:  # the Llama samples at once
            if not prev.finished or prev.last_row is None:
                raise RuntimeError("llamacpp: the predecessor's last logits are gone")
            seq.stream, prev.stream = prev.stream, -1
            seq.last_row = prev.last_row
            self.copied_tokens += len(prompt)
            return sample_row(sampler, prev.last_row)
        start = shared - 1 if shared == len(prompt) else shared
        seq.stream = self._inherit(prev, start) if prev is not None and start > 0 else self._take()
        if old is not None and old.finished and old.stream >= 0:
            self._release(old.stream)  # its successor has what it needs
            old.stream = -1
        self.copied_tokens += start
        self.evaluated_tokens += len(prompt) - start
        for lo in range(start, len(prompt), self.n_batch):  # as Llama.eval
            hi = min(len(prompt), lo + self.n_batch)
            self._decode([(prompt[i], i, seq.stream, i == hi - 1) for i in range(lo, hi)])
        seq.last_row = self._row(-1)
        return sampler.sample(self.ctx, -1)

    def _inherit(self, prev: _Seq, start: int) -> int:
        """A stream holding ``prev``'s KV up to ``start``: its own stream once it has finished,
        else a copy (across streams llama.cpp copies whole streams), then cut at ``start``."""
        if prev.finished:
            stream, prev.stream = prev.stream, -1
        else:
            stream = self._take()
            self._copy(prev.stream, stream)
        lib.llama_memory_seq_rm(self.memory, stream, start, -1)
        return stream

    def compact(self, seqs: Sequence[_Seq]) -> None:
        """Move sequences so that ``seqs`` hold consecutive streams.

        Why: without a unified KV cache llama.cpp splits a decode into one pass over the
        weights per run of consecutive sequence ids (8 sequences on every other stream took
        2.2x as long per step as on 8 neighbours), and streams fall free in any order. A move
        is a byte copy of the stream (like the prefix copy), so the bits stay the same.
        """
        streams = {seq.stream for seq in seqs}
        k = len(streams)
        if k < 2 or max(streams) - min(streams) + 1 == k:
            return
        total = self.n_seq + 1
        busy = set(range(total)) - set(self.free) - streams  # held by other sequences
        best: tuple[int, int] | None = None  # (streams already inside, window start)
        for start in range(total - k + 1):
            window = range(start, start + k)
            if not busy.intersection(window):
                inside = len(streams.intersection(window))
                best = max(best or (inside, start), (inside, start))
        if best is None:
            return
        window = range(best[1], best[1] + k)
        holes = [stream for stream in window if stream not in streams]
        movers = [seq for seq in seqs if seq.stream not in window]
        for seq, hole in zip(movers, holes, strict=True):
            self.free.remove(hole)
            self._copy(seq.stream, hole)
            self._release(seq.stream)
            seq.stream = hole
            self.moves += 1

    def step(self, group: Sequence[tuple[_Seq, int]]) -> list[int]:
        """Feed each sequence its last sampled token in one ``llama_decode`` (one token per
        stream) and sample each one's next token from its own row of logits."""
        self.compact([seq for seq, _ in group])
        order = sorted(range(len(group)), key=lambda i: group[i][0].stream)  # as llama.cpp splits
        rows = []
        for i in order:
            seq, token = group[i]
            seq.ids.append(token)
            rows.append((token, len(seq.ids) - 1, seq.stream, True))
        self._decode(rows)
        out = [0] * len(group)
        for row, i in enumerate(order):
            seq = group[i][0]
            seq.row_at = (self.serial, row)
            out[i] = seq.sampler.sample(self.ctx, row)
        return out

    def finish(self, seq: _Seq) -> None:
        """A request is done: keep its last logits (the ``Llama`` would sample from them for
        an identical next prompt) and its stream while it is the predecessor, else free it."""
        seq.finished = True
        if seq.row_at[0] == self.serial:
            seq.last_row = self._row(seq.row_at[1])
        elif seq.row_at[0] >= 0:
            seq.last_row = None
        if seq.broken and self.prev is seq:
            self.prev = None
        if self.prev is not seq and seq.stream >= 0:
            self._release(seq.stream)
            seq.stream = -1

    def forget(self) -> None:
        """Drop every sequence and the history: the next prompt is evaluated from scratch, as
        after ``Llama.reset`` (after an error in the engine, and for measurements)."""
        lib.llama_memory_clear(self.memory, True)
        self.free = list(range(self.n_seq + 1))
        self.prev = None

    def fail(self, seq: _Seq) -> None:
        """A decode of ``seq`` failed: its KV is unknown, so nothing inherits from it."""
        seq.broken = True

    def run(self, jobs: Sequence[Job]) -> list[Any]:
        """Run each job (a request's completion, given its stand-in ``Llama``) with up to
        ``n_seq`` live sequences; the jobs' results (or the exceptions they raised), in order."""
        return _Engine(self, jobs).run()


def sample_row(sampler: Any, row: np.ndarray) -> int:
    """``llama_sampler_sample`` on a saved row of logits: the chain applied to every token's
    logit in id order, the selected token accepted."""
    n = len(row)
    data = (lib.llama_token_data * n)()
    view = np.frombuffer(
        data, dtype=np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)])
    )
    view["id"] = np.arange(n, dtype=np.intc)
    view["logit"] = row
    view["p"] = 0.0
    array = lib.llama_token_data_array(data, n, -1, False)
    lib.llama_sampler_apply(sampler.sampler, ctypes.byref(array))
    token = int(data[array.selected].id)
    lib.llama_sampler_accept(sampler.sampler, token)
    return token


class _Engine:
    """One run: request threads posting messages, the engine acting on them between decodes."""

    def __init__(self, context: BatchedContext, jobs: Sequence[Job]) -> None:
        self.context = context
        self.seqs = [_Seq(index, job) for index, job in enumerate(jobs)]
        self.results: list[Any] = [None] * len(self.seqs)
        self.outbox: queue.SimpleQueue = queue.SimpleQueue()
        self.started = 0
        self.planned = 0  # requests before this index have started their prompt (or failed)
        self.live = 0
        self.owing = 0  # messages the engine waits for before it acts

    def run(self) -> list[Any]:
        waiting: dict[int, tuple] = {}
        try:
            while self.started < len(self.seqs) and self.live < self.context.n_seq:
                self._start()
            while self.owing or waiting:
                while self.owing:
                    seq, message = self.outbox.get()
                    self.owing -= 1
                    waiting[seq.index] = message
                self._advance(waiting)
        except BaseException:
            self.context.forget()  # the streams of the live sequences are in an unknown state
            raise
        finally:
            for index in waiting:  # only after an engine error: release the waiting threads
                self.seqs[index].inbox.put(("error", RuntimeError("batched decoding stopped")))
        return self.results

    def _start(self) -> None:
        """Start the next request's thread."""
        seq = self.seqs[self.started]
        self.started += 1
        self.live += 1
        self.owing += 1
        seq.model = SequenceLlama(self.context.llama, lambda message: self._ask(seq, message))

        def body() -> None:
            result: Any
            try:
                result = seq.job(seq.model)
            except BaseException as err:  # handed back as the request's result
                result = err
            self.outbox.put((seq, ("done", result)))

        name = f"llamacpp-seq-{seq.index}"
        threading.Thread(target=body, name=name, daemon=True).start()

    def _ask(self, seq: _Seq, message: tuple) -> int:
        """In a request's thread: post ``message``, wait for the engine's token."""
        self.outbox.put((seq, message))
        kind, value = seq.inbox.get()
        if kind == "error":
            raise value
        return value

    def _give(self, seq: _Seq, kind: str, value: Any) -> None:
        self.owing += 1
        seq.inbox.put((kind, value))

    def _advance(self, waiting: dict[int, tuple]) -> None:
        """Finished requests free their place for the next; prompts start in request order
        (each after its predecessor's, as the history requires); then, when any sequence
        wants a token, one decode step for all of them."""
        for index in [i for i, m in waiting.items() if m[0] == "done"]:
            seq = self.seqs[index]
            self.results[index] = waiting.pop(index)[1]
            seq.done = True
            if seq.sampler is not None:
                self.context.finish(seq)
            self.live -= 1
            if self.started < len(self.seqs):
                self._start()
        self._prefills(waiting)
        group = [(self.seqs[i], m[1]) for i, m in sorted(waiting.items()) if m[0] == "step"]
        if group:
            for seq, _ in group:
                del waiting[seq.index]
            self._step(group)

    def _prefills(self, waiting: dict[int, tuple]) -> None:
        """Start the posted prompts in request order, up to one that must wait for its
        predecessor or has not posted yet."""
        while self.planned < self.started:
            seq = self.seqs[self.planned]
            if seq.done and seq.sampler is None:  # ended before its prompt: no history
                self.planned += 1
                continue
            message = waiting.get(seq.index)
            if message is None or message[0] != "prefill":
                return
            _, prompt, sampler = message
            if self.context.must_wait(prompt):
                return
            del waiting[seq.index]
            self.planned += 1
            try:
                token = self.context.prefill(seq, prompt, sampler)
            except RuntimeError as err:  # e.g. llama_decode failed: this request's error
                self.context.fail(seq)
                self._give(seq, "error", err)
                continue
            self._give(seq, "token", token)

    def _step(self, group: list[tuple[_Seq, int]]) -> None:
        try:
            tokens = self.context.step(group)
        except RuntimeError as err:
            for seq, _ in group:
                self.context.fail(seq)
                self._give(seq, "error", err)
            return
        for (seq, _), token in zip(group, tokens, strict=True):
            self._give(seq, "token", token)
