"""The explanation codec as migrations 0017 and 0023 use it, frozen: never change this file.

A copy of what those migrations need of ``scoring.decision_codec``, ``scoring.decision_order``
and ``scoring.columnar`` (format 1: LZMA, nodes in the engine's order, no base; format 2:
flags, base digest, Zstandard), taken when the live codec was still writing these bytes. The
live codec will change; a migration must go on doing what it did when it was written, so it
runs this copy. A later migration that needs other behaviour gets its own copy.

Django skips modules of a migrations package whose name starts with an underscore, so this
file is not a migration itself.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import json
import lzma
import re
import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import zstandard

# -- the encoded explanation (scoring.decision_codec) --------------------------------------------

MAGIC_V1 = b"SBX1"  # format 1: LZMA-compressed columns of [explanation]
MAGIC = b"SBX2"  # format 2: flags, base digest, Zstandard-compressed columns of [explanation]
MAGIC_BASE = b"SBB2"  # a base: Zstandard-compressed columns of [explanation]
BY_NAME = 1  # flag: nodes stored by name
WITH_BASE = 2  # flag: compressed with a base as dictionary
DIGEST = 8  # bytes of a base's SHA-256 a decision names it by
LEVEL = 9  # Zstandard level
V1_PRESET = 6  # LZMA preset of format 1
NODES = "nodes"


class ExplanationDataError(ValueError):
    """Bytes that are not an encoded explanation, or not with the base given."""


@dataclass(frozen=True)
class Packed:
    """An explanation's uncompressed columns, and whether its nodes are stored by name."""

    payload: bytes
    flags: int


def pack(explanation: Mapping[str, Any]) -> Packed:
    """The explanation's columns, nodes by name when their order can be derived again."""
    stored = by_name(explanation)
    if stored is None:
        return Packed(pack_columns([explanation]), 0)
    return Packed(pack_columns([stored]), BY_NAME)


class Base:
    """The columns of one explanation, which others on the same snapshot are compressed
    against."""

    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        self.digest = hashlib.sha256(payload).digest()[:DIGEST]
        self.dictionary = zstandard.ZstdCompressionDict(
            payload, dict_type=zstandard.DICT_TYPE_RAWCONTENT
        )
        self._precomputed = False

    def for_compressing(self) -> zstandard.ZstdCompressionDict:
        if not self._precomputed:
            self.dictionary.precompute_compress(level=LEVEL)
            self._precomputed = True
        return self.dictionary

    def to_bytes(self) -> bytes:
        return MAGIC_BASE + _compress(self.payload, None)

    @classmethod
    def from_bytes(cls, data: bytes) -> Base:
        if not data.startswith(MAGIC_BASE):
            raise ExplanationDataError("not an explanation base (unknown header)")
        return cls(_decompress(memoryview(data)[len(MAGIC_BASE) :], None))


def encode(packed: Packed, base: Base | None = None) -> bytes:
    """Format 2, compressed against ``base`` when given."""
    flags = packed.flags | (WITH_BASE if base is not None else 0)
    digest = base.digest if base is not None else bytes(DIGEST)
    return MAGIC + bytes([flags]) + digest + _compress(packed.payload, base)


def encode_v1(explanation: Mapping[str, Any]) -> bytes:
    """Format 1: the explanation alone, nodes in the engine's order."""
    return MAGIC_V1 + lzma.compress(pack_columns([explanation]), preset=V1_PRESET)


def decode(data: bytes, base: Base | None = None) -> dict[str, Any]:
    """The explanation encoded in ``data`` (either format), nodes in the engine's order."""
    payload, flags = _payload(data, base)
    try:
        root = unpack_columns(payload)
    except ColumnarError as exc:
        raise ExplanationDataError(str(exc)) from None
    if len(root) != 1:
        raise ExplanationDataError("encoded explanation holds no explanation")
    explanation: dict[str, Any] = root.take([0])[0]
    nodes = explanation.get(NODES) if isinstance(explanation, dict) else None
    if flags & BY_NAME and isinstance(nodes, list):
        fields = [node if isinstance(node, dict) else {} for node in nodes]
        order = explanation_order(
            [node.get("feasible") for node in fields], [node.get("totalScore") for node in fields]
        )
        if order is None or len(order) != len(nodes):
            raise ExplanationDataError("encoded explanation's node order is corrupt")
        explanation[NODES] = [nodes[row] for row in order]
    return explanation


