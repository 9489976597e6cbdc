"""The invented todo-api service (FastAPI), generated from one table of resources.

Such code bases grow this way: the same model, storage, route, test and documentation shapes repeated per
resource around a hand-written core. Its tests are generated in xshare.demo.todo_api_tests;
xshare.demo.projects puts the files together (`service_files`) with the storage core and the small files.
"""

from __future__ import annotations

import json
from datetime import date

CHOICES = {"COLORS": ("#6b7280", "#ef4444", "#f59e0b", "#10b981", "#3b82f6", "#8b5cf6"),
           "CHANNELS": ("email", "push", "sms"), "ROLES": ("owner", "editor", "viewer")}
# class, table, row name, what it is, fields (name, annotation, default or None when required, rule), example
RESOURCES = (
    ("Todo", "todos", "todo", "Something to do, optionally due on a calendar day and filed in a list.", (
        ("title", "str", None, "text 200"), ("done", "bool", "False", ""), ("due", "date | None", "None", ""),
        ("priority", "int", "2", "range 1 3"), ("list_id", "int | None", "None", "ref"),
        ("notes", "str", '""', "max 2000")), {"title": "buy oat milk", "due": "2026-11-04", "priority": 1}),
    ("TodoList", "lists", "list", "A named, coloured list that todos are filed in.", (
        ("name", "str", None, "text 80"), ("color", "str", '"#6b7280"', "choice COLORS"),
        ("archived", "bool", "False", ""), ("position", "int", "0", "range 0 999"),
        ("member_id", "int | None", "None", "ref")), {"name": "groceries", "color": "#10b981"}),
    ("Comment", "comments", "comment", "A note someone left on a todo.", (
        ("todo_id", "int", None, "ref"), ("author", "str", None, "text 64"), ("body", "str", None, "text 4000"),
        ("pinned", "bool", "False", "")), {"todo_id": 1, "author": "dana", "body": "the one without sugar"}),
    ("Reminder", "reminders", "reminder", "A nudge about a todo, sent on a given day.", (
        ("todo_id", "int", None, "ref"), ("remind_on", "date", None, "day"),
        ("channel", "str", '"email"', "choice CHANNELS"), ("sent", "bool", "False", "")),
     {"todo_id": 1, "remind_on": "2026-11-03", "channel": "push"}),
    ("Member", "members", "member", "Someone in the workspace; lists belong to a member.", (
        ("name", "str", None, "text 80"), ("email", "str", None, "text 254"),
        ("role", "str", '"editor"', "choice ROLES"), ("away", "bool", "False", "")),
     {"name": "Dana Whitfield", "email": "dana@example.org", "role": "owner"}),
)
TYPES = {"str": "string", "bool": "boolean", "int": "integer", "date": "day", "int | None": "integer or null",
         "date | None": "day or null"}
HOLIDAYS = [date(2026, 1, 1), date(2026, 4, 3), date(2026, 4, 6), date(2026, 5, 1), date(2026, 5, 14),
            date(2026, 5, 25), date(2026, 10, 3), date(2026, 12, 24), date(2026, 12, 25), date(2026, 12, 26),
            date(2026, 12, 31), date(2027, 1, 1), date(2027, 3, 26), date(2027, 3, 29), date(2027, 5, 1)]


def _filters(fields) -> list[tuple[str, str]]:
    return [(n, "bool" if a == "bool" else "int") for n, a, _, r in fields if a == "bool" or r == "ref"]


def _checks(fields) -> list[str]:
    out = []
    for name, ann, _, rule in fields:
        kind, *arg = rule.split() or [""]
        v, fail = f"self.{name}", f'    raise ValidationError("{name}", '
        if kind == "text":
            out += [f"if not {v}.strip():", fail + '"must not be empty")']
        if kind in ("text", "max"):
            out += [f"if len({v}) > {arg[0]}:", fail + f'"must be at most {arg[0]} characters")']
        if kind == "range":
            out += [f"if not {arg[0]} <= {v} <= {arg[1]}:", fail + f'"must be between {arg[0]} and {arg[1]}")']
        if kind == "choice":
            out += [f"if {v} not in {arg[0]}:", fail + f'"must be one of " + ", ".join({arg[0]}))']
        if kind == "ref":
            out += [f"if {v} is not None and {v} < 1:" if "None" in ann else f"if {v} < 1:",
                    fail + '"must be a positive id")']
    return out


