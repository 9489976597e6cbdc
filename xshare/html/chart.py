"""The index page's chart: the interactive share and the calibration per week, as inline SVG (no
script, nothing loaded), with the reading's thresholds drawn, the user's marks as lines, and each
week linking to the list of its sessions below the chart."""

from __future__ import annotations

from xshare.html.cells import esc
from xshare.measure.ledger import bill_short
from xshare.measure.prices import PriceTable, row_cost
from xshare.measure.row import SessionRow
from xshare.report.periods import period_of, split_by_period
from xshare.report.render import READINGS, parse_time, summarize
from xshare.report.session_dollars import PeriodDollars

# drawn at 1:1 up to _WIDTH (svg.trend in template.html), so the labels read at the page's small size;
# _TOP leaves a strip above the plot for the marks' labels, _RIGHT room for the last period's name
_WIDTH, _HEIGHT, _LEFT, _TOP, _BOTTOM, _RIGHT = 780, 290, 48, 40, 40, 40
_SERIES = (("exploration_share_of_context", "#c0392b", "interactive exploration share"),
           ("calibration", "#2471a3", "calibration (recorded / billed, over the sessions whose bill explains their "
                                      "records)"))


def _y(value: float, top: float) -> float:
    return _TOP + (1 - min(value, top) / top) * (_HEIGHT - _TOP - _BOTTOM)


def _x(index: int, count: int) -> float:
    span = _WIDTH - _LEFT - _RIGHT
    return _LEFT + (span * index / (count - 1) if count > 1 else span / 2)


def _figures(rows: list[SessionRow], by: str) -> list[tuple[str, dict | None, list[SessionRow]]]:
    """Per period: the interactive sessions' pooled figures (None without any) and those sessions."""
    result = []
    for period, members in split_by_period(rows, by).items():
        interactive = [row for row in members if row.get("source") == "interactive"]
        groups = summarize(interactive)
        pooled = next(iter(groups.values())) if len(groups) == 1 else _pooled(interactive)
        if pooled:
            pooled = {**pooled, **_calibration(interactive)}
        result.append((period, pooled, interactive))
    return result


def _calibration(rows: list[SessionRow]) -> dict:
    """Recorded / billed over the sessions whose bill explains their records, and how many are left out. A
    session whose records show more sent than was billed (ledger.bill_short: its shares are unknown) says
    nothing of how well the others are modelled, and alone lifts its period's line far above 100% (a Hermes
    session of the corpus recorded 48 times its bill); a period of only such sessions has no point."""
    explained = [row for row in rows if not bill_short(row["context_tokens"], row["prompt_tokens_billed"])]
    prompt = sum(row["prompt_tokens_billed"] for row in explained)
    context = sum(row["context_tokens"] for row in explained)
    return {"calibration": context / prompt if prompt > 0 else None, "unexplained": len(rows) - len(explained)}


def _pooled(rows: list[SessionRow]) -> dict | None:
    """Several agents' interactive sessions in one period: pooled as one group for the chart."""
    if not rows:
        return None
    return next(iter(summarize(map(_as_one_agent, rows)).values()))


def _as_one_agent(row: SessionRow) -> SessionRow:
    pooled = row.copy()
    pooled["agent"] = "all"
    return pooled


def _lines(points: list[tuple[float, float]], colour: str) -> str:
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>' for x, y in points)
    return f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>{dots}'


def _marks_svg(marks: list[dict], periods: list[str], by: str) -> str:
    """Each mark as a dashed vertical line at its period, labelled in the strip above the plot (where no
    series runs), alternating two rows so that neighbours' labels do not overlap; a label in the right half
    ends at its line, so that it stays on the chart."""
    out = []
    drawn = 0
    for mark in marks:
        at = parse_time(mark.get("at"))
        period = period_of(at, by) if at else None
        if period not in periods:
            continue
        x = _x(periods.index(period), len(periods))
        label_y = 13 + 13 * (drawn % 2)
        anchor, label_x = ("end", x - 3) if x > _WIDTH / 2 else ("start", x + 3)
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{label_y + 3}" y2="{_HEIGHT - _BOTTOM}" stroke="#7d3c98" '
                   f'stroke-dasharray="4 3"/><text x="{label_x:.1f}" y="{label_y}" font-size="11" fill="#7d3c98" '
                   f'text-anchor="{anchor}">{esc(mark["label"])}</text>')
        drawn += 1
    return "".join(out)


