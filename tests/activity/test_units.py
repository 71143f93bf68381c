"""The pure parts of the activity app: rank changes and drops, and the SVG charts."""

import datetime as dt

from activity import charts, samples

T0 = dt.datetime(2020, 1, 19, 12, 0, tzinfo=dt.UTC)


def minutes(n: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=n)


def changes(*points: tuple[int, int | None]) -> list[dict]:
    return [{"at": minutes(m), "rank": rank} for m, rank in points]


def test_only_rank_changes_are_kept():
    kept = samples.with_rank([], 1, minutes(0), keep=3)
    assert samples.with_rank(kept, 1, minutes(1), keep=3) is kept
    for m, rank in enumerate([2, 3, 4], start=2):
        kept = samples.with_rank(kept, rank, minutes(m), keep=3)
    assert [change["rank"] for change in kept] == [2, 3, 4]


def test_a_drop_is_measured_from_the_best_rank_held_in_the_window():
    drop = samples.rank_drop(changes((0, 1), (30, 4)), minutes(30), 60)
    assert (drop.best_rank, drop.rank, drop.places, drop.best_at) == (1, 4, 3, minutes(0))


def test_the_rank_held_when_the_window_opened_counts():
    # Rank 1 since long before the window: it was still held when the window opened.
    drop = samples.rank_drop(changes((0, 1), (100, 4)), minutes(100), 60)
    assert drop.places == 3


def test_a_drop_spread_over_more_than_the_window_is_not_one():
    drop = samples.rank_drop(changes((0, 1), (1, 3), (62, 4)), minutes(62), 60)
    assert (drop.best_rank, drop.places) == (3, 1)


def test_a_climb_back_up_starts_a_new_drop():
    first = samples.rank_drop(changes((0, 1), (10, 4)), minutes(10), 60)
    again = samples.rank_drop(changes((0, 1), (10, 4), (20, 1), (30, 4)), minutes(30), 60)
    assert first.best_at == minutes(0)
    assert again.best_at == minutes(20)


def test_nobody_drops_off_the_board_or_without_samples():
    assert samples.rank_drop([], T0, 60) is None
    assert samples.rank_drop(changes((0, 1), (5, None)), minutes(5), 60) is None


def test_ticks_include_both_ends_and_are_round():
    assert charts.ticks(1, 1) == [1]
    assert charts.ticks(1, 5) == [1, 2, 3, 4, 5]
    assert charts.ticks(0, 100) == [0, 20, 40, 60, 80, 100]
    assert charts.ticks(1, 37)[0] == 1 and charts.ticks(1, 37)[-1] == 37


def test_the_rank_chart_labels_its_axes_and_breaks_on_missing_days():
    days = [dt.date(2020, 1, 10) + dt.timedelta(days=i) for i in range(5)]
    svg = charts.rank_chart(
        list(zip(days, [3, None, 2, 1, 4], strict=True)), chart_id="r", title="Rank <7d>"
    )
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "Rank &lt;7d&gt;" in svg  # escaped
    assert ">Rank</text>" in svg and ">10 Jan</text>" in svg and ">14 Jan</text>" in svg
    assert svg.count("<polyline") == 1  # 3 | gap | 2, 1, 4: a lone point is a dot, no line
    assert svg.count("<circle") == 4
    assert "best #1, worst #4" in svg


def test_a_rank_chart_without_ranks_is_empty_so_the_page_says_it_in_words():
    assert charts.rank_chart([(dt.date(2020, 1, 10), None)], chart_id="r", title="Rank") == ""


def test_the_forecast_chart_shows_each_score_and_when_it_runs_out():
    days = [dt.date(2020, 1, 19) + dt.timedelta(days=i) for i in range(4)]
    svg = charts.forecast_chart(
        list(zip(days, [5, 3, 1, 0], strict=True)), chart_id="f", title="Forecast"
    )
    assert ">Today</text>" in svg and svg.count("<rect") == 4
    assert all(f">{score}</text>" in svg for score in (5, 3, 1, 0))
    assert "off the board from 2020-01-22" in svg
