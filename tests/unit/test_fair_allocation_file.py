"""The allocation file and queue placement, against Hadoop's
TestAllocationFileLoaderService, TestFairSchedulerConfiguration,
TestQueuePlacementPolicy and the reference fair-scheduler.xml files."""

from __future__ import annotations

from pathlib import Path

import pytest

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.resources import Resource, normalize
from emu.rm.scheduler.fair import policies
from emu.rm.scheduler.fair.allocation_file import (
    ADMINISTER,
    SUBMIT,
    AccessControlList,
    load,
    parse_resource,
)
from emu.rm.scheduler.fair.arith import LONG_MAX, f32
from emu.rm.scheduler.fair.placement import ConfiguredQueues, PlacementError, PlacementPolicy
from emu.rm.scheduler.fair.settings import FairSettings
from emu.testing.fair import write_alloc
from tests.reference import REFERENCE_DIR

CUSTOM = "a-custom-resource"


def test_allocation_file_parsing(tmp_path: Path):
    """TestAllocationFileLoaderService.testAllocationFileParsing"""
    path = write_alloc(
        tmp_path,
        """
  <queue name="queueA"><minResources>1024mb,0vcores</minResources>
    <maxResources>2048mb,10vcores</maxResources></queue>
  <queue name="queueB"><minResources>2048mb,0vcores</minResources>
    <maxResources>5120mb,110vcores</maxResources>
    <aclAdministerApps>alice,bob admins</aclAdministerApps>
    <schedulingPolicy>fair</schedulingPolicy></queue>
  <queue name="queueC"><minResources>5120mb,0vcores</minResources>
    <aclSubmitApps>alice,bob admins</aclSubmitApps></queue>
  <queue name="queueD"><maxRunningApps>3</maxRunningApps><maxAMShare>0.4</maxAMShare></queue>
  <queue name="queueE"><minSharePreemptionTimeout>60</minSharePreemptionTimeout></queue>
  <queue name="queueF" type="parent"><maxChildResources>2048mb,64vcores</maxChildResources></queue>
  <queue name="queueG"><maxChildResources>2048mb,64vcores</maxChildResources>
    <fairSharePreemptionTimeout>120</fairSharePreemptionTimeout>
    <minSharePreemptionTimeout>50</minSharePreemptionTimeout>
    <fairSharePreemptionThreshold>0.6</fairSharePreemptionThreshold>
    <maxContainerAllocation>vcores=16, memory-mb=512, a-custom-resource=10</maxContainerAllocation>
    <queue name="queueH"><fairSharePreemptionTimeout>180</fairSharePreemptionTimeout>
      <minSharePreemptionTimeout>40</minSharePreemptionTimeout>
      <fairSharePreemptionThreshold>0.7</fairSharePreemptionThreshold>
      <maxContainerAllocation>1024mb,8vcores</maxContainerAllocation></queue>
  </queue>
  <queueMaxAppsDefault>15</queueMaxAppsDefault>
  <queueMaxResourcesDefault>4096mb,100vcores</queueMaxResourcesDefault>
  <userMaxAppsDefault>5</userMaxAppsDefault>
  <queueMaxAMShareDefault>0.5</queueMaxAMShareDefault>
  <defaultMinSharePreemptionTimeout>120</defaultMinSharePreemptionTimeout>
  <defaultFairSharePreemptionTimeout>300</defaultFairSharePreemptionTimeout>
  <defaultFairSharePreemptionThreshold>0.4</defaultFairSharePreemptionThreshold>
  <defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>
  <user name="user1"><maxRunningApps>10</maxRunningApps></user>
""",
    )
    conf = load(path, (CUSTOM,))
    assert len(conf.configured.leaves) == 6
    assert conf.min_share("root.default") == Resource(0, 0)
    assert conf.max_share("root.queueA").get(Resource()) == Resource(2048, 10)
    assert conf.max_share("root.queueB").get(Resource()) == Resource(5120, 110)
    for q in ("queueC", "queueD", "queueE", "queueF", "queueG", "queueG.queueH"):
        assert conf.max_share(f"root.{q}").get(Resource()) == Resource(4096, 100)
    mins = {"queueA": 1024, "queueB": 2048, "queueC": 5120, "queueD": 0, "queueG.queueH": 0}
    for q, m in mins.items():
        assert conf.min_share(f"root.{q}") == Resource(m, 0)
    assert "root.queueA" not in conf.max_child_resources
    assert conf.max_child_resources["root.queueF"].get(Resource()) == Resource(2048, 64)
    assert conf.max_child_resources["root.queueG"].get(Resource()) == Resource(2048, 64)
    assert [conf.max_apps(f"root.{q}") for q in ("default", "queueA", "queueD", "queueE")] == [
        15,
        15,
        3,
        15,
    ]
    assert (conf.user_max("user1"), conf.user_max("user2")) == (10, 5)
    assert conf.max_am_share("root.queueD") == f32(0.4)
    assert conf.max_am_share("root.queueE") == f32(0.5)
    assert conf.max_container_allocation["root.queueG"] == Resource(512, 16, {CUSTOM: 10})
    assert conf.max_container_allocation["root.queueG.queueH"] == Resource(1024, 8)
    assert conf.min_share_timeout("root") == 120000
    assert conf.min_share_timeout("root.queueA") == -1
    assert conf.min_share_timeout("root.queueE") == 60000
    assert conf.min_share_timeout("root.queueG") == 50000
    assert conf.min_share_timeout("root.queueG.queueH") == 40000
    assert conf.fair_share_timeout("root") == 300000
    assert conf.fair_share_timeout("root.queueF") == -1
    assert conf.fair_share_timeout("root.queueG") == 120000
    assert conf.fair_share_timeout("root.queueG.queueH") == 180000
    assert conf.fair_share_threshold("root") == pytest.approx(0.4)
    assert conf.fair_share_threshold("root.queueA") == -1
    assert conf.fair_share_threshold("root.queueG") == pytest.approx(0.6)
    assert conf.fair_share_threshold("root.queueG.queueH") == pytest.approx(0.7)
    assert {"root.queueF", "root.queueG"} <= conf.configured.parents
    assert "root.queueG.queueH" in conf.configured.leaves
    assert conf.policy("root") is policies.DRF
    assert conf.policy("root.queueA") is policies.DRF
    assert conf.policy("root.queueB") is policies.FAIR
    assert conf.policy("root.newqueue") is policies.DRF
    acl_b = conf.acl("root.queueB", ADMINISTER)
    assert acl_b is not None and acl_b.allows("bob", ()) and acl_b.allows("eve", ("admins",))
    submit_b = conf.acl("root.queueB", SUBMIT)
    assert submit_b is not None and not submit_b.allows("bob", ())


