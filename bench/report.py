"""The bench's table: one row per operation, the sizes side by side, in Markdown for the README.

Why a module of its own: the table is what the bench is for. What the design promises, the same
commands and the same bytes (±10%) at every size and medians within 1.3× of the smallest size's,
must show at a glance: a cell holds one figure when it is the same at every size, the figures of
each size otherwise, and anything past those bounds is in bold. The CPU an operation takes,
the MongoDB server's and the bench's own ("Django CPU"), is given for each size, never in bold:
it follows the machine, like the times.
"""

from __future__ import annotations

from collections.abc import Iterable

from .counting import Measure

INGEST = "ingest (solves/s)"  # not a row of the table: a rate, said after it
BYTES_TOLERANCE = 0.10  # bytes within ±10% of the smallest size's count as the same
MEDIAN_RATIO = 1.3  # a median within 1.3× of the smallest size's counts as flat
SERVER_CPU = "server CPU ms"  # the MongoDB server's process, an operation (see `cpu`)
DJANGO_CPU = "Django CPU ms"  # the bench's process: the site, the driver, the engine


def progress_line(result: Measure) -> str:
    """One measure as it is done, so a long run shows what it has so far."""
    if result.operation == INGEST:
        return f"· {result.programmers:>10,}  {INGEST}: {result.median:.1f}"
    return (
        f"· {result.programmers:>10,}  {result.operation:<36}{result.how:<21}"
        f"{result.commands:>3} commands{kilobytes(result.sent):>8} KB sent"
        f"{kilobytes(result.received):>8} KB received{result.median:>9.1f} ms"
        f" (p95 {result.p95:.1f}), CPU {cpu(result.server_cpu)} server,"
        f" {cpu(result.django_cpu)} Django"
    )


def cpu(milliseconds: float | None) -> str:
    """CPU milliseconds an operation, "—" when unknown (a server whose process is not known)."""
    return "—" if milliseconds is None else f"{milliseconds:.1f}"


def kilobytes(count: int) -> str:
    return f"{count / 1024:.2f}" if count < 10 * 1024 else f"{count / 1024:.1f}"


def bytes_flat(counts: list[int], tolerance: float = BYTES_TOLERANCE) -> bool:
    """Whether every size's bytes are within `tolerance` of the smallest size's."""
    return all(abs(count - counts[0]) <= tolerance * counts[0] for count in counts)


def _by_operation(results: Iterable[Measure]) -> dict[str, dict[int, Measure]]:
    rows: dict[str, dict[int, Measure]] = {}
    for result in results:
        if result.operation != INGEST:
            rows.setdefault(result.operation, {})[result.programmers] = result
    return rows


def _cell(figures: list[str], flat: bool) -> str:
    text = figures[0] if len(set(figures)) == 1 else " / ".join(figures)
    return text if flat else f"**{text}**"


def _row(name: str, by_size: dict[int, Measure], sizes: list[int], redis: bool) -> str:
    measures = [by_size[size] for size in sizes if size in by_size]
    examined = [m.examined for m in measures]
    cells = [
        name,
        measures[0].how,
        _cell([str(m.commands) for m in measures], len({m.commands for m in measures}) == 1),
        _cell(["—" if n is None else f"{n:,}" for n in examined], len(set(examined)) == 1),
        _cell([kilobytes(m.sent) for m in measures], bytes_flat([m.sent for m in measures])),
        _cell(
            [kilobytes(m.received) for m in measures], bytes_flat([m.received for m in measures])
        ),
        _cell([cpu(m.server_cpu) for m in measures], flat=True),
        _cell([cpu(m.django_cpu) for m in measures], flat=True),
        *[f"{by_size[size].median:.1f}" if size in by_size else "—" for size in sizes],
        *[f"{by_size[size].p95:.1f}" if size in by_size else "—" for size in sizes],
    ]
    if len(sizes) > 1:
        ratio = measures[-1].median / measures[0].median if measures[0].median else 1.0
        cells.append(_cell([f"{ratio:.2f}"], ratio <= MEDIAN_RATIO))
    if redis:
        last = by_size.get(sizes[-1])
        cells.append("—" if last is None or last.redis is None else f"{last.redis:.2f}")
    cells.append(measures[-1].detail or "—")
    return "| " + " | ".join(cells) + " |"


