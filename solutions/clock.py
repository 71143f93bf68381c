"""What day it is: today's epoch day in the leaderboard time zone, for every read and write.

The engine holds the one definition (`leaderboard.current_day`: the day its orders are
kept up to), and the site asks for it here, so reads need not import the write module to learn
the date and no second computation can disagree with the engine's at midnight."""

from .leaderboard import current_day as today

__all__ = ["today"]