def test_backwards_compatible_pools_and_top_level_fair_share_timeout(tmp_path: Path):
    """TestAllocationFileLoaderService.testBackwardsCompatibleAllocationFileParsing:
    `pool` elements, `schedulingMode`, top-level `fairSharePreemptionTimeout`."""
    path = write_alloc(
        tmp_path,
        '<pool name="queueA"><minResources>1024mb,0vcores</minResources></pool>'
        '<pool name="queueE"><minSharePreemptionTimeout>60</minSharePreemptionTimeout>'
        "<fairSharePreemptionThreshold>0.3</fairSharePreemptionThreshold>"
        "<schedulingMode>fifo</schedulingMode></pool>"
        "<fairSharePreemptionTimeout>300</fairSharePreemptionTimeout>",
    )
    conf = load(path)
    assert conf.min_share("root.queueA") == Resource(1024, 0)
    assert conf.min_share_timeout("root.queueE") == 60000
    assert conf.fair_share_threshold("root.queueE") == pytest.approx(0.3)
    assert conf.policy("root.queueE") is policies.FIFO
    assert conf.fair_share_timeout("root") == 300000
    assert conf.min_share_timeout("root") == LONG_MAX


@pytest.mark.parametrize(
    ("name", "leaves", "parents"),
    [
        (
            "rm-allocation-files/fair-scheduler-conversion.xml",
            {"root.default", "root.users.joe", "root.users.john", "root.admins.bob"},
            {"root", "root.users", "root.admins", "root.admins.alice"},
        ),
        ("rm-allocation-files/test-fair-scheduler.xml", {"root.queue1"}, set()),
        (
            "sample-conf/fair-scheduler.xml",
            {"root.sls_queue_1", "root.sls_queue_2", "root.sls_queue_3"},
            set(),
        ),
        (
            "test-resources/fair-scheduler.xml",
            {"root.sls_queue_2", "root.sls_queue_3"},
            {"root.sls_queue_1"},
        ),
    ],
)
def test_reference_allocation_files_load_unchanged(name: str, leaves: set, parents: set):
    """Every fair-scheduler.xml Hadoop ships (SLS samples and RM test resources)
    loads, with the leaf and parent queues it declares (type="parent" and
    <reservation> queues are parents)."""
    conf = load(REFERENCE_DIR / name)
    assert conf.configured.leaves == leaves
    assert conf.configured.parents == parents