def _compress(payload: bytes, base: Base | None) -> bytes:
    dictionary = base.for_compressing() if base is not None else None
    compressor = zstandard.ZstdCompressor(level=LEVEL, dict_data=dictionary, write_checksum=True)
    return compressor.compress(payload)


def _decompress(frame: bytes | memoryview, base: Base | None) -> bytes:
    dictionary = base.dictionary if base is not None else None
    try:
        return zstandard.ZstdDecompressor(dict_data=dictionary).decompress(frame)
    except zstandard.ZstdError as exc:
        raise ExplanationDataError(f"encoded explanation is corrupt: {exc}") from None


def _payload(data: bytes, base: Base | None) -> tuple[bytes, int]:
    """The columns and flags of encoded ``data`` (either format)."""
    view = memoryview(data)
    if data.startswith(MAGIC_V1):
        try:
            return lzma.decompress(view[len(MAGIC_V1) :]), 0
        except lzma.LZMAError as exc:
            raise ExplanationDataError(f"encoded explanation is corrupt: {exc}") from None
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 1 + DIGEST:
        raise ExplanationDataError("not an encoded explanation (unknown header)")
    flags = data[4]
    if flags & WITH_BASE:
        if base is None:
            raise ExplanationDataError("the encoded explanation needs its base")
        if base.digest != data[5 : 5 + DIGEST]:
            raise ExplanationDataError("the encoded explanation was made with another base")
    return _decompress(view[5 + DIGEST :], base if flags & WITH_BASE else None), flags


# -- the node order (scoring.decision_order) -----------------------------------------------------


def explanation_order(feasible: Sequence[Any], totals: Sequence[Any]) -> list[int] | None:
    """Rows of nodes stored by name, in the engine's order: feasible rows by descending total,
    then the others. None when a feasible node's total is not a whole number."""
    ranked = [k for k, flag in enumerate(feasible) if flag is True]
    if any(type(totals[k]) is not int for k in ranked):
        return None
    ranked.sort(key=lambda k: -totals[k])
    return ranked + [k for k, flag in enumerate(feasible) if flag is not True]


def by_name(explanation: Mapping[str, Any]) -> dict[str, Any] | None:
    """The explanation with its nodes sorted by name, when :func:`explanation_order` gives
    back exactly its order; else None."""
    nodes = explanation.get(NODES)
    if not isinstance(nodes, list) or not all(isinstance(n, dict) for n in nodes):
        return None
    names = [n.get("name") for n in nodes]
    if not all(isinstance(name, str) for name in names):
        return None
    stored = sorted(nodes, key=lambda n: str(n["name"]))
    order = explanation_order(
        [n.get("feasible") for n in stored], [n.get("totalScore") for n in stored]
    )
    if order is None or any(
        stored[row] is not node for row, node in zip(order, nodes, strict=True)
    ):
        return None
    return {key: stored if key == NODES else value for key, value in explanation.items()}


# -- columns: what writing and reading share (scoring.columnar.format) ---------------------------

IntArray = npt.NDArray[np.int64]
Meta = dict[str, Any]

FORMAT = 1
NULL, FALSE, TRUE, INT, FLOAT, STR, LIST, DICT = range(8)
SAFE = 2**62
HOLE = "\x00"
PADDED = "\x01"
PAD_BASE = 0x40


class ColumnarError(ValueError):
    """A value that cannot be stored (not JSON), or bytes that are not packed columns."""


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def type_code(value: Any, path: str) -> int:
    if value is None:
        return NULL
    if value is True:
        return TRUE
    if value is False:
        return FALSE
    kind = type(value)
    if kind is int:
        return INT
    if kind is str:
        return STR
    if kind is float:
        return FLOAT
    if kind is dict:
        return DICT
    if kind is list:
        return LIST
    if isinstance(value, bool | np.bool_):
        return TRUE if value else FALSE
    if isinstance(value, int | np.integer):
        return INT
    if isinstance(value, float | np.floating):
        return FLOAT
    if isinstance(value, str):
        return STR
    if isinstance(value, dict):
        return DICT
    if isinstance(value, list | tuple):
        return LIST
    raise ColumnarError(f"{path}: a {kind.__name__} is not a JSON value")