def table(results: list[Measure]) -> list[str]:
    """The Markdown table of every operation, then what the figures mean."""
    rows = _by_operation(results)
    sizes = sorted({size for by_size in rows.values() for size in by_size})
    redis = any(result.redis is not None for result in results)
    heading = ["operation", "measured", "commands", "documents examined", "sent KB", "received KB"]
    heading += [SERVER_CPU, DJANGO_CPU]
    heading += [f"median ms at {size:,}" for size in sizes]
    heading += [f"p95 ms at {size:,}" for size in sizes]
    heading += ["×"] if len(sizes) > 1 else []
    heading += [f"Redis ms at {sizes[-1]:,}"] if redis else []
    heading += [f"commands by name at {sizes[-1]:,}"]
    lines = ["| " + " | ".join(heading) + " |", "|" + "---|" * len(heading)]
    lines += [_row(name, by_size, sizes, redis) for name, by_size in rows.items()]
    lines.append("")
    if len(sizes) > 1:
        each = " / ".join(f"{size:,}" for size in sizes)
        lines.append(
            f"One figure: the same at every size; a / b: at {each} programmers. In bold: a "
            f"number of commands that is not the same, bytes beyond ±{BYTES_TOLERANCE:.0%} of "
            f"the smallest size's, or a largest size's median past {MEDIAN_RATIO}× the "
            "smallest's (×)."
        )
    lines.append(
        "Bytes: the BSON the site sent to MongoDB and got back (KB of 1,024). "
        "\"HTTP, cache cleared\": Django's cache (and the process's copies of it) is cleared "
        "before each timed request. "
        f"{SERVER_CPU}: the MongoDB server process's user and system CPU an operation, over "
        "the timed runs (— when its process is not known); "
        f"{DJANGO_CPU}: the bench process's (the site served from one of its threads, the "
        "driver, the engine)."
    )
    ingest = [result for result in results if result.operation == INGEST]
    if ingest:
        rates = "; ".join(f"{r.median:.1f} at {r.programmers:,}" for r in ingest)
        lines += ["", f"Ingest through the HTTP API (gunicorn, 8 clients), solves/s: {rates}."]
    return lines


def verdict(results: list[Measure]) -> list[str]:
    """Which operations cost the same at every size, and which do not (and in what)."""
    if len({result.programmers for result in results}) < 2:
        return []
    flat, uneven, slower = [], [], []
    for name, by_size in _by_operation(results).items():
        measures = [by_size[size] for size in sorted(by_size)]
        differences = []
        if len({m.commands for m in measures}) > 1:
            differences.append("commands " + " / ".join(str(m.commands) for m in measures))
        for what in ("sent", "received"):
            counts = [getattr(m, what) for m in measures]
            if not bytes_flat(counts):
                figures = " / ".join(kilobytes(count) for count in counts)
                differences.append(f"{what} KB {figures}")
        if differences:
            uneven.append(f"{name} ({'; '.join(differences)})")
        else:
            flat.append(name)
        if measures[0].median and measures[-1].median / measures[0].median > MEDIAN_RATIO:
            slower.append(f"{name} ({measures[-1].median / measures[0].median:.2f}×)")
    same = f"The same commands and bytes (±{BYTES_TOLERANCE:.0%}) at every size"
    lines = [f"{same}: {', '.join(flat) or 'none'}."]
    if uneven:
        lines.append(f"Not the same at every size: {', '.join(uneven)}.")
    if slower:
        lines.append(f"Medians past {MEDIAN_RATIO}× the smallest size's: {', '.join(slower)}.")
    return lines