def test_reference_conversion_file_values():
    """fair-scheduler-conversion.xml: a root queue, parents, percentages,
    reservations, ACLs and a nested placement policy."""
    conf = load(REFERENCE_DIR / "rm-allocation-files/fair-scheduler-conversion.xml")
    assert conf.policy("root") is policies.DRF
    assert conf.default_policy is policies.FAIR
    assert conf.configured.leaves == {
        "root.default",
        "root.users.john",
        "root.users.joe",
        "root.admins.bob",
    }
    assert {"root.users", "root.admins", "root.admins.alice"} <= conf.configured.parents
    assert "root.admins.alice" in conf.reservable
    joe = conf.max_share("root.users.joe").get(Resource(10000, 10))
    assert joe == Resource(5000, 5)
    assert conf.min_share("root.users.john") == Resource(4096, 1)
    assert conf.weight("root.users.joe") == 3.0
    assert "root.users.joe" in conf.non_preemptable
    assert conf.max_am_share("root.admins.bob") == -1.0
    assert conf.max_apps("root.admins.alice") == 2
    assert (conf.user_max("alice"), conf.user_max("other")) == (30, 10)
    assert (conf.fair_share_timeout("root"), conf.min_share_timeout("root")) == (23000, 24000)
    assert conf.fair_share_threshold("root") == pytest.approx(0.12)
    root_submit = conf.acl("root", SUBMIT)
    assert (
        root_submit is not None
        and root_submit.allows("joe", ())
        and not root_submit.allows("x", ())
    )
    assert conf.placement_rules is not None and len(conf.placement_rules) == 5


def test_reference_sls_sample_values():
    """sample-conf/fair-scheduler.xml: `maxRunningJobs` (unknown to Hadoop 2+) is ignored."""
    conf = load(REFERENCE_DIR / "sample-conf/fair-scheduler.xml")
    assert conf.user_max("jenkins") == 1000  # from userMaxAppsDefault
    assert conf.weight("root.sls_queue_3") == 0.5
    assert conf.min_share("root.sls_queue_1") == Resource(1024, 1)
    assert conf.min_share_timeout("root.sls_queue_2") == 2000


# --- errors name the element and the line -------------------------------------------------------
PPOL = "<queuePlacementPolicy>\n{}\n</queuePlacementPolicy>"
BAD_FILES = [
    ('<queue name="a.b"/>', 3, "<queue>: Bad fair scheduler config file: queue name (a.b)"),
    ('<queue name="  "/>', 3, "shouldn't be empty"),
    ('<queue name="root"/>\n<queue name="other"/>', 3, "no other queues"),
    (
        '<queue name="p">\n<maxAMShare>0.3</maxAMShare>\n<queue name="c"/>\n</queue>',
        3,
        "maxAMShare",
    ),
    ('<queue name="p" type="parent">\n<reservation/>\n</queue>', 3, "reservation"),
    ('<queue name="q">\n  <maxRunningApps>ten</maxRunningApps>\n</queue>', 4, "maxRunningApps"),
    ('<queue name="q">\n<weight>heavy</weight>\n</queue>', 4, "<weight>: not a number"),
    ('<queue name="q">\n<minResources>1024</minResources>\n</queue>', 4, "Missing resource"),
    ('<queue name="q">\n<minResources>50%</minResources>\n</queue>', 4, "percentage"),
    ('<queue name="q">\n<maxResources></maxResources>\n</queue>', 4, "has no value"),
    ('<queue name="q">\n<schedulingPolicy>lottery</schedulingPolicy>\n</queue>', 4, "lottery"),
    ("<defaultQueueSchedulingPolicy>fifo</defaultQueueSchedulingPolicy>", 3, "can't be FIFO"),
    ('<queue name="p" type="parent"><schedulingPolicy>fifo</schedulingPolicy></queue>', 3, "fifo"),
    ('<queue name="q"><schedulingPolicy>drf</schedulingPolicy></queue>', 3, "not allowed"),
    (PPOL.format("<rule name='default'/>\n<rule name='user'/>"), 5, "can never be reached"),
    (PPOL.format("<rule name='specified'/>"), 4, "Could get past last queue placement rule"),
    (PPOL.format("<rule name='magic'/>"), 4, "No rule class found for magic"),
    (PPOL.format("<rule name='nestedUserQueue'/>\n<rule name='default'/>"), 4, "No nested rule"),
    ("<queue name='q'>\n<weight>1</weight>\n</queue", 6, "malformed XML"),
]


