"""The invented todo-api service's tests (pytest), generated per resource like the code they test
(xshare/demo/todo_api.py); data for the demo corpus, never run."""

from __future__ import annotations

import json
from datetime import date, timedelta

from xshare.demo.todo_api import HOLIDAYS, RESOURCES


def _business(start: date, days: int) -> date:
    while days > 0:
        start += timedelta(days=1)
        days -= start.weekday() < 5 and start not in HOLIDAYS
    return start


def _label(days: int) -> str:
    if days in (0, 1):
        return ("today", "tomorrow")[days]
    return f"{-days} day{'s' * (days != -1)} late" if days < 0 else f"in {days} days" if days <= 14 else "iso"


def _bad_values(fields) -> list[str]:
    """Request values that break each field's rule (a bad day is a parse error, not a 422)."""
    out = []
    for name, _, _, rule in fields:
        kind, *arg = rule.split() or [""]
        n = [int(a) for a in arg if a.isdigit()]
        bad = {"text": ['""', f'"x" * {n and n[0] + 1}'], "max": [f'"x" * {n and n[0] + 1}'],
               "range": [f"{n and n[0] - 1}", f"{n and n[-1] + 1}"], "choice": ['"chartreuse"'], "ref": ["0"]}
        out += [f'{{"{name}": {b}}}' for b in bad.get(kind, [])]
    return out


def py_api_tests(cls: str, table: str, one: str, doc: str, fields, example) -> str:
    flag = next(n for n, a, *_ in fields if a == "bool")
    bad = "".join(f"        {b},\n" for b in _bad_values(fields))
    return f'''def test_create_and_get_{one}():
    created = client.post("/{table}", json=NEW["{table}"])
    assert created.status_code == 201
    body = created.json()
    assert client.get(f"/{table}/{{body['id']}}").json() == body


def test_new_{one}_is_listed():
    made = client.post("/{table}", json=NEW["{table}"]).json()
    assert made in client.get("/{table}", params={{"limit": 1000}}).json()


def test_update_{one}():
    made = client.post("/{table}", json=NEW["{table}"]).json()
    changed = client.patch(f"/{table}/{{made['id']}}", json={{"{flag}": True}})
    assert changed.status_code == 200 and changed.json()["{flag}"] is True
    listed = client.get("/{table}", params={{"{flag}": True, "limit": 1000}}).json()
    assert made["id"] in [row["id"] for row in listed]


def test_delete_{one}():
    made = client.post("/{table}", json=NEW["{table}"]).json()
    assert client.delete(f"/{table}/{{made['id']}}").status_code == 204
    assert client.get(f"/{table}/{{made['id']}}").status_code == 404


def test_missing_{one}_is_404():
    assert client.get("/{table}/99999").status_code == 404
    assert client.patch("/{table}/99999", json={{}}).status_code == 404
    assert client.delete("/{table}/99999").json() == {{"detail": "no {one} with id 99999"}}


@pytest.mark.parametrize(
    "change",
    [
{bad}    ],
)
def test_invalid_{one}_is_422(change):
    response = client.post("/{table}", json={{**NEW["{table}"], **change}})
    assert response.status_code == 422
    assert response.json()["field"] in change


'''


def py_store_tests(cls: str, table: str, one: str, doc: str, fields, example) -> str:
    field, value = _bad_values(fields)[0][2:-1].split('": ')
    bad = "{" + ", ".join(f'"{k}": {value if k == field else json.dumps(v)}' for k, v in example.items()) + "}"
    return f'''def test_{table}_survive_a_reload(store):
    made = store.add_{one}({json.dumps(example)})
    assert Store(str(store.path)).get_{one}(made.id) == made


def test_{one}_ids_are_never_reused(store):
    first = store.add_{one}({json.dumps(example)})
    store.delete_{one}(first.id)
    assert store.add_{one}({json.dumps(example)}).id == first.id + 1


def test_unknown_{one}_raises_not_found(store):
    with pytest.raises(NotFound):
        store.update_{one}(404, {{}})


def test_invalid_{one}_is_not_stored(store):
    with pytest.raises(ValidationError):
        store.add_{one}({bad})
    assert store.list_{table}() == []


'''


TODAY = date(2026, 11, 9)
PLAIN = [date(2026, 1 + i * 5 % 12, 1 + i * 11 % 28) for i in range(14)]
STAMPS = [(f"{d}T{7 + i % 12:02d}:{i * 13 % 60:02d}:00{'Z' if i % 2 else '+00:00'}", d) for i, d in enumerate(PLAIN)]


