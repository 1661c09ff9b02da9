"""The progress of a whole solve, from its seeds' progress events: the mean fraction over every seed
(seeds not heard from yet count as not started), the furthest keyframe any seed has reached, the
planning effort spent, the retries and back-ups so far (a solve that struggles says so while it
works), and an estimate of the time left. Plain Python (no bpy, nothing of the solver) so the
numbers the status bar shows are testable on their own.

Per-seed events arrive interleaved; showing whichever seed reported last made the bar jump back
and forth, so the bar is the mean and the text names the furthest keyframe.
"""
from __future__ import annotations

from .i18n import iface_


class SolveProgress:
    def __init__(self, num_seeds: int):
        self.num_seeds = max(1, int(num_seeds))
        self.fraction: dict[int, float] = {}
        self.reached: dict[int, int] = {}
        self.iterations: dict[int, int] = {}
        self.retries: dict[int, int] = {}
        self.backups: dict[int, int] = {}
        self.keyframes: int | None = None
        self.last_cost: float | None = None  # the latest seed's current planning cost
        self.motion_time: dict[int, float] = {}  # s of motion each seed's simulation has reached
        self.retrying: tuple[int, int, int] | None = None  # (seed, keyframe, try) of the latest seed on a retry
        self.news: list[str] = []  # a search started over, a keyframe tried again: for Blender's reports, once each
        self._told: set[tuple[int, int, int]] = set()  # the (seed, keyframe, try) already in `news`

    def update(self, event: dict) -> None:
        """Take one `progress` event (`seed`, `fraction`, optionally `cost`, `reached`, `keyframes`,
        `iterations`, `retries`, `backups`, `attempt`); a finished seed (`solution`) counts as complete.
        A search started over or a keyframe tried again is added to `news` once."""
        seed = event.get("seed")
        if "solution" in event:  # a finished seed's event carries its solution
            seed = event["solution"]["seed"]
            self.fraction[seed] = 1.0
            return
        self.fraction[seed] = max(self.fraction.get(seed, 0.0), min(1.0, float(event.get("fraction", 0.0))))
        if "reached" in event:
            self.reached[seed] = max(self.reached.get(seed, 0), int(event["reached"]))
            self.keyframes = int(event["keyframes"])
        if "iterations" in event:
            self.iterations[seed] = int(event["iterations"])
        if event.get("retries") and "attempt" not in event and int(event["retries"]) > self.retries.get(seed, 0):
            self.news.append(iface_("seed {}: search missed 5%, started over ({}×)").format(
                seed, int(event["retries"])))
        for key, tally in (("retries", self.retries), ("backups", self.backups)):
            if event.get(key) is not None:
                tally[seed] = max(tally.get(seed, 0), int(event[key]))
        if event.get("cost") is not None:
            self.last_cost = float(event["cost"])
        if event.get("motion_time") is not None:
            self.motion_time[seed] = float(event["motion_time"])
        if event.get("attempt"):  # a keyframe's segment tried again (MPC): which keyframe, which try
            retrying = (seed, int(event.get("reached", 0)) + 1, int(event["attempt"]) + 1)
            if retrying not in self._told and self.keyframes:
                self._told.add(retrying)
                self.news.append(self._retrying_words(retrying))
            self.retrying = retrying
        elif "attempt" in event and self.retrying is not None and self.retrying[0] == seed:
            self.retrying = None

    def _retrying_words(self, retrying: tuple[int, int, int]) -> str:
        """"seed 1 retrying keyframe 3/5 (try 2)" for (seed, keyframe, try)."""
        seed, key, attempt = retrying
        return iface_("seed {} retrying keyframe {}/{} (try {})").format(seed, key, self.keyframes, attempt)

    @property
    def overall(self) -> float:
        """Mean fraction over all seeds, in [0, 1]."""
        return min(1.0, sum(self.fraction.values()) / self.num_seeds)

    def eta_s(self, elapsed_s: float) -> float | None:
        """Seconds left at the pace so far; None until there is enough to go on."""
        f = self.overall
        if f <= 0.02:
            return None
        return elapsed_s * (1.0 - f) / f

    def text(self, elapsed_s: float) -> str:
        """One line for the status bar and the panel."""
        parts = [iface_("{:.0f}%").format(100 * self.overall)]
        if self.keyframes:
            furthest = max(self.reached.values(), default=0)
            parts.append(iface_("furthest keyframe {}/{}").format(furthest, self.keyframes))
        if self.retrying is not None and self.keyframes:
            parts.append(self._retrying_words(self.retrying))
        if self.motion_time:  # where in the clip the furthest seed is (a back-up goes back)
            parts.append(iface_("at {:.1f} s of motion").format(max(self.motion_time.values())))
        if self.iterations:
            parts.append(iface_("{} planning iterations").format(sum(self.iterations.values())))
        retries, backups = sum(self.retries.values()), sum(self.backups.values())
        if self.backups and (retries or backups):
            parts.append(iface_("{} retries, {} back-ups").format(retries, backups))
        elif retries:  # an assisted search that missed its 5% starts over; it has no back-ups
            parts.append(iface_("search missed 5%, started over ({}×)").format(retries))
        if self.last_cost is not None:
            parts.append(iface_("cost {:.4g}").format(self.last_cost))
        eta = self.eta_s(elapsed_s)
        if eta is not None:
            parts.append(iface_("about {:.0f} s left").format(eta))
        return ", ".join(parts)