def _from(name: str, ann: str, default: str | None) -> str:
    get = f'raw["{name}"]' if default is None else f'raw.get("{name}"{"" if default == "None" else ", " + default})'
    if ann.startswith("date"):
        return f"parse_due({get})"
    if ann == "int | None" or (ann == "str" and default is None):
        return get
    return f"{ann}({get})"


def py_model(cls: str, table: str, one: str, doc: str, fields, _example) -> str:
    lines = ["@dataclass", f"class {cls}:", f'    """{doc}"""', "", "    id: int"]
    lines += [f"    {n}: {a}" + (f" = {d}" if d else "") for n, a, d, _ in fields]
    lines += ["", "    def validate(self) -> None:", '        """Raise ValidationError for the first bad field."""']
    lines += ["        " + c for c in _checks(fields)]
    out = {n: f"self.{n}.isoformat()" if a == "date" else f"self.{n} and self.{n}.isoformat()"
           for n, a, *_ in fields if a.startswith("date")}
    lines += ["", "    def to_dict(self) -> dict:", '        """JSON-ready: days as YYYY-MM-DD strings."""',
              "        return {", '            "id": self.id,']
    lines += [f'            "{n}": {out.get(n, "self." + n)},' for n, *_ in fields]
    lines += ["        }", "", "    @classmethod", f'    def from_dict(cls, raw: dict) -> "{cls}":',
              '        """Build from stored or request JSON; unknown keys are ignored."""', "        return cls(",
              '            id=int(raw["id"]),', *[f"            {n}={_from(n, a, d)}," for n, a, d, _ in fields],
              "        )", "", f'    def apply(self, changes: dict) -> "{cls}":',
              '        """A validated copy with `changes` applied; the id never changes."""',
              "        updated = type(self).from_dict({**self.to_dict(), **changes, \"id\": self.id})",
              "        updated.validate()", "        return updated", "", "", ""]
    return "\n".join(lines)


def py_store_methods(cls: str, table: str, one: str, doc: str, fields, _example) -> str:
    params = "".join(f", {n}: {a} | None = None" for n, a in _filters(fields))
    args = ", ".join(f"{n}={n}" for n, _ in _filters(fields))
    order = "soonest due first, undated last" if table == "todos" else "in id order"
    return f'''    # --- {table} {"-" * (90 - len(table))}

    def list_{table}(self{params}) -> list[{cls}]:
        """{table.capitalize()} matching the given values ({order}); None matches anything."""
        return self._select("{table}", {args})

    def get_{one}(self, {one}_id: int) -> {cls}:
        """The {one} with this id; raises NotFound."""
        return self._get("{table}", {one}_id)

    def add_{one}(self, payload: dict) -> {cls}:
        """Validate and store a new {one}; raises ValidationError."""
        return self._insert("{table}", payload)

    def update_{one}(self, {one}_id: int, changes: dict) -> {cls}:
        """Apply a partial update; raises NotFound or ValidationError."""
        return self._replace("{table}", self.get_{one}({one}_id).apply(changes))

    def delete_{one}(self, {one}_id: int) -> None:
        """Remove the {one}; raises NotFound."""
        self._delete("{table}", {one}_id)

'''