def _top(figures: list) -> float:
    """The scale's top: 100%, or the highest calibration above it (a bill below the record), to a 25%."""
    highest = max((group[field] for _, group, _ in figures if group for field, _, _ in _SERIES
                   if group[field] is not None), default=1.0)
    return max(1.0, -(-highest * 4 // 1) / 4)


def _axes(top: float) -> str:
    """The reading's thresholds and the 100% line."""
    out = []
    for limit in [limit for limit, _, _ in READINGS[:-1]] + [1.0]:
        y = _y(limit, top)
        out.append(f'<line x1="{_LEFT}" x2="{_WIDTH - _RIGHT + 8}" y1="{y:.1f}" y2="{y:.1f}" stroke="#999" '
                   f'stroke-dasharray="2 2"/><text x="4" y="{y + 4:.1f}" font-size="11">{limit:.0%}</text>')
    return "".join(out)


def _labels(periods: list[str], counts: list[int], unexplained: list[int]) -> str:
    """Each period's name (the year only where it changes) and session count, linking to its list (its
    tooltip says how many sessions the calibration left out); with many periods, every few are named so that
    names do not overlap (all stay linked)."""
    step = max(1, -(-len(periods) // 12))
    out = []
    for index, (period, count, left_out) in enumerate(zip(periods, counts, unexplained, strict=True)):
        x = _x(index, len(periods))
        named = index % step == 0
        # every other name is 'minor': a phone, drawing the chart at half size in larger type, hides those
        minor = ' class="minor"' if index // step % 2 else ""
        short = period if index == 0 or period[:4] != periods[index - 1][:4] else period[5:]
        text = (f'<text{minor} x="{x:.1f}" y="{_HEIGHT - _BOTTOM + 16}" font-size="11" text-anchor="middle">'
                f'{esc(short)}</text><text{minor} x="{x:.1f}" y="{_HEIGHT - _BOTTOM + 30}" font-size="10" '
                f'text-anchor="middle">n={count}</text>') if named else ""
        out_of = f", {left_out} left out of the calibration" if left_out else ""
        out.append(f'<a href="#period-{esc(period)}"><title>{esc(period)}: {count} interactive session(s){out_of}'
                   f'</title><rect x="{x - 6:.1f}" y="{_TOP}" width="12" height="{_HEIGHT - _TOP:.0f}" '
                   f'fill="transparent"/>{text}</a>')
    return "".join(out)


def chart_html(rows: list[SessionRow], marks: list[dict], page_of: dict[str, str], by: str = "week",
               prices: PriceTable | None = None) -> str:
    """The chart and, under it, each period's sessions linked to their pages (`page_of`: id -> file), with
    what they cost at list price when `prices` is given."""
    figures = _figures(rows, by)
    if not figures:
        return ""
    periods, top = [period for period, _, _ in figures], _top(figures)
    parts = [f'<section class="chart"><h2>Over time, by {by}</h2>',
             f'<div class="scroll"><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {_HEIGHT}" '
             f'class="trend" role="img" aria-label="interactive exploration share and calibration per {by}">',
             _axes(top)]
    for field, colour, _ in _SERIES:
        points = [(_x(index, len(figures)), _y(group[field], top)) for index, (_, group, _) in enumerate(figures)
                  if group and group[field] is not None]
        parts.append(_lines(points, colour))
    parts.append(_marks_svg(marks, periods, by))
    parts.append(_labels(periods, [group["sessions"] if group else 0 for _, group, _ in figures],
                         [group["unexplained"] if group else 0 for _, group, _ in figures]))
    parts.append("</svg></div>")
    legend = "; ".join(f'<svg width="10" height="10"><circle cx="5" cy="5" r="4" fill="{colour}"/></svg> '
                       f"{esc(words)}" for _, colour, words in _SERIES)  # no style attribute: the CSP
    parts.append(f'<p class="sub">{legend}; dashed grey: the reading\'s 10% and 30% lines, and 100%; dashed '
                 f"purple: your marks. n: interactive sessions in the {by} (fewer than 10 is an anecdote). "
                 + _left_out(figures) +
                 "Each period links to its sessions below" + (f", with what they cost at {esc(prices.describe())} ("
                                                                "+: sessions with no price left out)" if prices else "")
                 + ".</p>")
    parts += [_period_list(period, members, page_of, prices) for period, _, members in figures]
    parts.append("</section>\n")
    return "".join(parts)


def _left_out(figures: list) -> str:
    """The chart's word on the sessions its calibration leaves out, where it leaves any."""
    left_out = sum(group["unexplained"] for _, group, _ in figures if group)
    return (f"{left_out:,} interactive session(s) whose records show more sent than was billed are left out of "
            "the calibration (their shares are unknown: the records cannot explain the bill). " if left_out else "")


def _period_list(period: str, members: list[SessionRow], page_of: dict[str, str], prices: PriceTable | None) -> str:
    links = ", ".join(f'<a href="{esc(page_of[row["id"]])}">{esc(row["id"][:8])}</a>'
                      for row in members if row["id"] in page_of) or "none with a page"
    cost = ""
    if prices is not None:
        summed = PeriodDollars()
        for row in members:
            summed.add(row_cost(row, prices))
        cost = (f', <span class="cost">{esc(summed.cell())}</span> at list price' if summed.priced
                else ', <span class="cost">dollars unknown</span> (no list price)' if summed.unknown else "")
    return (f'<details id="period-{esc(period)}"><summary>{esc(period)}: {len(members):,} interactive '
            f"session(s){cost}</summary><p>{links}</p></details>")