@pytest.mark.parametrize(("body", "line", "message"), BAD_FILES)
def test_invalid_allocation_files_name_the_element_and_line(
    tmp_path: Path, body: str, line: int, message: str
):
    """AllocationFileLoaderService failures, reported as InputError(path, line)."""
    path = write_alloc(tmp_path, body)
    with pytest.raises(InputError) as err:
        load(path)
    assert err.value.path == str(path)
    assert err.value.where == line
    assert message in err.value.message


def test_wrong_root_element_is_reported(tmp_path: Path):
    """AllocationFileLoaderService: top-level element not <allocations>."""
    path = tmp_path / "f.xml"
    path.write_text("<configuration>\n</configuration>\n")
    with pytest.raises(InputError, match="top-level element not <allocations>"):
        load(path)


# --- resource values -----------------------------------------------------------------------------
def res(text: str, cluster: Resource | None = None, missing: int = LONG_MAX, types=()) -> Resource:
    return parse_resource(text, missing, tuple(types)).get(cluster or Resource())


def test_parse_resource_config_value():
    """TestFairSchedulerConfiguration.testParseResourceConfigValue"""
    expected = Resource(5 * 1024, 2)
    cluster = Resource(10 * 1024, 4)
    for text in (
        "2 vcores, 5120 mb",
        "5120 mb, 2 vcores",
        "2vcores,5120mb",
        "5120mb,2vcores",
        "5120mb   mb, 2    vcores",
        "5120 Mb, 2 vCores",
        "  5120 mb, 2 vcores  ",
        "  5120.3 mb, 2.35 vcores  ",
        "  5120. mb, 2. vcores  ",
    ):
        assert res(text) == expected, text
    for text in (
        "50% memory, 50% cpu",
        "50% Memory, 50% CpU",
        "50 % memory, 50 % cpu",
        "50%memory,50%cpu",
        "  50  %  memory,  50  %  cpu  ",
        "50.% memory, 50.% cpu",
        "50%",
    ):
        assert res(text, cluster) == expected, text
    assert res("50% memory, 100% cpu", cluster) == Resource(5120, 4)
    assert res(" 100% cpu, 50% memory", cluster) == Resource(5120, 4)
    assert res("50% memory, 0% cpu", cluster) == Resource(5120, 0)
    assert res("10.9% memory, 50.6% cpu", cluster) == Resource(int(1024 * 10 * 0.109), 2)

    types = ("test1",)
    with_test = Resource(5120, 2, {"test1": LONG_MAX})
    for text in (
        "vcores=2, memory-mb=5120",
        "memory-mb=5120, vcores=2",
        " vcores = 2 , memory-mb = 5120 ",
    ):
        assert res(text, types=types) == with_test
        assert res(text, missing=0, types=types) == Resource(5120, 2, {"test1": 0})
    cluster = Resource(10 * 1024, 4, {"test1": 8})
    expected = Resource(5120, 2, {"test1": 4})
    assert res("50%", cluster, types=types) == expected
    assert res("test1=4, vcores=2, memory-mb=5120", types=types) == expected
    pct = Resource(4096, 3, {"test1": 8})
    assert res("vcores=75%, memory-mb=40%", cluster, types=types) == pct
    assert res(" vcores = 75 % , memory-mb = 40 % ", cluster, types=types) == pct
    assert res("vcores=75%, memory-mb=40%, test1=50%", cluster, types=types) == Resource(
        4096, 3, {"test1": 4}
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1024", "Missing resource: mb"),  # testNoUnits
        ("1024mb", "Missing resource: vcores"),  # testOnlyMemory
        ("1024vcores", "Missing resource: mb"),  # testOnlyCPU
        ("1o24vc0res", "Missing resource: mb"),  # testGibberish
        ("95%, 50% memory", "Missing resource: cpu"),  # testNoUnitsPercentage
        ("95A% cpu, 50% memory", "Missing resource: cpu"),  # testInvalidNumPercentage
        ("50% cpu, 1024 mb", "Missing resource: memory"),  # testCpuPercentageMemoryAbsolute
        ("50% memory, 2 vcores", "Missing resource: cpu"),  # testMemoryPercentageCpuAbsolute
        ("-10% memory, 50% cpu", "percentage should not be negative"),
        ("10% memory, -10% cpu", "percentage should not be negative"),
        ("-2 vcores,5120 mb", "Invalid value of vcores"),  # testAbsoluteVcoresNegative
        ("2 vcores,-5120 mb", "Invalid value of memory"),  # testAbsoluteMemoryNegative
        ("  5120.3 mb, -2.35 vcores  ", "Invalid value of vcores"),
        ("memory-mb=-5120,vcores=2", "Invalid value of memory"),
        ("memory-mb=5120,vcores=-2", "Invalid value of vcores"),
        ("vcores=2,memory-mb=5120,test1=-4", "Invalid value of test1"),
        ("vcores=-75%,memory-mb=40%", "is either not a non-negative number"),
        ("vcores=75%, memory-mb=-40%", "is either not a non-negative number"),
        ("vcores=2,gpus=1", 'The resource name, "gpus" was not recognized'),
        ("vcores=two,memory-mb=1", "must all be integers"),
    ],
)
def test_parse_resource_config_value_errors(text: str, message: str):
    """TestFairSchedulerConfiguration's failure cases (testNoUnits ... negative values)."""
    with pytest.raises(ValueError, match=message):
        parse_resource(text, LONG_MAX, ("test1",))


