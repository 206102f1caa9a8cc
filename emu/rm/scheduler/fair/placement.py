"""Which queue an application goes to: Hadoop's QueuePlacementPolicy and
its rules (specified, user, primaryGroup, secondaryGroupExistingQueue,
nestedUserQueue, default, reject).

Rules are tried in order. Each names a queue (or rejects the app); a named
queue is taken if the rule may create queues (`create`, default true) or
the queue is configured in the allocation file, otherwise the next rule is
tried. The last rule must always decide ("terminal"), and no rule after a
terminal one may exist: both are checked when the policy is built.

Without a `queuePlacementPolicy` element the policy comes from yarn-site:
`specified`, then `user` if `yarn.scheduler.fair.user-as-default-queue`
(default true), then `default` (always creating) unless the user rule
already ends the list; `yarn.scheduler.fair.allow-undeclared-pools`
(default true) is the `create` flag of the first two.

User and group names are cleaned as in Hadoop: trimmed, "." -> "_dot_".
A user's groups come from a callable (see `FairSettings.groups_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

DEFAULT_QUEUE = "default"
Groups = Callable[[str], Sequence[str]]


class PlacementError(Exception):
    """Placement could not be decided: a user without groups (Hadoop's
    IOException), or no rule applied (its IllegalStateException)."""

    def __init__(self, message: str, no_rule: bool = False) -> None:
        super().__init__(message)
        self.no_rule = no_rule


@dataclass(frozen=True)
class ConfiguredQueues:
    """Queue names declared in the allocation file, by type; `leaf_order`
    and `parent_order` list them as Hadoop's QueueProperties holds them
    (HashSets of names), the order QueueManager creates them in."""

    leaves: frozenset[str]
    parents: frozenset[str]
    leaf_order: tuple[str, ...] = ()
    parent_order: tuple[str, ...] = ()

    def __contains__(self, name: object) -> bool:
        return name in self.leaves or name in self.parents


def clean_name(name: str) -> str:
    return name.strip().replace(".", "_dot_")


class Rule:
    """One placement rule; subclasses implement `queue_for` and `terminal`."""

    kind: ClassVar[str] = ""

    def __init__(self, create: bool = True, args: Mapping[str, str] | None = None) -> None:
        self.create = create
        self.args = dict(args or {})

    def assign(
        self, requested: str, user: str, groups: Groups, configured: ConfiguredQueues
    ) -> str | None:
        """The queue, "" to continue with the next rule, None to reject."""
        queue = self.queue_for(requested, user, groups, configured)
        if queue is None:
            return None
        if self.create or queue in configured:
            return queue
        return ""

    def queue_for(
        self, requested: str, user: str, groups: Groups, configured: ConfiguredQueues
    ) -> str | None:
        raise NotImplementedError

    @property
    def terminal(self) -> bool:
        raise NotImplementedError


class Specified(Rule):
    kind: ClassVar[str] = "specified"

    def queue_for(
        self, requested: str, user: str, groups: Groups, configured: ConfiguredQueues
    ) -> str | None:
        if requested == DEFAULT_QUEUE:
            return ""
        return requested if requested.startswith("root.") else "root." + requested

    @property
    def terminal(self) -> bool:
        return False


class User(Rule):
    kind: ClassVar[str] = "user"

    def queue_for(
        self, requested: str, user: str, groups: Groups, configured: ConfiguredQueues
    ) -> str | None:
        return "root." + clean_name(user)

    @property
    def terminal(self) -> bool:
        return self.create


class PrimaryGroup(Rule):
    kind: ClassVar[str] = "primaryGroup"

    def queue_for(
        self, requested: str, user: str, groups: Groups, configured: ConfiguredQueues
    ) -> str | None:
        names = groups(user)
        if not names:
            raise PlacementError(f"No groups returned for user {user}")
        return "root." + clean_name(names[0])

    @property
    def terminal(self) -> bool:
        return self.create


class SecondaryGroupExistingQueue(Rule):
    kind: ClassVar[str] = "secondaryGroupExistingQueue"

    def queue_for(
        self, requested: str, user: str, groups: Groups, configured: ConfiguredQueues
    ) -> str | None:
        for group in list(groups(user))[1:]:
            name = "root." + clean_name(group)
            if name in configured:
                return name
        return ""

    @property
    def terminal(self) -> bool:
        return False


class NestedUserQueue(Rule):
    kind: ClassVar[str] = "nestedUserQueue"

    def __init__(
        self, nested: Rule, create: bool = True, args: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(create, args)
        self.nested = nested

    def queue_for(
        self, requested: str, user: str, groups: Groups, configured: ConfiguredQueues
    ) -> str | None:
        queue = self.nested.assign(requested, user, groups, configured)
        if queue:
            if not queue.startswith("root."):
                queue = "root." + queue
            if queue in configured.leaves:
                return ""
            return queue + "." + clean_name(user)
        return queue

    @property
    def terminal(self) -> bool:
        return False


class Default(Rule):
    kind: ClassVar[str] = "default"

    def __init__(self, create: bool = True, args: Mapping[str, str] | None = None) -> None:
        super().__init__(create, args)
        queue = self.args.get("queue", "")
        if queue:
            self.queue = queue if queue.startswith("root.") else "root." + queue
        else:
            self.queue = "root." + DEFAULT_QUEUE

    def queue_for(
        self, requested: str, user: str, groups: Groups, configured: ConfiguredQueues
    ) -> str | None:
        return self.queue

    @property
    def terminal(self) -> bool:
        return True


class Reject(Rule):
    kind: ClassVar[str] = "reject"

    def assign(
        self, requested: str, user: str, groups: Groups, configured: ConfiguredQueues
    ) -> str | None:
        return None

    def queue_for(
        self, requested: str, user: str, groups: Groups, configured: ConfiguredQueues
    ) -> str | None:
        return None

    @property
    def terminal(self) -> bool:
        return True


RULES: dict[str, type[Rule]] = {
    r.kind: r for r in (Specified, User, PrimaryGroup, SecondaryGroupExistingQueue, Default, Reject)
}
RULE_NAMES = (*RULES, NestedUserQueue.kind)


class PlacementPolicy:
    """An ordered list of rules; `check` enforces Hadoop's terminal-rule
    constraints (raises ValueError naming the offending rule index)."""

    def __init__(self, rules: list[Rule], configured: ConfiguredQueues, groups: Groups) -> None:
        self.rules = rules
        self.configured = configured
        self.groups = groups

    @staticmethod
    def check(rules: list[Rule]) -> tuple[int, str] | None:
        """(index, message) of the first violation, or None."""
        if not rules:
            return 0, "Could get past last queue placement rule without assigning"
        for i, rule in enumerate(rules[:-1]):
            if rule.terminal:
                return i + 1, f"Rules after rule {i} in queue placement policy can never be reached"
        if not rules[-1].terminal:
            return len(rules) - 1, "Could get past last queue placement rule without assigning"
        return None

    @classmethod
    def from_settings(
        cls,
        allow_undeclared: bool,
        user_as_default: bool,
        configured: ConfiguredQueues,
        groups: Groups,
    ) -> PlacementPolicy:
        rules: list[Rule] = [Specified(allow_undeclared)]
        if user_as_default:
            rules.append(User(allow_undeclared))
        if not user_as_default or not allow_undeclared:
            rules.append(Default(True))
        return cls(rules, configured, groups)

    def assign(self, requested: str, user: str) -> str | None:
        """The queue for an app, or None if the policy rejects it. Raises
        PlacementError when a rule cannot decide (no groups for the user)."""
        for rule in self.rules:
            queue = rule.assign(requested, user, self.groups, self.configured)
            if queue is None or queue:
                return queue
        raise PlacementError(
            "Unable to match app to a queue placement policy, and no valid terminal queue "
            "placement rule is configured.",
            no_rule=True,
        )
