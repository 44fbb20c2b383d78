"""JSON values stored column by column: compact, lossless, and readable a few rows at a time.

A list of similar records (a decision's 5,000 nodes) repeats the same keys and mostly the same
values thousands of times. Stored as columns, one typed array per path, it compresses to a small
fraction of its JSON. The layout is a simplified Dremel:

- a column is a list of values; it records each value's JSON type (one code when all agree);
- integers go to one array of the smallest dtype that holds them, as ``base + step * value``
  (distinct values plus codes when there are few); integers beyond 64 bits go as decimal text.
  An integer array that is an earlier one times a factor plus a constant refers to it, and one
  that a ratio of two row-aligned arrays predicts (a percentage of allocatable) stores only
  what the prediction misses;
- floats go as integers with a decimal scale when every one is a short decimal (``0.0126``),
  else as float64;
- strings are indices into one table shared by every column; a column of many distinct strings
  that differ only in their numbers ("cpu 12% (5% measured …)") stores each string's template
  and its numbers instead;
- lists store their lengths and their items: short lists one column per position (every
  list's first item, every list's second item, …, so a node's per-plugin entries form one
  column per plugin), long lists one column of every item in order;
- dicts store their key sequence (a shape, which keeps the key order) and one child column per
  key.

:func:`pack` writes the columns as one byte string; :func:`unpack` reads it back as a
:class:`Column` whose :meth:`Column.take` rebuilds any rows without building the others.
Decoded values equal the packed ones (``==``, key order included); tuples are stored as lists,
as JSON would.
"""

from scoring.columnar.format import ColumnarError
from scoring.columnar.read import Column, unpack
from scoring.columnar.write import pack

__all__ = ["Column", "ColumnarError", "pack", "unpack"]