def test_allocation_increment_memory_default_unit():
    """TestFairSchedulerConfiguration.testAllocationIncrementMemoryDefaultUnit"""
    conf = Configuration({"yarn.resource-types.memory-mb.increment-allocation": "256"})
    inc = FairSettings.from_conf(conf, Resource(0, 0), Resource(LONG_MAX, LONG_MAX)).increment
    lo, hi = Resource(0, 0), Resource(LONG_MAX, LONG_MAX)
    assert [normalize(Resource(m, 0), lo, hi, inc).memory for m in (769, 1023, 1024, 1025)] == [
        1024,
        1024,
        1024,
        1280,
    ]


def test_acl_parsing():
    """AccessControlList: "users groups", "*" for everyone, " " for nobody."""
    assert AccessControlList("*").allows("anyone", ())
    assert not AccessControlList(" ").allows("anyone", ("g",))
    acl = AccessControlList("alice,bob admins,ops")
    assert acl.allows("bob", ()) and acl.allows("zed", ("ops",)) and not acl.allows("zed", ("dev",))
    assert AccessControlList(" ops").allows("x", ("ops",))


# --- TestQueuePlacementPolicy --------------------------------------------------------------
def simple_groups(user: str) -> tuple[str, ...]:
    """Hadoop's SimpleGroupsMapping."""
    return (user + "group", user + "subgroup1", user + "subgroup2")


def policy(tmp_path: Path, rules: str, leaves=(), parents=()) -> PlacementPolicy:
    conf = load(write_alloc(tmp_path, f"<queuePlacementPolicy>{rules}</queuePlacementPolicy>"))
    assert conf.placement_rules is not None
    configured = ConfiguredQueues(frozenset(leaves), frozenset(parents))
    return PlacementPolicy(conf.placement_rules, configured, simple_groups)


def test_specified_user_policy(tmp_path: Path):
    """TestQueuePlacementPolicy.testSpecifiedUserPolicy"""
    p = policy(tmp_path, "<rule name='specified'/><rule name='user'/>")
    assert p.assign("specifiedq", "someuser") == "root.specifiedq"
    assert p.assign("default", "someuser") == "root.someuser"
    assert p.assign("default", "otheruser") == "root.otheruser"


def test_no_create(tmp_path: Path):
    """TestQueuePlacementPolicy.testNoCreate"""
    p = policy(
        tmp_path,
        "<rule name='specified'/><rule name='user' create='false'/><rule name='default'/>",
        leaves=["root.someuser"],
    )
    assert p.assign("specifiedq", "someuser") == "root.specifiedq"
    assert p.assign("default", "someuser") == "root.someuser"
    assert p.assign("specifiedq", "otheruser") == "root.specifiedq"
    assert p.assign("default", "otheruser") == "root.default"


