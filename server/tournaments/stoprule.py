"""A tournament's stop rule: the SPRT of ``cardarena.competition``, applied as the matches end.

Why one more sample at a time, in group order, over the groups complete from the first on:
the verdict is then the same whatever order the matches happened to end in, the matches that
end after it cannot move it back (it is frozen at the sample that reached it), and a director
that starts again after a restart tests the samples from the first and reaches it at the same
sample. A group still being played is not a sample yet (its rotations cancel the deal's luck
only together), nor is any group after it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from cardarena.competition import Decision, MatchPlan, Played, Sprt, paired_differences

from .spec import TournamentSpec


def complete_groups(plans: Sequence[MatchPlan], ended: Iterable[int]) -> set[int]:
    """The duplicate groups every match of which has ended (``ended``: plan indices)."""
    sizes: dict[int, int] = {}
    for plan in plans:
        sizes[plan.group] = sizes.get(plan.group, 0) + 1
    done: dict[int, int] = {}
    for index in ended:
        group = plans[index].group
        done[group] = done.get(group, 0) + 1
    return {g for g, n in done.items() if n == sizes[g]}


class StopRule:
    def __init__(self, spec: TournamentSpec) -> None:
        rule = spec.sprt
        self.test = (
            None
            if rule is None
            else Sprt(rule.a, rule.b, alpha=rule.alpha, beta=rule.beta, d0=rule.d0, d1=rule.d1)
        )
        self.lowest_wins = spec.lowest_wins
        self.decision: Decision | None = None
        """The verdict, frozen at the sample that reached it."""
        self._tested = 0

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
        assert self.test is not None
        prefix = 0
        while prefix in complete:
            prefix += 1
        done = [p for _, p in sorted(played.items()) if p.group < prefix]
        return paired_differences(done, self.test.a, self.test.b, lowest_wins=self.lowest_wins)

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