def py_routes(cls: str, table: str, one: str, doc: str, fields, _example) -> str:
    params = "".join(f"    {n}: {a} | None = None,\n" for n, a in _filters(fields))
    args = ", ".join(f"{n}={n}" for n, _ in _filters(fields))
    nested = "".join(f'''@app.get("/{n[:-3]}s/{{{n}}}/{table}")
def {table}_of_{n[:-3]}({n}: int) -> list[dict]:
    store.get_{n[:-3]}({n})  # 404 when the {n[:-3]} does not exist
    return [row.to_dict() for row in store.list_{table}({n}={n})]


''' for n, _, _, r in fields if r == "ref")
    return f'''# --- {table} {"-" * (108 - len(table))}


@app.get("/{table}")
def list_{table}(
{params}    limit: int = 100,
    offset: int = 0,
) -> list[dict]:
    rows = store.list_{table}({args})
    return [row.to_dict() for row in rows[offset : offset + limit]]


@app.post("/{table}", status_code=201)
def create_{one}(payload: dict) -> dict:
    return store.add_{one}(payload).to_dict()


@app.get("/{table}/{{{one}_id}}")
def get_{one}({one}_id: int) -> dict:
    return store.get_{one}({one}_id).to_dict()


@app.patch("/{table}/{{{one}_id}}")
def update_{one}({one}_id: int, payload: dict) -> dict:
    return store.update_{one}({one}_id, payload).to_dict()


@app.delete("/{table}/{{{one}_id}}", status_code=204)
def delete_{one}({one}_id: int) -> None:
    store.delete_{one}({one}_id)


{nested}'''


def _rule(name: str, rule: str) -> str:
    kind, *arg = rule.split() or [""]
    rules = {"text": "1-{0} characters, not blank", "max": "at most {0} characters", "range": "{0} to {1}",
             "choice": "one of {choices}", "ref": "id of an existing {ref}", "day": "YYYY-MM-DD"}
    choices = ", ".join(f"`{c}`" for c in CHOICES.get(arg[-1] if arg else "", ()))
    return rules.get(kind, "").format(*arg, ref=name[:-3], choices=choices)


def py_docs(cls: str, table: str, one: str, doc: str, fields, example) -> str:
    rows = "".join(f"| `{n}` | {TYPES[a]} | "
                   f"{'required' if d is None else '`' + d.replace('None', 'null').replace('False', 'false') + '`'} | "
                   f"{_rule(n, r)} |\n" for n, a, d, r in fields)
    filters = ", ".join(f"`{n}`" for n, _ in _filters(fields))
    shown = {"id": 7, **{n: d and json.loads(d.replace("None", "null").replace("False", "false"))
                         for n, _, d, _ in fields}, **example}
    return f"""## {table.capitalize()}: `/{table}`

{doc}

| Field | Type | Default | Rules |
|-------|------|---------|-------|
| `id` | integer | assigned | read-only, never reused |
{rows}
| Method | Path | Answers |
|--------|------|---------|
| `GET` | `/{table}` | 200, a list; filters {filters}; paging `limit` (100) and `offset` |
| `POST` | `/{table}` | 201 with the new {one}; 422 `{{"detail", "field"}}` when a field breaks its rule |
| `GET` | `/{table}/{{id}}` | 200 with the {one}; 404 when there is none |
| `PATCH` | `/{table}/{{id}}` | 200 with the updated {one}; only the fields sent change |
| `DELETE` | `/{table}/{{id}}` | 204; 404 when there is none |

```sh
curl -s localhost:8000/{table} -H 'content-type: application/json' \\
  -d '{json.dumps(example)}'
```

```json
{json.dumps(shown, indent=2)}
```

"""