def test_specified_then_reject(tmp_path: Path):
    """TestQueuePlacementPolicy.testSpecifiedThenReject"""
    p = policy(tmp_path, "<rule name='specified'/><rule name='reject'/>")
    assert p.assign("specifiedq", "someuser") == "root.specifiedq"
    assert p.assign("default", "someuser") is None


def test_terminals(tmp_path: Path):
    """TestQueuePlacementPolicy.testTerminals: a default rule that may not
    create fails at runtime."""
    p = policy(
        tmp_path,
        "<rule name='secondaryGroupExistingQueue' create='true'/>"
        "<rule name='default' queue='otherdefault' create='false'/>",
    )
    with pytest.raises(PlacementError):
        p.assign("root.otherdefault", "user1")


def test_default_rule_with_queue_attribute(tmp_path: Path):
    """TestQueuePlacementPolicy.testDefaultRuleWithQueueAttribute"""
    p = policy(
        tmp_path,
        "<rule name='specified' create='false'/><rule name='default' "
        "queue='root.someDefaultQueue'/>",
        leaves=["root.someDefaultQueue"],
    )
    assert p.assign("root.default", "user1") == "root.someDefaultQueue"


def test_nested_user_queue_primary_group(tmp_path: Path):
    """TestQueuePlacementPolicy.testNestedUserQueuePrimaryGroup"""
    rules = (
        "<rule name='specified' create='false'/>"
        "<rule name='nestedUserQueue'><rule name='primaryGroup'/></rule><rule name='default'/>"
    )
    p = policy(tmp_path, rules, leaves=["root.specifiedq", "root.user3group"])
    assert p.assign("root.default", "user1") == "root.user1group.user1"
    assert p.assign("root.specifiedq", "user2") == "root.specifiedq"
    assert p.assign("root.default", "user3") == "root.default"


def test_nested_user_queue_primary_group_no_create(tmp_path: Path):
    """TestQueuePlacementPolicy.testNestedUserQueuePrimaryGroupNoCreate"""
    rules = (
        "<rule name='nestedUserQueue'><rule name='primaryGroup' create='false'/></rule>"
        "<rule name='default'/>"
    )
    assert policy(tmp_path, rules).assign("root.default", "user1") == "root.default"
    p = policy(tmp_path, rules, parents=["root.user1group"])
    assert p.assign("root.default", "user1") == "root.user1group.user1"
    both = (
        "<rule name='nestedUserQueue' create='false'><rule name='primaryGroup' create='false'/>"
        "</rule><rule name='default'/>"
    )
    assert (
        policy(tmp_path, both, parents=["root.user1group"]).assign("root.default", "user2")
        == "root.default"
    )
    p = policy(tmp_path, both, leaves=["root.user2group.user2"], parents=["root.user2group"])
    assert p.assign("root.default", "user2") == "root.user2group.user2"


def test_nested_user_queue_secondary_group(tmp_path: Path):
    """TestQueuePlacementPolicy.testNestedUserQueueSecondaryGroup"""
    rules = (
        "<rule name='nestedUserQueue'><rule name='secondaryGroupExistingQueue'/></rule>"
        "<rule name='default'/>"
    )
    assert policy(tmp_path, rules).assign("root.default", "user1") == "root.default"
    p = policy(tmp_path, rules, parents=["root.user1subgroup1"])
    assert p.assign("root.default", "user1") == "root.user1subgroup1.user1"


def test_nested_user_queue_specific_and_default_rules(tmp_path: Path):
    """TestQueuePlacementPolicy.testNestedUserQueueSpecificRule and
    testNestedUserQueueDefaultRule"""
    rules = (
        "<rule name='nestedUserQueue'><rule name='specified' create='false'/></rule>"
        "<rule name='default'/>"
    )
    p = policy(tmp_path, rules, parents=["root.parent1", "root.parent2"])
    assert p.assign("root.parent1", "user1") == "root.parent1.user1"
    assert p.assign("root.parent2", "user2") == "root.parent2.user2"
    rules = (
        "<rule name='specified' create='false'/>"
        "<rule name='nestedUserQueue'><rule name='default' queue='root.parentq'/></rule>"
        "<rule name='default'/>"
    )
    assert (
        policy(tmp_path, rules, parents=["root.parentq"]).assign("root.default", "user1")
        == "root.parentq.user1"
    )


