"""A tournament's stop rule: the SPRT of ``cardarena.competition``, applied as the matches end.

Why one more sample at a time, in group order, over the groups complete from the first on:
the verdict is then the same whatever order the matches happened to end in, the matches that
end after it cannot move it back (it is frozen at the sample that reached it), and a director
that starts again after a restart tests the samples from the first and reaches it at the same
sample. A group still being played is not a sample yet (its rotations cancel the deal's luck
only together), nor is any group after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cardarena.competition import Decision, MatchPlan, Played, Schedule, Sprt, paired_differences

from .spec import TournamentSpec


class StopRule:
    def __init__(self, spec: TournamentSpec, plans: Schedule) -> None:
        rule = spec.sprt
        self.plans = plans
        """The plan (replaced when the seal mixes the seed: :meth:`replan`)."""
        self.test = (
            None
            if rule is None
            else Sprt(rule.a, rule.b, alpha=rule.alpha, beta=rule.beta, d0=rule.d0, d1=rule.d1)
        )
        self.lowest_wins = spec.lowest_wins
        self.decision: Decision | None = None
        """The verdict, frozen at the sample that reached it."""
        self._tested = 0
        self._prefix = 0
        self._samples: list[float] = []

    def replan(self, plans: Schedule) -> None:
        """The seal changed the plan's seeds (not its groups); nothing is sampled before it."""
        self.plans = plans

    def finishing(self, plans: Sequence[MatchPlan], index: int) -> bool:
        """Whether, the verdict reached, ``plans[index]`` still starts: only to finish the
        duplicate group already begun. Its rotations cancel the deal's luck only together, so
        a group cut short would count one deal unbalanced in the standings and the
        crosstable (the verdict itself is frozen at its sample: these matches cannot move
        it)."""
        if self.decision is None or index == 0:
            return False
        return plans[index].group == plans[index - 1].group

    def samples(self, played: Mapping[int, Played], complete: set[int]) -> list[float]:
        """The samples of the groups complete from the first on, one per group both ``a`` and
        ``b`` played; each group is read once, as the prefix grows (a 100,000-match
        tournament must not sort every match it played each time one ends)."""
        assert self.test is not None
        while self._prefix in complete:
            group = [played[i] for i in self.plans.members(self._prefix) if i in played]
            self._samples += paired_differences(
                group, self.test.a, self.test.b, lowest_wins=self.lowest_wins
            )
            self._prefix += 1
        return self._samples

    def check(self, played: Mapping[int, Played], complete: set[int]) -> Decision | None:
        """Test the samples not tested yet, one more at a time; the verdict once reached."""
        if self.test is None or self.decision is not None:
            return self.decision
        samples = self.samples(played, complete)
        for count in range(self._tested + 1, len(samples) + 1):
            decision = self.test.decide(samples[:count])
            if decision.verdict is not None:
                self.decision = decision
                return decision
        self._tested = len(samples)
        return None

    def state(self, played: Mapping[int, Played], complete: set[int]) -> Decision | None:
        """What to show: the verdict if reached, else the test on every sample so far."""
        if self.test is None:
            return None
        return self.decision or self.test.decide(self.samples(played, complete))