DATES = '''"""Due days: parsing what clients send, and the calendar arithmetic reminders need."""

from datetime import date, datetime, timedelta

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
RELATIVE = {"today": 0, "tomorrow": 1, "yesterday": -1}
# public holidays the reminder scheduler skips (from the ops calendar)
HOLIDAYS = frozenset(
    {
''' + "".join(f"        date({d.year}, {d.month}, {d.day}),\n" for d in HOLIDAYS) + '''    }
)


def parse_due(value: str | None, today: date | None = None) -> date | None:
    """Accept '2026-11-04', an ISO timestamp, 'today'/'tomorrow' or a weekday name."""
    if not value:
        return None
    today = today or date.today()
    word = value.strip().lower()
    if word in RELATIVE:
        return today + timedelta(days=RELATIVE[word])
    if word in WEEKDAYS:
        return next_weekday(today, WEEKDAYS.index(word))
    if len(value) == 10:
        return date.fromisoformat(value)
    stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return stamp.astimezone().date()


def next_weekday(start: date, weekday: int) -> date:
    """The first day after `start` that falls on `weekday` (0 is Monday)."""
    return start + timedelta(days=(weekday - start.weekday() - 1) % 7 + 1)


def is_overdue(due: date | None, today: date) -> bool:
    return due is not None and due < today


def due_label(due: date | None, today: date) -> str:
    """'today', 'tomorrow', 'in 3 days', '2 days late', or the day itself beyond two weeks."""
    if due is None:
        return "no due date"
    days = (due - today).days
    if days in (0, 1):
        return ("today", "tomorrow")[days]
    if days < 0:
        return f"{-days} day{'s' * (days != -1)} late"
    return f"in {days} days" if days <= 14 else due.isoformat()


def week_bounds(day: date) -> tuple[date, date]:
    """Monday and Sunday of the ISO week holding `day`."""
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=6)


def add_business_days(start: date, days: int) -> date:
    """Move `days` working days forward, skipping weekends and HOLIDAYS."""
    current = start
    while days > 0:
        current += timedelta(days=1)
        if current.weekday() < 5 and current not in HOLIDAYS:
            days -= 1
    return current
'''
MODELS_HEAD = f'''"""Domain objects: dataclasses that validate themselves and round-trip through JSON."""

from dataclasses import dataclass
from datetime import date

from .dates import parse_due

{"".join(f'{k} = {json.dumps(v)[1:-1].join("()")}{chr(10)}' for k, v in CHOICES.items())}

class ValidationError(ValueError):
    """A field breaks its rule; `field` names it in the 422 response."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{{field}}: {{message}}")
        self.field = field


'''
APP_HEAD = '''"""The HTTP API: CRUD for todos, lists, comments, reminders and members, and views over todos."""

from datetime import date

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from . import __version__
from .dates import due_label
from .models import ValidationError
from .storage import NotFound, Store

app = FastAPI(title="todo-api", version=__version__)
store = Store("todos.json")


@app.exception_handler(NotFound)
def not_found(request: Request, exc: NotFound) -> JSONResponse:
    return JSONResponse({"detail": str(exc)}, status_code=404)


@app.exception_handler(ValidationError)
def invalid(request: Request, exc: ValidationError) -> JSONResponse:
    return JSONResponse({"detail": str(exc), "field": exc.field}, status_code=422)


@app.get("/health")
def health() -> dict:
    return {"status": "ok", "version": __version__}


@app.get("/stats")
def stats() -> dict:
    return store.stats(date.today())


# views over todos, declared before /todos/{todo_id} so that their paths win


@app.get("/todos/overdue")
def overdue_todos() -> list[dict]:
    today = date.today()
    return [{**todo.to_dict(), "label": due_label(todo.due, today)} for todo in store.overdue(today)]


@app.get("/todos/search")
def search_todos(q: str, limit: int = 20) -> list[dict]:
    return [todo.to_dict() for todo in store.search(q)[:limit]]


'''
ROUTE_DOCS = {"health": "Liveness probe for the load balancer.", "stats": "Counts for the dashboard.",
              "overdue_todos": "Open todos past their due day, each with a label such as '2 days late'.",
              "search_todos": "Todos whose title or notes contain `q`, ignoring case."}
for _cls, _table, _one, *_rest in RESOURCES:
    ROUTE_DOCS.update({
        f"list_{_table}": f"{_table.capitalize()} matching the query parameters, `limit` at a time from `offset`.",
        f"create_{_one}": f"Create a {_one} from the JSON body; a 422 names the first bad field.",
        f"get_{_one}": f"One {_one} by id.", f"update_{_one}": "Change the fields sent in the body, keep the rest.",
        f"delete_{_one}": f"Delete the {_one}; its id is never handed out again."})
    ROUTE_DOCS.update({f"{_table}_of_{f[0][:-3]}": f"The {_table} of one {f[0][:-3]}; 404 when it does not exist."
                       for f in _rest[1] if f[3] == "ref"})