TEST_DATES = f'''from datetime import date

import pytest

from todo_api.dates import add_business_days, due_label, is_overdue, parse_due, week_bounds

TODAY = date(2026, 11, 9)  # a Monday


@pytest.mark.parametrize(
    ("value", "expected"),
    [
{"".join(f'        ("{d}", {d!r}),{chr(10)}' for d in PLAIN[:8])}{"".join(
    f'        ("{s}", {d!r}),{chr(10)}' for s, d in STAMPS[8:])}    ],
)
def test_days_and_utc_timestamps(value, expected):
    assert parse_due(value) == expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
{"".join(f'        ("{w}", {TODAY + timedelta(days=k)!r}),{chr(10)}' for w, k in
         [("today", 0), ("Tomorrow", 1), ("yesterday", -1), ("friday", 4), ("monday", 7), ("Sunday", 6)])}    ],
)
def test_relative_words(word, expected):
    assert parse_due(word, today=TODAY) == expected


@pytest.mark.parametrize(
    ("offset", "label"),
    [
{"".join(f'        ({k}, "{_label(k)}"),{chr(10)}' for k in (-9, -2, -1, 0, 1, 2, 6, 14) if _label(k) != "iso")}    ],
)
def test_due_label(offset, label):
    assert due_label(date.fromordinal(TODAY.toordinal() + offset), TODAY) == label


def test_far_days_are_labelled_with_the_day():
    assert due_label(date(2026, 12, 24), TODAY) == "2026-12-24"
    assert due_label(None, TODAY) == "no due date"


@pytest.mark.parametrize(
    ("start", "days", "expected"),
    [
{"".join(f"        ({s!r}, {n}, {_business(s, n)!r}),{chr(10)}" for s, n in
         [(date(2026, 11, 6), 1), (date(2026, 12, 23), 1), (date(2026, 12, 23), 3), (date(2026, 4, 2), 2),
          (date(2026, 5, 13), 5), (date(2026, 12, 30), 2), (date(2027, 3, 25), 3)])}    ],
)
def test_add_business_days(start, days, expected):
    assert add_business_days(start, days) == expected


def test_week_bounds():
    assert week_bounds(date(2026, 11, 12)) == (date(2026, 11, 9), date(2026, 11, 15))
    assert week_bounds(date(2027, 1, 1)) == (date(2026, 12, 28), date(2027, 1, 3))


def test_overdue():
    assert is_overdue(date(2026, 11, 1), date(2026, 11, 2))
    assert not is_overdue(None, date(2026, 11, 2))
'''.replace("datetime.date(", "date(")


API_TESTS_HEAD = '''import pytest
from fastapi.testclient import TestClient

from todo_api.app import app

client = TestClient(app)
NEW = {
''' + "".join(f'    "{r[1]}": {json.dumps(r[5])},\n' for r in RESOURCES) + '''}


def test_health():
    assert client.get("/health").json()["status"] == "ok"


def test_overdue_todos_carry_a_label():
    client.post("/todos", json={"title": "file taxes", "due": "2026-01-31"})
    overdue = client.get("/todos/overdue").json()
    assert overdue and all(todo["label"].endswith("late") for todo in overdue)


def test_search_ignores_case():
    client.post("/todos", json={"title": "Renew passport", "notes": "photo booth on Elm St"})
    found = client.get("/todos/search", params={"q": "ELM"}).json()
    assert [todo["title"] for todo in found] == ["Renew passport"]


'''


STORE_TESTS_HEAD = '''import json

import pytest

from todo_api.models import ValidationError
from todo_api.storage import NotFound, Store


@pytest.fixture
def store(tmp_path):
    return Store(str(tmp_path / "todos.json"))


def test_version_1_files_hold_a_bare_list_of_todos(tmp_path):
    path = tmp_path / "v1.json"
    path.write_text(json.dumps([{"id": 3, "title": "pay rent", "done": False, "due": None}]))
    store = Store(str(path))
    assert store.get_todo(3).title == "pay rent"
    assert store.add_todo({"title": "water plants"}).id == 4


def test_save_leaves_no_temporary_file(store, tmp_path):
    store.add_todo({"title": "review slides"})
    assert [p.name for p in tmp_path.iterdir()] == ["todos.json"]


def test_a_missing_field_is_a_validation_error(store):
    with pytest.raises(ValidationError) as error:
        store.add_comment({"todo_id": 1, "body": "no author"})
    assert error.value.field == "author"


'''
