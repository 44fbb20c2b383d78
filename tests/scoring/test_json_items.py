"""A JSON List's items are read one at a time (``scoring.json_items``) and give what reading
the file whole gives (``scoring.loading``)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from scoring.errors import InputError
from scoring.json_items import NotAList, json_items
from scoring.loading import iter_objects, load_objects

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}


def kubectl_list(*items: object) -> str:
    """As ``kubectl get -o json`` writes it: indented, ``kind`` after ``items``."""
    return json.dumps(
        {"apiVersion": "v1", "items": list(items), "kind": "List", "metadata": {}}, indent=4
    )


@pytest.mark.parametrize(
    "text",
    [
        kubectl_list(POD, NODE),
        json.dumps([POD, NODE]),
        f" \n{json.dumps({'kind': 'PodList', 'items': [POD, NODE]})}\n",
        json.dumps({"items": [{"kind": "List", "items": [POD]}, NODE], "kind": "List"}),
        json.dumps({"kind": "List", "items": [], "apiVersion": "v1"}),
        "[]",
        json.dumps({"kind": "ConfigMap", "items": [POD]}),  # not a List: one object
        json.dumps(POD),
        "kind: List\nitems:\n- kind: Pod\n  metadata: {name: a}\n",  # YAML
        '{"kind": "List", "items": [{"kind": "Pod"}], "items": []}',  # the last key counts
    ],
)
def test_streaming_reads_what_reading_whole_reads(tmp_path: Path, text: str) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(text)
    assert list(iter_objects([str(path)])) == load_objects([str(path)])


def test_items_are_decoded_lazily_and_the_first_pass_checks_the_whole_text() -> None:
    items = json_items(kubectl_list(POD, NODE))
    assert next(items) == POD
    assert next(items) == NODE
    with pytest.raises(json.JSONDecodeError):
        json_items('{"kind": "List", "items": [{}, {]}')  # before any item is given
    with pytest.raises(json.JSONDecodeError):
        json_items("[{}] trailing")
    with pytest.raises(NotAList):
        json_items(json.dumps({"kind": "Pod", "metadata": {}}))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"kind": "List", "items": [{"kind": "Pod"}', "not valid JSON or YAML"),
        ("[1, 2]", "expected Kubernetes objects, found int"),
        ("[" * 5000 + "]" * 5000, "nested too deeply"),
    ],
)
def test_bad_files_are_reported_as_before(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        list(iter_objects([str(path)]))


@pytest.mark.parametrize("chunk", [1, 3, 7, 64])
def test_a_file_read_in_small_chunks_reads_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """Chunk ends fall inside strings, numbers, keys and white space."""
    monkeypatch.setattr("scoring.json_items.CHUNK", chunk)
    numbers = {"apiVersion": "v1", "kind": "Pod", "spec": {"priority": 1234567890123, "f": 1.5e3}}
    for text in (
        kubectl_list(POD, numbers, NODE),
        json.dumps([numbers, POD]),
        '{"kind": "List", "items": [{"kind": "Pod"}], "metadata": {"x": 123456789}}',
    ):
        path = tmp_path / "cluster.json"
        path.write_text(text)
        assert list(iter_objects([str(path)])) == load_objects([str(path)])


def test_standard_input_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"kind": "Pod", "metadata": {}})))
    assert list(iter_objects(["-"])) == [{"kind": "Pod", "metadata": {}}]
    monkeypatch.setattr("sys.stdin", io.StringIO(kubectl_list(POD)))
    assert list(iter_objects(["-"])) == [POD]