# -- derived integer arrays (scoring.columnar.predict) -------------------------------------------

MIN_ROWS = 32
MIN_DISTINCT = 8
SAMPLE = 64
LIMIT = 2**40
MAX_FACTOR = 10**6


def linear_shape(array: IntArray) -> tuple[bytes, int, int] | None:
    first = int(array[0])
    moved = array - first
    step = int(np.gcd.reduce(np.abs(moved)))
    if step == 0:
        return None
    if moved[np.flatnonzero(moved)[0]] < 0:
        step = -step
    return (moved // step).tobytes(), first, step


def varied(array: IntArray) -> bool:
    return len(np.unique(array[:SAMPLE])) >= MIN_DISTINCT


def predict(form: str, a: IntArray, b: IntArray, factor: int) -> IntArray:
    top = a if form == "ratio" else b - a
    safe = np.where(b == 0, 1, b)
    predicted: IntArray = np.where(b == 0, 0, (top * factor) // safe)
    return predicted


def entropy(array: IntArray) -> float:
    _, counts = np.unique(array, return_counts=True)
    shares = counts / len(array)
    return float(-(counts * np.log2(shares)).sum())


def predictions(
    array: IntArray,
    usable: list[tuple[int, IntArray]],
    constants: list[tuple[int, IntArray]],
    factors: tuple[int, ...],
) -> Iterator[tuple[str, int, int, int | None, int]]:
    sample = array[:SAMPLE]
    rows = np.stack([other[:SAMPLE] for _, other in usable])
    added = [None, *range(len(constants))]
    for factor in factors:
        if factor > MAX_FACTOR:
            continue
        for k in added:
            tops = rows if k is None else rows + constants[k][1][:SAMPLE]
            for form in ("ratio", "rest"):
                numerators = tops[:, None, :] if form == "ratio" else rows[None] - tops[:, None]
                safe = np.where(rows == 0, 1, rows)[None]
                guess = np.where(rows[None] == 0, 0, (numerators * factor) // safe)
                close = np.abs(guess - sample).max(axis=2) <= 1
                for a, b in zip(*np.nonzero(close), strict=True):
                    if a != b:
                        yield form, int(a), int(b), k, factor


# -- writing columns (scoring.columnar.write, rows given as Python values) -----------------------

_DTYPES = ("u1", "i1", "u2", "i2", "u4", "i4", "i8")
_FEW_DISTINCT = 256
_MAX_SCALE = 9
_EXACT_FLOAT = 2.0**53
LIST_POSITIONS = 64
_TEMPLATE_MIN_DISTINCT = 16
_NUMBER = re.compile(r"[0-9]{1,18}")
_BY_TYPE = {type(None): NULL, int: INT, float: FLOAT, str: STR, list: LIST, dict: DICT}


def pack_columns(values: Sequence[Any]) -> bytes:
    """``values`` as packed columns (uncompressed)."""
    writer = _Writer()
    with no_cyclic_gc():
        root = writer.column(values, "$")
    header = {
        "format": FORMAT,
        "strings": list(writer.strings),
        "buffers": [[dtype, len(data)] for dtype, data in writer.buffers],
        "arrays": writer.arrays,
        "root": root,
    }
    head = json.dumps(header, separators=(",", ":")).encode("ascii")
    return b"".join([struct.pack("<I", len(head)), head, *(data for _, data in writer.buffers)])


class _Writer:
    def __init__(self) -> None:
        self.strings: dict[str, int] = {}
        self.buffers: list[tuple[str, bytes]] = []
        self.arrays: list[Meta] = []
        self.seen: dict[bytes, tuple[int, int, int]] = {}
        self.scope: list[tuple[int, IntArray]] | None = None

    def buffer(self, array: npt.NDArray[Any]) -> list[Any]:
        dtype = array.dtype.str
        if array.dtype.kind in "iu" and array.dtype.itemsize > 1:
            data = np.ascontiguousarray(array).view(np.uint8).reshape(-1, array.dtype.itemsize)
            self.buffers.append((dtype, data.T.tobytes()))
        else:
            self.buffers.append((dtype, array.tobytes()))
        return [len(self.buffers) - 1, dtype]

    def column(
        self, values: Sequence[Any], path: str, scope: list[tuple[int, IntArray]] | None = None
    ) -> Meta:
        fast: list[Any] = list(map(_BY_TYPE.get, map(type, values)))
        codes: list[int] = fast
        if None in fast:
            codes = [
                type_code(v, path) if c is None else c for v, c in zip(values, fast, strict=True)
            ]
        meta: Meta = {"n": len(values)}
        present = sorted(set(codes))
        if len(present) == 1:
            meta["type"] = present[0]
        else:
            meta["types"] = self.buffer(np.array(codes, dtype=np.uint8))
        for code in present:
            encode_part = self._ENCODERS.get(code)
            if encode_part is not None:
                chosen = (
                    values
                    if len(present) == 1
                    else [v for v, c in zip(values, codes, strict=True) if c == code]
                )
                outer, self.scope = self.scope, scope if len(present) == 1 else None
                try:
                    meta[str(code)] = encode_part(self, chosen, path)
                finally:
                    self.scope = outer
        return meta

    def ints(self, values: Sequence[Any], path: str) -> Meta:
        try:
            array = np.array([int(v) for v in values], np.int64)
        except OverflowError:
            return {"decimal": self.ints_of(self.string_ids(str(int(v)) for v in values))}
        scope = self.scope
        number = self.ints_of(array, scope, (100,))
        if scope is not None:
            scope.append((number, array))
        return {"ints": number}

    def ints_of(
        self,
        array: npt.NDArray[Any],
        scope: list[tuple[int, IntArray]] | None = None,
        factors: tuple[int, ...] = (),
    ) -> int:
        array = array.astype(np.int64)
        meta: Meta | None = None
        shape = linear_shape(array) if len(array) and np.abs(array).max() < SAFE else None
        if shape is not None:
            meta = self.like(*shape)
        if meta is None and scope and len(array) >= MIN_ROWS and varied(array):
            meta = self.predicted(array, scope, factors)
        if meta is None:
            distinct = _distinct(array) if len(array) else array
            if len(distinct) <= _FEW_DISTINCT and 2 * len(distinct) < len(array):
                codes = np.searchsorted(distinct, array)
                meta = {"values": self.steps(distinct), "codes": self.buffer(_narrow(codes))}
            else:
                meta = self.steps(array)
        self.arrays.append(meta)
        number = len(self.arrays) - 1
        if shape is not None and "like" not in meta:
            key, first, step = shape
            self.seen[key] = (number, first, step)
        return number

    def like(self, key: bytes, first: int, step: int) -> Meta | None:
        earlier = self.seen.get(key)
        if earlier is None:
            return None
        number, base, divisor = earlier
        return {"like": number, "from": base, "div": divisor, "times": step, "plus": first}

    def predicted(
        self, array: IntArray, scope: list[tuple[int, IntArray]], factors: tuple[int, ...]
    ) -> Meta | None:
        usable = [
            (number, other)
            for number, other in scope
            if len(other) == len(array) and np.abs(other).max() < LIMIT
        ]
        by_value = {int(a[0]): (n, a) for n, a in usable if a[0] == a.min() == a.max() != 0}
        constants = list(by_value.values())
        if not factors or len(usable) < 2:
            return None
        budget = entropy(array) / 4
        best: tuple[float, Meta] | None = None
        for form, a, b, k, factor in predictions(array, usable, constants, factors):
            numerator = usable[a][1] if k is None else usable[a][1] + constants[k][1]
            residual = array - predict(form, numerator, usable[b][1], factor)
            cost = entropy(residual)
            if cost <= budget and (best is None or cost < best[0]):
                meta: Meta = {
                    "predict": form,
                    "a": usable[a][0],
                    "b": usable[b][0],
                    "times": factor,
                    "residual": residual,
                }
                if k is not None:
                    meta["k"] = constants[k][0]
                best = (cost, meta)
        if best is None:
            return None
        meta = best[1]
        meta["residual"] = self.ints_of(meta["residual"])
        return meta

    def steps(self, array: IntArray) -> Meta:
        if len(array) == 0 or np.abs(array).max() >= SAFE:
            return {"base": 0, "step": 1, "plain": self.buffer(_narrow(array))}
        base = int(array.min())
        offsets = array - base
        step = int(np.gcd.reduce(offsets)) or 1
        return {"base": base, "step": step, "plain": self.buffer(_narrow(offsets // step))}

    def floats(self, values: Sequence[Any], path: str) -> Meta:
        array = np.array([float(v) for v in values], dtype=np.float64)
        scale = _decimal_scale(array)
        if scale is None:
            return {"float64": self.buffer(array)}
        scaled = np.round(array * 10.0**scale).astype(np.int64)
        factors = (10**scale, 100 * 10**scale)
        return {"scale": scale, "ints": self.ints_of(scaled, self.scope, factors)}

    def strs(self, values: Sequence[Any], path: str) -> Meta:
        texts = [str(v) for v in values]
        distinct = set(texts)
        if len(distinct) > _TEMPLATE_MIN_DISTINCT and not any(
            HOLE in s or PADDED in s for s in distinct
        ):
            templates = [_shape(s)[0] for s in texts]
            if 2 * len(set(templates)) <= len(distinct):
                numbers = [list(_shape(s)[1]) for s in texts]
                return {
                    "templates": self.ints_of(self.string_ids(templates)),
                    "numbers": self.column(numbers, f"{path}#"),
                }
        return {"ids": self.ints_of(self.string_ids(texts))}

    def string_ids(self, texts: Iterator[str] | Sequence[str]) -> npt.NDArray[np.int64]:
        table = self.strings
        return np.array([table.setdefault(s, len(table)) for s in texts], dtype=np.int64)

    def lists(self, values: Sequence[Any], path: str) -> Meta:
        lengths = np.array([len(v) for v in values], dtype=np.int64)
        longest = int(lengths.max()) if len(values) else 0
        meta: Meta = {"lengths": self.ints_of(lengths)}
        if 1 < longest <= LIST_POSITIONS and len(values) > 1:
            meta["positions"] = [
                self.column([v[j] for v in values if len(v) > j], f"{path}[{j}]")
                for j in range(longest)
            ]
        else:
            meta["items"] = self.column([item for v in values for item in v], f"{path}[]")
        return meta

    def dicts(self, values: Sequence[Any], path: str) -> Meta:
        every_keys = list(map(tuple, values))
        shapes: dict[tuple[str, ...], int] = {}
        for keys in dict.fromkeys(every_keys):
            shapes[keys] = len(shapes)
        children: dict[str, list[Any]] = {}
        if len(shapes) == 1:
            [keys] = shapes
            columns = zip(*(value.values() for value in values), strict=True) if keys else ()
            children = dict(zip(keys, map(list, columns), strict=True))
        else:
            union = dict.fromkeys(key for keys in shapes for key in keys)
            children = {key: [v[key] for v in values if key in v] for key in union}
        codes = None
        if len(shapes) > 1:
            codes = np.fromiter(map(shapes.__getitem__, every_keys), np.int64, len(every_keys))
        return self.dict_meta(list(shapes), codes, children, path)

    def dict_meta(
        self,
        shapes: list[tuple[str, ...]],
        codes: IntArray | None,
        children: dict[str, list[Any]],
        path: str,
    ) -> Meta:
        for keys in shapes:
            bad = next((k for k in keys if not isinstance(k, str)), None)
            if bad is not None:
                raise ColumnarError(f"{path}: key {bad!r} is not a string")
        aligned = self.scope if self.scope is not None else []
        everywhere = {key for key in children if all(key in keys for keys in shapes)}
        meta: Meta = {
            "shapes": [list(keys) for keys in shapes],
            "fields": [
                [key, self.column(items, f"{path}.{key}", aligned if key in everywhere else None)]
                for key, items in children.items()
            ],
        }
        if codes is not None:
            meta["shape"] = self.ints_of(codes)
        return meta

    _ENCODERS: dict[int, Callable[[_Writer, Sequence[Any], str], Meta]] = {
        INT: ints,
        FLOAT: floats,
        STR: strs,
        LIST: lists,
        DICT: dicts,
    }


@functools.lru_cache(maxsize=1 << 16)
def _shape(text: str) -> tuple[str, tuple[int, ...]]:
    return _NUMBER.sub(_hole, text), tuple(int(n) for n in _NUMBER.findall(text))


def _distinct(array: IntArray) -> IntArray:
    low, high = int(array.min()), int(array.max())
    if high - low > 4 * len(array) + 1024:
        return np.unique(array)
    present: IntArray = np.flatnonzero(np.bincount(array - low)) + low
    return present


def _hole(number: re.Match[str]) -> str:
    digits = number.group()
    if len(digits) == 1 or digits[0] != "0":
        return HOLE
    return PADDED + chr(PAD_BASE + len(digits))


def _narrow(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    if len(array) == 0:
        return array.astype(np.uint8)
    low, high = int(array.min()), int(array.max())
    for dtype in _DTYPES:
        info = np.iinfo(dtype)
        if info.min <= low and high <= info.max:
            return array.astype(dtype)
    return array.astype(np.int64)


def _decimal_scale(array: npt.NDArray[np.float64]) -> int | None:
    if not np.isfinite(array).all():
        return None
    for scale in range(_MAX_SCALE + 1):
        factor = 10.0**scale
        scaled = np.round(array * factor)
        if (np.abs(scaled) >= _EXACT_FLOAT).any():
            return None
        back = scaled.astype(np.int64).astype(np.float64) / factor
        if np.array_equal(back, array) and np.array_equal(np.signbit(back), np.signbit(array)):
            return scale
    return None


# -- reading columns (scoring.columnar.read, whole rows) -----------------------------------------


def unpack_columns(data: bytes) -> Column:
    """The root column of :func:`pack_columns`'s bytes."""
    try:
        (size,) = struct.unpack_from("<I", data)
        header = json.loads(bytes(data[4 : 4 + size]))
        if header.get("format") != FORMAT:
            raise ColumnarError(f"unknown columns format {header.get('format')!r}")
        buffers = []
        offset = 4 + size
        for dtype, length in header["buffers"]:
            buffers.append(_buffer(data, np.dtype(dtype), offset, length))
            offset += length
        if offset != len(data):
            raise ColumnarError("columns: trailing or missing bytes")
        return Column(header["root"], _Store(header["strings"], buffers, header["arrays"]))
    except (struct.error, ValueError, KeyError, TypeError) as exc:
        if isinstance(exc, ColumnarError):
            raise
        raise ColumnarError(f"not packed columns: {exc}") from None


def _buffer(data: bytes, dtype: np.dtype[Any], offset: int, length: int) -> npt.NDArray[Any]:
    if length % dtype.itemsize:
        raise ColumnarError("columns: a buffer does not hold whole values")
    count = length // dtype.itemsize
    if dtype.kind in "iu" and dtype.itemsize > 1:
        planes = np.frombuffer(data, np.uint8, count=length, offset=offset)
        return planes.reshape(dtype.itemsize, count).T.copy().view(dtype).reshape(count)
    return np.frombuffer(data, dtype, count=count, offset=offset)


class _Store:
    def __init__(self, strings: list[str], buffers: list[npt.NDArray[Any]], arrays: list[Meta]):
        self.strings = strings
        self.buffers = buffers
        self.arrays = arrays
        self._ints: dict[int, IntArray] = {}

    def ints(self, number: int) -> IntArray:
        array = self._ints.get(number)
        if array is None:
            meta = self.arrays[number]
            if "like" in meta:
                if not 0 <= meta["like"] < number:
                    raise ColumnarError(f"array {number} refers to a later array")
                moved = (self.ints(meta["like"]) - meta["from"]) // meta["div"]
                array = moved * meta["times"] + meta["plus"]
            elif "predict" in meta:
                array = self.prediction(number, meta)
            elif "codes" in meta:
                array = self.steps(meta["values"])[self.buffers[meta["codes"][0]]]
            else:
                array = self.steps(meta)
            self._ints[number] = array
        return array

    def prediction(self, number: int, meta: Meta) -> IntArray:
        operands = [meta["a"], meta["b"], meta["residual"], meta.get("k", 0)]
        if not all(0 <= n < number for n in operands):
            raise ColumnarError(f"array {number} refers to a later array")
        top = self.ints(meta["a"])
        if "k" in meta:
            top = top + self.ints(meta["k"])
        guess = predict(meta["predict"], top, self.ints(meta["b"]), meta["times"])
        return guess + self.ints(meta["residual"])

    def steps(self, meta: Meta) -> IntArray:
        offsets: IntArray = self.buffers[meta["plain"][0]].astype(np.int64)
        values: IntArray = offsets * meta["step"] + meta["base"]
        return values


def _rank(mask: npt.NDArray[np.bool_]) -> IntArray:
    ranks: IntArray = np.cumsum(mask, dtype=np.int64) - mask
    return ranks


def _rows(rows: Sequence[int] | npt.NDArray[Any] | None, count: int) -> IntArray:
    if rows is None:
        return np.arange(count, dtype=np.int64)
    array = np.asarray(rows, dtype=np.int64)
    if len(array) and (array.min() < 0 or array.max() >= count):
        raise IndexError(f"rows out of range 0..{count - 1}")
    return array


class Column:
    """A packed column: ``take(rows)`` rebuilds those rows' values, in the order asked."""

    def __init__(self, meta: Meta, store: _Store) -> None:
        self.meta = meta
        self.store = store
        self._types: npt.NDArray[np.uint8] | None = None
        self._parts: dict[int, _Part] = {}
        self._ranks: dict[int, IntArray] = {}

    def __len__(self) -> int:
        count: int = self.meta["n"]
        return count

    def take(self, rows: Sequence[int] | npt.NDArray[Any] | None = None) -> list[Any]:
        with no_cyclic_gc():
            return self._take(rows)

    def _take(self, rows: Sequence[int] | npt.NDArray[Any] | None) -> list[Any]:
        wanted = _rows(rows, len(self))
        if "type" in self.meta:
            return self._part(self.meta["type"]).take(wanted)
        types = self.types()[wanted]
        out: list[Any] = [None] * len(wanted)
        for code in np.unique(types).tolist():
            where = np.flatnonzero(types == code)
            values = self._part(code).take(self.ranks(code)[wanted[where]])
            for position, value in zip(where.tolist(), values, strict=True):
                out[position] = value
        return out

    def types(self) -> npt.NDArray[np.uint8]:
        if self._types is None:
            if "type" in self.meta:
                self._types = np.full(len(self), self.meta["type"], dtype=np.uint8)
            else:
                self._types = self.store.buffers[self.meta["types"][0]]
        return self._types

    def ranks(self, code: int) -> IntArray:
        if code not in self._ranks:
            self._ranks[code] = _rank(self.types() == code)
        return self._ranks[code]

    def _part(self, code: int) -> _Part:
        part = self._parts.get(code)
        if part is None:
            part = self._parts[code] = _PARTS[code](self.meta.get(str(code)), self.store)
        return part


class _Part:
    def __init__(self, meta: Meta | None, store: _Store) -> None:
        self.meta: Meta = meta or {}
        self.store = store

    def take(self, rows: IntArray) -> list[Any]:
        raise NotImplementedError


def _constant(value: Any) -> type[_Part]:
    class Constant(_Part):
        def take(self, rows: IntArray) -> list[Any]:
            return [value] * len(rows)

    return Constant


class _Ints(_Part):
    def __init__(self, meta: Meta | None, store: _Store) -> None:
        super().__init__(meta, store)
        if "decimal" in self.meta:
            self.values = store.ints(self.meta["decimal"])
        else:
            self.values = store.ints(self.meta["ints"])

    def take(self, rows: IntArray) -> list[Any]:
        if "decimal" in self.meta:
            strings = self.store.strings
            return [int(strings[i]) for i in self.values[rows].tolist()]
        result: list[Any] = self.values[rows].tolist()
        return result


class _Floats(_Part):
    def __init__(self, meta: Meta | None, store: _Store) -> None:
        super().__init__(meta, store)
        if "float64" in self.meta:
            self.values = store.buffers[self.meta["float64"][0]]
        else:
            factor = 10.0 ** self.meta["scale"]
            self.values = store.ints(self.meta["ints"]).astype(np.float64) / factor

    def take(self, rows: IntArray) -> list[Any]:
        result: list[Any] = self.values[rows].tolist()
        return result


class _Strs(_Part):
    def __init__(self, meta: Meta | None, store: _Store) -> None:
        super().__init__(meta, store)
        self.templated = "templates" in self.meta
        self.ids = store.ints(self.meta["templates"] if self.templated else self.meta["ids"])
        self.numbers = Column(self.meta["numbers"], store) if self.templated else None

    def take(self, rows: IntArray) -> list[Any]:
        strings = self.store.strings
        texts = [strings[i] for i in self.ids[rows].tolist()]
        if self.numbers is None:
            return texts
        return [
            _fill(template, numbers)
            for template, numbers in zip(texts, self.numbers.take(rows), strict=True)
        ]


_HOLES = re.compile(f"({HOLE}|{PADDED}.)", re.DOTALL)


def _fill(template: str, numbers: list[int]) -> str:
    if not numbers:
        return template
    parts = _HOLES.split(template)
    out = [parts[0]]
    for number, hole, part in zip(numbers, parts[1::2], parts[2::2], strict=True):
        digits = str(number)
        out.append(digits if hole == HOLE else digits.zfill(ord(hole[1]) - PAD_BASE))
        out.append(part)
    return "".join(out)


class _Lists(_Part):
    def __init__(self, meta: Meta | None, store: _Store) -> None:
        super().__init__(meta, store)
        self.lengths = store.ints(self.meta["lengths"])
        self.items = Column(self.meta["items"], store) if "items" in self.meta else None
        self.positions = [Column(m, store) for m in self.meta.get("positions", ())]
        self._position_ranks: dict[int, IntArray] = {}

    def take(self, rows: IntArray) -> list[Any]:
        lengths = self.lengths[rows]
        if self.items is None:
            return self._by_position(rows, lengths)
        firsts = np.cumsum(self.lengths) - self.lengths
        wanted = np.cumsum(lengths) - lengths
        offsets = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(wanted, lengths)
        values = self.items.take(np.repeat(firsts[rows], lengths) + offsets)
        out = []
        start = 0
        for length in lengths.tolist():
            out.append(values[start : start + length])
            start += length
        return out

    def _by_position(self, rows: IntArray, lengths: IntArray) -> list[Any]:
        out: list[list[Any]] = [[] for _ in range(len(rows))]
        for j in range(int(lengths.max()) if len(rows) else 0):
            where = np.flatnonzero(lengths > j)
            values = self.positions[j].take(self.position_ranks(j)[rows[where]])
            for position, value in zip(where.tolist(), values, strict=True):
                out[position].append(value)
        return out

    def position_ranks(self, j: int) -> IntArray:
        if j not in self._position_ranks:
            self._position_ranks[j] = _rank(self.lengths > j)
        return self._position_ranks[j]


class _Dicts(_Part):
    def __init__(self, meta: Meta | None, store: _Store) -> None:
        super().__init__(meta, store)
        self.shapes: list[list[str]] = self.meta["shapes"]
        count = len(self.shapes)
        self.codes = store.ints(self.meta["shape"]) if count > 1 else None
        self.children = {key: Column(child, store) for key, child in self.meta["fields"]}
        self._ranks: dict[str, IntArray] = {}

    def key_ranks(self, key: str) -> IntArray | None:
        if self.codes is None:
            return None
        if key not in self._ranks:
            has = np.array([key in shape for shape in self.shapes])
            self._ranks[key] = _rank(has[self.codes])
        return self._ranks[key]

    def _values(self, key: str, rows: IntArray) -> list[Any]:
        ranks = self.key_ranks(key)
        return self.children[key].take(rows if ranks is None else ranks[rows])

    def take(self, rows: IntArray) -> list[Any]:
        if self.codes is None or len(np.unique(self.codes[rows])) <= 1:
            keys = self.shapes[0 if self.codes is None or not len(rows) else self.codes[rows[0]]]
            if not keys:
                return [{} for _ in range(len(rows))]
            columns = [self._values(key, rows) for key in keys]
            return [dict(zip(keys, values, strict=True)) for values in zip(*columns, strict=True)]
        codes = self.codes[rows]
        iterators = {}
        for key in self.children:
            has = np.array([key in shape for shape in self.shapes])[codes]
            if has.any():
                iterators[key] = iter(self._values(key, rows[has]))
        return [{key: next(iterators[key]) for key in self.shapes[code]} for code in codes.tolist()]


_PARTS: dict[int, type[_Part]] = {
    NULL: _constant(None),
    FALSE: _constant(False),
    TRUE: _constant(True),
    INT: _Ints,
    FLOAT: _Floats,
    STR: _Strs,
    LIST: _Lists,
    DICT: _Dicts,
}
