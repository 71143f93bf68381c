"""What the load generator's request log says: latency per endpoint, errors, 503s and their
Retry-After, how long the site took to answer normally again after each fault, and the judges'
throughput."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

from .truth import read_jsonl

BUSY = "solves_busy"  # the API's refusal of a solve past SOLVES_CONCURRENT_MAX: send it again


def error_code(response) -> str | None:
    """The site's error code of a refusal, as the load generator logs it: the API's (`{"error":
    {"code": ...}}`) or a page's (its `X-Error-Code` header), so that the verdict tells a busy
    site shedding solves (BUSY) from one that is down, whichever way the solve was sent."""
    headers = getattr(response, "headers", None) or {}
    if code := headers.get("X-Error-Code"):
        return code
    try:
        return response.json()["error"]["code"]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


NORMAL_AFTER_SECONDS = 5.0  # "answered normally again": this long without an error


def percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def outage_windows(requests_log: list[dict], faults: list[dict]) -> list[dict]:
    """Each fault, when it began, and when the site answered normally again: the first moment
    after it ended from which no request failed for NORMAL_AFTER_SECONDS. A solve refused as
    `solves_busy` is the site shedding load as designed, not a failure: it comes at any time."""
    failures = sorted(r["t"] for r in requests_log if _failed(r))
    windows = []
    begun = {}
    for fault in faults:
        if fault["phase"] == "begin":
            begun[fault["fault"]] = fault["t"]
        elif fault["phase"] == "end" and fault["fault"] in begun:
            start, ended = begun.pop(fault["fault"]), fault["t"]
            normal = ended
            for moment in failures:
                if moment < start:
                    continue
                if moment - normal > NORMAL_AFTER_SECONDS:
                    break
                normal = max(normal, moment)
            windows.append(
                {"fault": fault["fault"], "start": start, "ended": ended, "normal": normal}
            )
    return windows


def _failed(record: dict) -> bool:
    status = record["status"]
    return status == 0 or (status >= 500 and record.get("code") != BUSY)


def _in_outage(moment: float, windows: list[dict]) -> bool:
    return any(w["start"] <= moment <= w["normal"] + 1 for w in windows)


def endpoint_table(requests_log: list[dict], windows: list[dict]) -> Iterator[str]:
    by_name = defaultdict(list)
    for record in requests_log:
        name = record["name"]
        if name.endswith("live"):
            name += (
                " (304)" if record["status"] == 304 else " (200)" if record["status"] == 200 else ""
            )
        by_name[name].append(record)
    yield (
        "| endpoint | requests | p50 ms | p95 ms | p99 ms | p99 outside outages | 503 "
        "(with Retry-After; of them busy) | 429 (with Retry-After) | dropped | other errors |"
    )
    yield "|---|---|---|---|---|---|---|---|---|---|"
    for name in sorted(by_name):
        records = by_name[name]
        ok = [r["ms"] for r in records if r["status"] and r["status"] < 500]
        calm = [
            r["ms"]
            for r in records
            if r["status"] and r["status"] < 500 and not _in_outage(r["t"], windows)
        ]
        s503 = [r for r in records if r["status"] == 503]
        s429 = [r for r in records if r["status"] == 429]
        other = [r for r in records if r["status"] >= 500 and r["status"] != 503]
        yield (
            f"| {name} | {len(records)} | {percentile(ok, 0.5):.0f} | {percentile(ok, 0.95):.0f}"
            f" | {percentile(ok, 0.99):.0f} | {percentile(calm, 0.99):.0f} | {len(s503)} "
            f"({sum(1 for r in s503 if r['retry_after'])}"
            f"{_busy_share(s503)}) | {len(s429)} "
            f"({sum(1 for r in s429 if r['retry_after'])}) | "
            f"{sum(1 for r in records if r['status'] == 0)} | {len(other)} |"
        )


def _busy_share(refused: list[dict]) -> str:
    busy = sum(1 for r in refused if r.get("code") == BUSY)
    return f"; {busy} busy" if busy else ""


def accepted_times(run_dir: Path) -> list[float]:
    """When each accepted solve was acknowledged to its judge, in order."""
    return sorted(
        record["t"]
        for record in read_jsonl(run_dir / "acks.jsonl")
        if record["event"] == "answered"
        and (record["path"].endswith("/solves") or record["body"].get("verdict") == "accepted")
    )


def throughput(run_dir: Path) -> tuple[float, float]:
    """(accepted solves acknowledged per second over the load, the best 10 s of it)."""
    times = accepted_times(run_dir)
    if len(times) < 2:
        return 0.0, 0.0
    per_second = Counter(int(t) for t in times)
    seconds = range(int(times[0]), int(times[-1]) + 1)
    windows = [sum(per_second[s + i] for i in range(10)) / 10 for s in seconds]
    return len(times) / max(1.0, times[-1] - times[0]), max(windows, default=0.0)