def test_user_contains_period(tmp_path: Path):
    """TestQueuePlacementPolicy.testUserContainsPeriod"""
    assert (
        policy(tmp_path, "<rule name='user'/>").assign("default", "first.last")
        == "root.first_dot_last"
    )
    rules = (
        "<rule name='specified' create='false'/>"
        "<rule name='nestedUserQueue'><rule name='default'/></rule><rule name='default'/>"
    )
    assert (
        policy(tmp_path, rules).assign("root.default", "first.last")
        == "root.default.first_dot_last"
    )


def test_empty_groups_primary_group_rule(tmp_path: Path):
    """TestQueuePlacementPolicy.testEmptyGroupsPrimaryGroupRule"""
    conf = load(
        write_alloc(
            tmp_path,
            "<queuePlacementPolicy><rule name='primaryGroup' create='false'/>"
            "<rule name='default'/></queuePlacementPolicy>",
        )
    )
    assert conf.placement_rules is not None
    p = PlacementPolicy(conf.placement_rules, conf.configured, lambda user: ())
    with pytest.raises(PlacementError, match="No groups returned for user user1"):
        p.assign("root.fake", "user1")


def test_policy_from_yarn_site_properties():
    """QueuePlacementPolicy.fromConfiguration: allow-undeclared-pools and user-as-default-queue."""
    configured = ConfiguredQueues(frozenset({"root.declared"}), frozenset())
    p = PlacementPolicy.from_settings(True, True, configured, simple_groups)
    assert p.assign("default", "bob") == "root.bob"
    assert p.assign("adhoc", "bob") == "root.adhoc"
    p = PlacementPolicy.from_settings(False, True, configured, simple_groups)
    assert p.assign("adhoc", "bob") == "root.default"
    assert p.assign("declared", "bob") == "root.declared"
    p = PlacementPolicy.from_settings(True, False, configured, simple_groups)
    assert p.assign("default", "bob") == "root.default"


def test_group_mapping_property():
    """hadoop.user.group.static.mapping.overrides, Hadoop's format."""
    conf = Configuration({"hadoop.user.group.static.mapping.overrides": "a=g1,g2;b=;dr.who=;"})
    s = FairSettings.from_conf(conf, Resource(1024, 1), Resource(8192, 4))
    assert s.groups_of("a") == ("g1", "g2")
    assert s.groups_of("b") == ()
    assert s.groups_of("nobody") == ()
    bad = Configuration({"hadoop.user.group.static.mapping.overrides": "a:g1"}, source="site.xml:7")
    with pytest.raises(InputError, match="invalid entry"):
        FairSettings.from_conf(bad, Resource(1024, 1), Resource(8192, 4))


def test_allocation_file_path_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """AllocationFileLoaderService.getAllocationFile: an absolute path as is; a
    relative one against the file that set it (here a scenario, as emu's
    native loader records it), else the working directory; unset, the default
    fair-scheduler.xml where the configuration came from (Hadoop's
    classpath), else none."""
    from emu.rm.scheduler.fair.settings import ALLOCATION_FILE, allocation_file_path

    conf_dir, work = tmp_path / "conf", tmp_path / "work"
    conf_dir.mkdir()
    work.mkdir()
    monkeypatch.chdir(work)
    scenario = conf_dir / "s.toml"
    scenario.write_text("")

    conf = Configuration()
    conf.set(ALLOCATION_FILE, "alloc.xml", f"{scenario}: config.{ALLOCATION_FILE}")
    assert allocation_file_path(conf) == (conf_dir / "alloc.xml", True)
    conf.set(ALLOCATION_FILE, "alloc.xml", "command line")
    assert allocation_file_path(conf) == (work / "alloc.xml", True)
    conf.set(ALLOCATION_FILE, str(tmp_path / "abs.xml"), "command line")
    assert allocation_file_path(conf) == (tmp_path / "abs.xml", True)

    site = conf_dir / "yarn-site.xml"
    site.write_text("<configuration/>")
    conf = Configuration()
    conf.set("yarn.resourcemanager.scheduler.class", "fair", f"{site}:3")
    assert allocation_file_path(conf) == (None, False)
    (work / "fair-scheduler.xml").write_text("<allocations/>")
    assert allocation_file_path(conf) == (work / "fair-scheduler.xml", False)
    (conf_dir / "fair-scheduler.xml").write_text("<allocations/>")
    assert allocation_file_path(conf) == (conf_dir / "fair-scheduler.xml", False)
