"""Times as xshare reads and stores them: parsed, never compared as written, always UTC.

Agents write times as ISO-8601 text with or without an offset, or as epoch seconds or milliseconds.
Everything is turned into one form, `2026-11-04T09:15:02.120Z` (UTC, milliseconds), which sorts as
text, so rows of every agent compare alike. A time from a record counts only if it is plausible: not
before 2020 (no agent xshare reads wrote anything earlier; 0 and 1970 are unset clocks) and not more
than a day after now (a clock a little ahead is tolerated; 9999 is not). Parsing never raises, whatever
the year or offset: what cannot be read is None.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

EARLIEST = datetime(2020, 1, 1, tzinfo=timezone.utc)
FUTURE_SLACK = timedelta(days=1)
PLAUSIBLE_RANGE = "before 2020 or more than a day ahead"  # for messages: what "implausible" means
_EARLIEST_TEXT = "2020-01-01T00:00:00.000Z"
# above this an epoch number can only be milliseconds (1e11 seconds is the year 5138)
_MILLIS_ABOVE = 1e11
_latest_text = ""  # the newest plausible time as text; moved on when a later time is met (a long-lived process)


def refused(agent: str) -> str:
    """The problem line (stderr, counted) for an agent's record times that were left out."""
    return f"{agent} timestamps unreadable or implausible ({PLAUSIBLE_RANGE}), left out"


def parse_time(value: object) -> datetime | None:
    """ISO-8601 text as an aware UTC datetime; text without an offset is UTC. None for anything that
    does not parse or whose UTC moment falls outside the calendar (year 1 with +05:00, 9999 with -05:00)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return to_utc(moment)


def to_utc(moment: datetime) -> datetime | None:
    """The same moment in UTC; a naive one is taken as UTC (never as the machine's local time)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    try:
        return moment.astimezone(timezone.utc)
    except OverflowError:
        return None


def epoch_time(value: object, millis: bool = True) -> datetime | None:
    """Epoch seconds (a number, or digits in text) as a UTC datetime; with `millis`, numbers too large to
    be seconds are read as milliseconds. None for NaN, infinities, booleans and what no calendar holds."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return None
    seconds = value / 1000 if millis and value > _MILLIS_ABOVE else value
    try:
        return datetime.fromtimestamp(round(float(seconds), 3), timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def epoch_seconds(value: object) -> float | None:
    """A record's time as epoch seconds, exactly (no rounding, no range check), to compare times a column
    wrote in mixed forms (REAL beside TEXT in SQLite); None for what is not a time."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) if value == value else None
    if not isinstance(value, str):
        return None
    if _is_number(value.strip()):
        return float(value)
    moment = parse_time(value)
    return moment.timestamp() if moment else None


def latest_plausible(now: datetime | None = None) -> datetime:
    return (now or datetime.now(timezone.utc)) + FUTURE_SLACK


def plausible(moment: datetime | None) -> datetime | None:
    """The moment if a record could hold it (2020 to a day from now), else None."""
    if moment is None or moment < EARLIEST or moment > latest_plausible():
        return None
    return moment


def session_time(value: object) -> datetime | None:
    """A row's time (started_at, last_activity): parsed and plausible, else None."""
    return plausible(parse_time(value))


def utc_text(moment: datetime) -> str:
    """The stored form: UTC, milliseconds, Z."""
    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def stamp(value: object, millis: bool = True) -> str | None:
    """A record's time in the stored form, if it is plausible: ISO text (any offset), or epoch seconds
    (milliseconds too with `millis`) as a number or digits. None otherwise (never an exception)."""
    if isinstance(value, str):
        if _stored_shape(value):
            return _stored_form(value)  # the form most agents write (every Claude Code row): no conversion
        text = value.strip()
        moment = epoch_time(text, millis) if _is_number(text) else parse_time(text)
    else:
        moment = epoch_time(value, millis)
    moment = plausible(moment)
    return utc_text(moment) if moment else None


def _is_number(text: str) -> bool:
    return text.replace(".", "", 1).isdigit()


def _stored_shape(value: object) -> bool:
    """Text shaped as the stored form (2025-01-31T09:00:00.000Z), which sorts as the time it names; a week
    date (2025-W05-5T...) parses too, but does not sort so."""
    return (isinstance(value, str) and len(value) == 24 and value[23] == "Z" and value[10] == "T" and value[19] == "."
            and value[4] == "-" and value[7] == "-" and value[13] == ":" and value[16] == ":")


def _stored_form(text: str) -> str | None:
    """Text already in the stored form: plausible by text comparison (the form sorts as time), and a
    real date (month 13 or hour 25 are not)."""
    global _latest_text
    if text < _EARLIEST_TEXT:
        return None
    if text > _latest_text:
        _latest_text = utc_text(latest_plausible())
        if text > _latest_text:
            return None
    if not text[20:23].isdigit():  # else fromisoformat could read ".1+1" as a fraction and an offset
        return None
    try:
        datetime.fromisoformat(text[:23])
    except ValueError:
        return None
    return text
