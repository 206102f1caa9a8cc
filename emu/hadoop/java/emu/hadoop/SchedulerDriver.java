package emu.hadoop;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.util.ReflectionUtils;
import org.apache.hadoop.net.NodeBase;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeLabel;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.ResourceUtilization;
import org.apache.hadoop.yarn.conf.ConfigurationProvider;
import org.apache.hadoop.yarn.conf.ConfigurationProviderFactory;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException;
import org.apache.hadoop.yarn.event.Dispatcher;
import org.apache.hadoop.yarn.event.Event;
import org.apache.hadoop.yarn.event.EventHandler;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.RMContextImpl;
import org.apache.hadoop.yarn.server.resourcemanager.ahs.RMApplicationHistoryWriter;
import org.apache.hadoop.yarn.server.resourcemanager.metrics.NoOpSystemMetricPublisher;
import org.apache.hadoop.yarn.server.resourcemanager.monitor.capacity.ProportionalCapacityPreemptionPolicy;
import org.apache.hadoop.yarn.server.resourcemanager.nodelabels.RMNodeLabelsManager;
import org.apache.hadoop.yarn.server.resourcemanager.placement.ApplicationPlacementContext;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.AbstractCSQueue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.AutoCreatedQueueDeletionPolicy;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CSQueue;
import org.apache.hadoop.yarn.server.resourcemanager.placement.PlacementManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.event.RMAppAttemptContainerFinishedEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.ContainerAllocationExpirer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerImpl;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNodeCleanContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.UpdatedContainerInfo;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacitySchedulerConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.ResourceCommitRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.CandidateNodeSet;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.MultiNodePolicySpec;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.MultiNodeSorter;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.MultiNodeSortingManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.constraint.AllocationTagsManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.constraint.MemoryPlacementConstraintManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerExpiredSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeResourceUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.AllocationFileLoaderService;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FSAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FSContext;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.security.ClientToAMTokenSecretManagerInRM;
import org.apache.hadoop.yarn.server.resourcemanager.security.NMTokenSecretManagerInRM;
import org.apache.hadoop.yarn.server.resourcemanager.security.RMContainerTokenSecretManager;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.util.Clock;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;

/**
 * Drives one of Hadoop's own schedulers, single-threaded, on emu's virtual
 * clock, as Hadoop's scheduler tests do: the scheduler is constructed,
 * given a context and initialised but never started, so none of its threads
 * run; emu calls what those threads would (update, the preemption policy's
 * editSchedule, the auto-created queue deletion policy) at their intervals of simulated time.
 *
 * emu's RM keeps its own entities (apps, attempts, nodes, containers) and
 * tells this driver what happened to them; the driver stands in for the
 * parts of YARN's RM that the scheduler reads (RMNode, RMApp, RMAppAttempt,
 * the dispatcher) and answers each call with what the scheduler did. The
 * calls and the answers are SchedulerBackend's (the contract with emu's
 * Python side, declared there).
 */
public final class SchedulerDriver implements SchedulerBackend {
  private static final long EPOCH_MS = 1_000_000_000_000L;

  /** The scheduler's clock: emu's simulated time, set at every call. */
  private static final class VirtualClock implements Clock {
    long now = EPOCH_MS;

    @Override
    public long getTime() {
      return now;
    }
  }

  /** A dispatcher that queues what the scheduler and its entities send; drained after each call. */
  private final class QueueDispatcher implements Dispatcher {
    final ArrayDeque<Event> queue = new ArrayDeque<>();
    final EventHandler<Event> handler = queue::add;

    @Override
    public EventHandler<Event> getEventHandler() {
      return handler;
    }

    @Override
    @SuppressWarnings("rawtypes")
    public void register(Class<? extends Enum> eventType, EventHandler h) {}
  }

  /** What YARN's RMNode tells the scheduler, for one emu node. */
  private static final class Node {
    final NodeId id;
    final String emuId;
    final String host;
    final String rack;
    Resource total;
    final Set<String> labels;
    final List<UpdatedContainerInfo> updates = new ArrayList<>(1);
    RMNode proxy;

    Node(NodeId id, String emuId, String host, String rack, Resource total, Set<String> labels) {
      this.id = id;
      this.emuId = emuId;
      this.host = host;
      this.rack = rack;
      this.total = total;
      this.labels = labels;
    }
  }

  /** What YARN's RMApp and RMAppAttempt tell the scheduler, for one emu app. */
  private static final class App {
    final ApplicationId id;
    final String user;
    final List<ResourceRequest> amRequests;
    final ApplicationSubmissionContext context;
    RMApp proxy;
    ApplicationAttemptId currentAttempt;
    /** Its queue's default-node-label-expression when it was placed (null: none). */
    String queueLabel;
    final Map<ApplicationAttemptId, Attempt> attempts = new HashMap<>();

    App(ApplicationId id, String user, List<ResourceRequest> amRequests, ApplicationSubmissionContext context) {
      this.id = id;
      this.user = user;
      this.amRequests = amRequests;
      this.context = context;
    }
  }

  private static final class Attempt {
    final ApplicationAttemptId id;
    Container master;
    RMAppAttempt proxy;
    final RMAppAttemptMetrics metrics;

    Attempt(ApplicationAttemptId id, RMContext context) {
      this.id = id;
      this.metrics = new RMAppAttemptMetrics(id, context);
    }
  }

  private final VirtualClock clock = new VirtualClock();
  private final QueueDispatcher dispatcher = new QueueDispatcher();
  private final YarnConfiguration conf;
  private final RMContextImpl context;
  private final AbstractYarnScheduler<?, ?> scheduler;
  private final RMNodeLabelsManager labels;
  private final RMContainerTokenSecretManager containerTokens;
  private final NMTokenSecretManagerInRM nmTokens;
  private final long clusterTimestamp;
  private final Map<String, Node> nodes = new HashMap<>();
  private final Map<NodeId, Node> nodesById = new HashMap<>();
  private final Map<ApplicationId, App> apps = new HashMap<>();
  /** One entry per CONTAINER_ALLOCATED event (an attempt once per container), in the order the
   *  scheduler placed them. */
  private final List<ApplicationAttemptId> allocatedTo = new ArrayList<>();
  private Reply.Builder out = new Reply.Builder();
  private final Map<ApplicationId, RMApp> rmApps;
  private ProportionalCapacityPreemptionPolicy capacityPreemption;
  private AutoCreatedQueueDeletionPolicy queueDeletion;
  /** Per dynamic queue: the wall-clock stamp of its last submission as last seen, and the
   *  simulated time it was seen at (AbstractCSQueue.isInactiveDynamicQueue reads the wall clock). */
  private final Map<String, long[]> submissionStamps = new HashMap<>();
  private FairPreemption fairPreemption;
  /** CapacityScheduler's asynchronous scheduling, driven by emu's clock; null when it is off. */
  private AsyncPasses asyncPasses;
  /** Each node's last heartbeat (or registration) in emu's simulated milliseconds. */
  private final Map<NodeId, Long> lastBeat = new HashMap<>();

  /**
   * CapacityScheduler's asynchronous scheduling (schedule-asynchronously.enable, Hadoop 3.5's
   * default) with emu's clock in place of its threads. The scheduler is initialised, never started,
   * so its AsyncScheduleThreads and ResourceCommitterService exist and never run: a node heartbeat
   * then allocates nothing (CapacityScheduler.nodeUpdate), and the proposals a pass makes wait in
   * the committer's backlog, which {@link #commit} empties as the committer thread would, one
   * proposal at a time. emu calls {@link #pass} every scheduling-interval-ms of simulated time.
   */
  private final class AsyncPasses {
    final CapacityScheduler cs;
    final long intervalMs;
    final int threads;
    final long skipNodeIntervalMs;
    final Method allocateToNode;
    final Field committerField;
    final Field backlogField;
    final Field confField;

    private AsyncPasses(CapacityScheduler cs, long intervalMs, int threads, long skipNodeIntervalMs)
        throws ReflectiveOperationException {
      this.cs = cs;
      this.intervalMs = intervalMs;
      this.threads = threads;
      this.skipNodeIntervalMs = skipNodeIntervalMs;
      allocateToNode = CapacityScheduler.class.getDeclaredMethod("allocateContainersToNode", NodeId.class,
          boolean.class);
      allocateToNode.setAccessible(true);
      confField = CapacityScheduler.class.getDeclaredField("asyncSchedulingConf");
      confField.setAccessible(true);
      Class<?> confClass = confField.getType();
      committerField = confClass.getDeclaredField("resourceCommitterService");
      committerField.setAccessible(true);
      backlogField = committerField.getType().getDeclaredField("backlogs");
      backlogField.setAccessible(true);
    }

    /**
     * One tick: each thread's CapacityScheduler.schedule in turn, with the start node emu drew
     * (java.util.Random.nextInt over the node count, as Hadoop draws it). schedule offers every node
     * of ClusterNodeTracker.getAllNodes from the start to the end, then from the first to the
     * start again, the start included twice, as Hadoop's loops do; each node once, without the
     * heartbeat's multiple assignments (allocateContainersToNode(nodeId, false)), skipping a node
     * whose last heartbeat is older than skipNodeInterval on emu's clock (shouldSkipNodeSchedule).
     */
    void pass(int[] starts) throws ReflectiveOperationException {
      if (multiNode != null) {
        for (int start : starts) {
          multiNode.pass(start);
        }
        return;
      }
      for (int start : starts) {
        List<FiCaSchedulerNode> all = cs.getNodeTracker().getAllNodes();
        int current = 0;
        for (FiCaSchedulerNode n : all) {
          if (current++ >= start) {
            offer(n);
          }
        }
        current = 0;
        for (FiCaSchedulerNode n : all) {
          if (current++ > start) {
            break;
          }
          offer(n);
        }
      }
    }

    private void offer(FiCaSchedulerNode n) throws ReflectiveOperationException {
      Long beat = lastBeat.get(n.getNodeID());
      if (beat == null || clock.now - EPOCH_MS - beat > skipNodeIntervalMs) {
        return;
      }
      allocateToNode.invoke(cs, n.getNodeID(), false);
      commit();
    }

    /** ResourceCommitterService's work: each waiting proposal tried in turn (CapacityScheduler.tryCommit). */
    @SuppressWarnings("unchecked")
    void commit() throws ReflectiveOperationException {
      Object committer = committerField.get(confField.get(cs));
      if (committer == null) {
        return;
      }
      java.util.concurrent.BlockingQueue<ResourceCommitRequest<FiCaSchedulerApp, FiCaSchedulerNode>> backlog =
          (java.util.concurrent.BlockingQueue<ResourceCommitRequest<FiCaSchedulerApp, FiCaSchedulerNode>>)
              backlogField.get(committer);
      ResourceCommitRequest<FiCaSchedulerApp, FiCaSchedulerNode> r;
      while ((r = backlog.poll()) != null) {
        cs.tryCommit(cs.getClusterResource(), r, true);
      }
    }
  }

  /**
   * Global scheduling with multi-node placement, on emu's clock. The RM's MultiNodeSortingManager is
   * made and initialised as the ResourceManager does, never started: its sorters (one per policy
   * class, as createAllPolicies makes them) are made here and initialised, not started, so no sorter
   * thread runs. A sorter with a sorting interval is marked running (its handler set), so that apps
   * walk the order of its last run, and {@link #sortNodes} runs it at emu's instants; one with
   * interval 0 sorts on every use, as in Hadoop. Hadoop judges a node's last heartbeat on the wall
   * clock (SchedulerUtils.isNodeHeartbeated): before each scheduling call every node's heartbeat
   * stamp is set so that the wall clock gives emu's verdict.
   */
  private final class MultiNode {
    final CapacityScheduler cs;
    final Map<MultiNodeSorter<?>, Long> sorters = new java.util.LinkedHashMap<>();
    final long intervalMs;
    final long skipNodeIntervalMs;
    final Field beatField;
    final Method candidatesOf;
    final Method allocateToCandidates;

    @SuppressWarnings({"unchecked", "rawtypes"})
    MultiNode(CapacityScheduler cs, MultiNodeSortingManager<?> manager) throws ReflectiveOperationException {
      this.cs = cs;
      skipNodeIntervalMs = YarnConfiguration.getSkipNodeInterval(conf);
      Field specsField = MultiNodeSortingManager.class.getDeclaredField("policySpecs");
      specsField.setAccessible(true);
      Field runningField = MultiNodeSortingManager.class.getDeclaredField("runningMultiNodeSorters");
      runningField.setAccessible(true);
      Map<String, MultiNodeSorter> running = (Map<String, MultiNodeSorter>) runningField.get(manager);
      Field handler = MultiNodeSorter.class.getDeclaredField("handler");
      handler.setAccessible(true);
      long gcd = 0;
      for (MultiNodePolicySpec spec : (Set<MultiNodePolicySpec>) specsField.get(manager)) {
        MultiNodeSorter sorter = new MultiNodeSorter(context, spec);
        sorter.init(conf);
        long interval = spec.getSortingInterval();
        if (interval != 0) {
          handler.set(sorter, new NeverRuns());
          gcd = gcd == 0 ? interval : java.math.BigInteger.valueOf(gcd).gcd(java.math.BigInteger.valueOf(interval)).longValue();
        }
        // 3.5.0 names a sorter by its policy's class (getPolicyClassName), 3.4.2 by getPolicyName:
        // the same string, the class's name.
        Method name;
        try {
          name = MultiNodePolicySpec.class.getMethod("getPolicyClassName");
        } catch (NoSuchMethodException e) {
          name = MultiNodePolicySpec.class.getMethod("getPolicyName");
        }
        MultiNodeSorter previous = running.put((String) name.invoke(spec), sorter);
        if (previous != null) {
          sorters.remove(previous);
        }
        sorters.put(sorter, interval);
      }
      intervalMs = gcd;
      beatField = SchedulerNode.class.getDeclaredField("lastHeartbeatMonotonicTime");
      beatField.setAccessible(true);
      candidatesOf = CapacityScheduler.class.getDeclaredMethod("getCandidateNodeSet", String.class);
      candidatesOf.setAccessible(true);
      allocateToCandidates = CapacityScheduler.class.getDeclaredMethod("allocateContainersToNode",
          CandidateNodeSet.class, boolean.class);
      allocateToCandidates.setAccessible(true);
    }

    /** The sorters due at `now` (a multiple of their interval) re-sort. */
    void sort(long now) {
      for (Map.Entry<MultiNodeSorter<?>, Long> e : sorters.entrySet()) {
        if (e.getValue() > 0 && now % e.getValue() == 0) {
          e.getKey().reSortClusterNodes();
        }
      }
    }

    /** Every node's heartbeat stamp set so that Hadoop's wall-clock test agrees with emu's clock. */
    void stampHeartbeats() throws IllegalAccessException {
      long now = clock.now - EPOCH_MS;
      for (FiCaSchedulerNode n : cs.getNodeTracker().getAllNodes()) {
        Long beat = lastBeat.get(n.getNodeID());
        boolean fresh = beat != null && now - beat <= skipNodeIntervalMs;
        beatField.setLong(n, fresh ? Long.MAX_VALUE / 4 : Long.MIN_VALUE / 4);
      }
    }

    /** CapacityScheduler.schedule's multi-node branch from partition `start`: each partition (the start
     *  twice) offered as its heartbeated nodes, once per such node. */
    @SuppressWarnings("unchecked")
    void pass(int start) throws ReflectiveOperationException {
      stampHeartbeats();
      List<String> partitions = cs.getNodeTracker().getPartitions();
      int current = 0;
      for (String partition : partitions) {
        if (current++ >= start) {
          offer(partition);
        }
      }
      current = 0;
      for (String partition : partitions) {
        if (current++ > start) {
          break;
        }
        offer(partition);
      }
    }

    @SuppressWarnings("unchecked")
    private void offer(String partition) throws ReflectiveOperationException {
      CandidateNodeSet<FiCaSchedulerNode> candidates =
          (CandidateNodeSet<FiCaSchedulerNode>) candidatesOf.invoke(cs, partition);
      if (candidates == null) {
        return;
      }
      int count = candidates.getAllNodes().size();
      for (int i = 0; i < count; i++) {
        allocateToCandidates.invoke(cs, candidates, false);
        asyncPasses.commit();
      }
    }
  }

  /** A sorter's handler that marks it running; nothing runs. */
  private static final class NeverRuns implements java.util.concurrent.ScheduledFuture<Object> {
    public long getDelay(java.util.concurrent.TimeUnit unit) { return Long.MAX_VALUE; }
    public int compareTo(java.util.concurrent.Delayed o) { return 0; }
    public boolean cancel(boolean mayInterruptIfRunning) { return true; }
    public boolean isCancelled() { return false; }
    public boolean isDone() { return false; }
    public Object get() { return null; }
    public Object get(long timeout, java.util.concurrent.TimeUnit unit) { return null; }
  }

  /** Multi-node placement, when the CapacityScheduler has it on; null otherwise. */
  private MultiNode multiNode;

  @Override
  public int asyncBound() {
    return multiNode != null ? scheduler.getNodeTracker().getPartitions().size()
        : scheduler.getNodeTracker().nodeCount();
  }

  @Override
  public long nodeSortIntervalMs() {
    return multiNode == null ? 0 : multiNode.intervalMs;
  }

  @Override
  public Reply sortNodes(long now) {
    at(now);
    if (multiNode != null) {
      multiNode.sort(now);
    }
    return drain();
  }

  /** The passes a CapacityScheduler configured to schedule asynchronously needs; null otherwise. */
  private AsyncPasses asyncPassesOf(CapacityScheduler cs) throws ReflectiveOperationException {
    CapacitySchedulerConfiguration c = cs.getConfiguration();
    if (!c.getScheduleAynschronously()) {
      return null;
    }
    String prefix = CapacitySchedulerConfiguration.SCHEDULE_ASYNCHRONOUSLY_PREFIX;
    long interval = c.getLong(prefix + ".scheduling-interval-ms", 5);
    if (interval < 1) {
      throw new IllegalArgumentException(prefix + ".scheduling-interval-ms is " + interval
          + ": on a virtual clock a pass takes no time, so the interval must be at least 1 ms");
    }
    int threads = Math.max(c.getInt(prefix + ".maximum-threads", 1), 1);
    return new AsyncPasses(cs, interval, threads, YarnConfiguration.getSkipNodeInterval(conf));
  }

  /** Milliseconds between two asynchronous scheduling passes; 0 when the scheduler schedules on
   *  node heartbeats. */
  @Override
  public long asyncIntervalMs() {
    return asyncPasses == null ? 0 : asyncPasses.intervalMs;
  }

  /** How many passes each tick makes (schedule-asynchronously.maximum-threads). */
  @Override
  public int asyncThreads() {
    return asyncPasses == null ? 0 : asyncPasses.threads;
  }

  /** How many nodes hold a reservation: an app whose asks were met elsewhere may still hold one,
   *  which the next pass to offer that node gives up. */
  @Override
  public int reservedNodes() {
    int held = 0;
    for (SchedulerNode n : scheduler.getNodeTracker().getAllNodes()) {
      if (n.getReservedContainer() != null) {
        held++;
      }
    }
    return held;
  }

  /** One tick of asynchronous scheduling: a pass per thread, from the start nodes emu drew. */
  @Override
  public Reply asyncPass(long now, int[] starts) throws ReflectiveOperationException {
    at(now);
    if (asyncPasses == null) {
      return null;
    }
    drain();
    asyncPasses.pass(starts);
    return drain();
  }


  /**
   * What the FairScheduler's FSPreemptionThread does, on the virtual clock:
   * take each starved app the update found, identify containers to preempt
   * for it (the thread's own method, which also marks them for the AM), and
   * kill them warnTimeBeforeKill later, as its Timer task does. The thread
   * object is the one the scheduler built; it is never started. Its methods
   * are private, hence the reflection.
   */
  private final class FairPreemption {
    final Object thread;
    final Method identify;
    final Method triggered;
    final java.util.Queue<?> starved;
    final long warnBeforeKill;
    final long delayBeforeNextCheck;
    final TreeMap<Long, List<RMContainer>> kills = new TreeMap<>();

    FairPreemption(Object thread) throws ReflectiveOperationException {
      this.thread = thread;
      Class<?> tc = thread.getClass();
      identify = tc.getDeclaredMethod("identifyContainersToPreempt", FSAppAttempt.class);
      identify.setAccessible(true);
      triggered = FSAppAttempt.class.getDeclaredMethod("preemptionTriggered", long.class);
      triggered.setAccessible(true);
      warnBeforeKill = longField(tc, thread, "warnTimeBeforeKill");
      delayBeforeNextCheck = longField(tc, thread, "delayBeforeNextStarvationCheck");
      Method apps = FSContext.class.getDeclaredMethod("getStarvedApps");
      apps.setAccessible(true);
      Object starvedApps = apps.invoke(((FairScheduler) scheduler).getContext());
      Field queue = starvedApps.getClass().getDeclaredField("appsToProcess");
      queue.setAccessible(true);
      starved = (java.util.Queue<?>) queue.get(starvedApps);
    }

    /** The thread's loop, run until no starved app is waiting. */
    @SuppressWarnings("unchecked")
    void preempt() throws ReflectiveOperationException {
      Object app;
      while ((app = starved.poll()) != null) {
        List<RMContainer> chosen = (List<RMContainer>) identify.invoke(thread, app);
        if (!chosen.isEmpty()) {
          kills.computeIfAbsent(clock.now + warnBeforeKill, k -> new ArrayList<>()).addAll(chosen);
        }
        triggered.invoke(app, delayBeforeNextCheck);
      }
    }

    /** The Timer's kills that are due by now. */
    void killDue() {
      while (!kills.isEmpty() && kills.firstKey() <= clock.now) {
        for (RMContainer c : kills.pollFirstEntry().getValue()) {
          ContainerStatus status = SchedulerUtils.createPreemptedContainerStatus(c.getContainerId(),
              SchedulerUtils.PREEMPTED_CONTAINER);
          scheduler.completedContainer(c, status, RMContainerEventType.KILL);
        }
      }
    }
  }

  private static long longField(Class<?> cls, Object o, String name) throws ReflectiveOperationException {
    Field f = cls.getDeclaredField(name);
    f.setAccessible(true);
    return f.getLong(o);
  }

  public SchedulerDriver(String schedulerClass, String[] keys, String[] values, long clusterTimestamp)
      throws Exception {
    this.clusterTimestamp = clusterTimestamp;
    conf = new YarnConfiguration();
    for (int i = 0; i < keys.length; i++) {
      conf.set(keys[i], values[i]);
    }
    // Static registries outlive a scheduler: start each from nothing.
    DefaultMetricsSystem.setMiniClusterMode(true);
    QueueMetrics.clearQueueMetrics();
    ResourceUtils.resetResourceTypes(conf);
    // Users' groups as this configuration gives them (an RM reads its own core-site.xml; the
    // process-wide service may have been made earlier from a default configuration).
    org.apache.hadoop.security.Groups.getUserToGroupsMappingServiceWithLoadedConfiguration(conf);

    Class<?> cls;
    try {
      cls = Class.forName(schedulerClass);
    } catch (ClassNotFoundException e) {
      throw new IllegalArgumentException("class " + schedulerClass + " is not on the Hadoop classpath");
    }
    if (!ResourceScheduler.class.isAssignableFrom(cls) || !AbstractYarnScheduler.class.isAssignableFrom(cls)) {
      throw new IllegalArgumentException(
          "class " + schedulerClass + " is not a YARN ResourceScheduler (an AbstractYarnScheduler subclass)");
    }
    // As the RM builds it: ReflectionUtils also hands a Configurable scheduler its configuration.
    scheduler = (AbstractYarnScheduler<?, ?>) ReflectionUtils.newInstance(cls, conf);

    containerTokens = new RMContainerTokenSecretManager(conf);
    containerTokens.rollMasterKey();
    nmTokens = new NMTokenSecretManagerInRM(conf);
    nmTokens.rollMasterKey();
    ContainerAllocationExpirer expirer = new ContainerAllocationExpirer(dispatcher);
    context = new RMContextImpl(dispatcher, expirer, null, null, null, null, containerTokens, nmTokens,
        new ClientToAMTokenSecretManagerInRM(), (ResourceScheduler) scheduler);
    context.setYarnConfiguration(conf);
    // The RM's epoch, the top bits of its container ids (emu passes what its
    // own scheduler uses: the state store's, as a federation's RMs keep).
    org.apache.hadoop.yarn.server.resourcemanager.EmuRMEpoch.set(context, conf.getLong("emu.rm.epoch", 0L));
    context.setSystemClock(clock);
    context.setRMApplicationHistoryWriter(new RMApplicationHistoryWriter());
    context.setSystemMetricsPublisher(new NoOpSystemMetricPublisher());
    context.setAllocationTagsManager(new AllocationTagsManager(context));
    MemoryPlacementConstraintManager constraints = new MemoryPlacementConstraintManager();
    constraints.init(conf);
    context.setPlacementConstraintManager(constraints);
    context.setQueuePlacementManager(new PlacementManager());
    ConfigurationProvider provider = ConfigurationProviderFactory.getConfigurationProvider(conf);
    provider.init(conf);
    context.setConfigurationProvider(provider);
    labels = new RMNodeLabelsManager();
    labels.setRMContext(context);
    labels.init(conf);
    context.setNodeLabelManager(labels);
    rmApps = context.getRMApps();

    // As the ResourceManager makes it (createAndInitActiveServices); started there, never here.
    MultiNodeSortingManager<SchedulerNode> sorting = new MultiNodeSortingManager<>();
    sorting.setRMContext(context);
    context.setMultiNodeSortingManager(sorting);

    scheduler.setClock(clock);
    ((ResourceScheduler) scheduler).setRMContext(context);
    context.setScheduler((ResourceScheduler) scheduler);
    scheduler.init(conf);
    sorting.init(conf);
    if (scheduler instanceof CapacityScheduler) {
      asyncPasses = asyncPassesOf((CapacityScheduler) scheduler);
      if (((CapacityScheduler) scheduler).isMultiNodePlacementEnabled()) {
        multiNode = new MultiNode((CapacityScheduler) scheduler, sorting);
      }
    }
    // As a running RM ten seconds after its start: the largest node bounds an ask, not only the configuration.
    scheduler.getNodeTracker().setForceConfiguredMaxAllocation(false);
    if (scheduler instanceof FairScheduler) {
      Field t = FairScheduler.class.getDeclaredField("preemptionThread");
      t.setAccessible(true);
      if (t.get(scheduler) != null) {
        fairPreemption = new FairPreemption(t.get(scheduler));
      }
    }
    if (scheduler instanceof CapacityScheduler
        && conf.getBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS, YarnConfiguration.DEFAULT_RM_SCHEDULER_ENABLE_MONITORS)
        && conf.get(YarnConfiguration.RM_SCHEDULER_MONITOR_POLICIES, "").contains("ProportionalCapacityPreemptionPolicy")) {
      capacityPreemption = new ProportionalCapacityPreemptionPolicy(context, (CapacityScheduler) scheduler, clock);
    }
    if (scheduler instanceof CapacityScheduler
        && conf.getBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS, YarnConfiguration.DEFAULT_RM_SCHEDULER_ENABLE_MONITORS)
        && conf.get(YarnConfiguration.RM_SCHEDULER_MONITOR_POLICIES, "").contains("AutoCreatedQueueDeletionPolicy")) {
      queueDeletion = new AutoCreatedQueueDeletionPolicy();
      queueDeletion.init(conf, context, (CapacityScheduler) scheduler);
    }
    drain();
  }

  /** Milliseconds between two passes of the auto-created queue deletion policy; 0 when it does not run. */
  @Override
  public long queueDeletionIntervalMs() {
    return queueDeletion == null ? 0 : queueDeletion.getMonitoringInterval();
  }

  /** One pass of AutoCreatedQueueDeletionPolicy. The queues' submission stamps are first moved
   *  to the wall-clock instants that lie as far back as their submissions do in simulated time. */
  @Override
  public Reply deleteExpiredQueues(long now) throws ReflectiveOperationException {
    at(now);
    if (queueDeletion != null) {
      java.lang.reflect.Method set = AbstractCSQueue.class.getDeclaredMethod("setLastSubmittedTimestamp", long.class);
      set.setAccessible(true);
      long wall = org.apache.hadoop.util.Time.monotonicNow();
      for (CSQueue q : ((CapacityScheduler) scheduler).getCapacitySchedulerQueueManager().getQueues().values()) {
        long[] seen = submissionStamps.get(q.getQueuePath());
        if (seen != null && q instanceof AbstractCSQueue && ((AbstractCSQueue) q).isDynamicQueue()) {
          long stamp = wall - (clock.now - seen[1]);
          set.invoke(q, stamp);
          seen[0] = stamp;
        }
      }
      queueDeletion.editSchedule();
    }
    return drain();
  }

  /** Note the simulated time of every dynamic queue's new submission stamp. */
  private void noteSubmissionStamps() throws ReflectiveOperationException {
    if (queueDeletion == null) {
      return;
    }
    java.lang.reflect.Method get = AbstractCSQueue.class.getDeclaredMethod("getLastSubmittedTimestamp");
    get.setAccessible(true);
    for (CSQueue q : ((CapacityScheduler) scheduler).getCapacitySchedulerQueueManager().getQueues().values()) {
      if (q instanceof AbstractCSQueue && ((AbstractCSQueue) q).isDynamicQueue()) {
        long stamp = (Long) get.invoke(q);
        long[] seen = submissionStamps.get(q.getQueuePath());
        if (stamp != 0 && (seen == null || seen[0] != stamp)) {
          submissionStamps.put(q.getQueuePath(), new long[] {stamp, clock.now});
        }
      }
    }
  }

  /** An admin's queue refresh (`yarn rmadmin -refreshQueues`). The CapacityScheduler re-reads its
   *  configuration with `keys`/`values` set over the running one (reinitialize); the FairScheduler
   *  reloads its allocation file, or `allocationFile` when one is given (emu admin's --file). A
   *  refusal leaves the running queues as they were and is answered with its reason. */
  @Override
  public Reply refreshQueues(long now, String[] keys, String[] values, String allocationFile) {
    at(now);
    try {
      if (scheduler instanceof CapacityScheduler) {
        YarnConfiguration fresh = new YarnConfiguration(conf);
        for (int i = 0; i < keys.length; i++) {
          fresh.set(keys[i], values[i]);
        }
        ((CapacityScheduler) scheduler).reinitialize(fresh, context);
        for (int i = 0; i < keys.length; i++) {
          conf.set(keys[i], values[i]);
        }
      } else if (scheduler instanceof FairScheduler) {
        Field loaderField = FairScheduler.class.getDeclaredField("allocsLoader");
        loaderField.setAccessible(true);
        AllocationFileLoaderService loader = (AllocationFileLoaderService) loaderField.get(scheduler);
        Field fileField = AllocationFileLoaderService.class.getDeclaredField("allocFile");
        fileField.setAccessible(true);
        Object own = fileField.get(loader);
        if (allocationFile != null && !allocationFile.isEmpty()) {
          fileField.set(loader, new org.apache.hadoop.fs.Path("file://" + allocationFile));
        }
        try {
          if (fileField.get(loader) == null) {
            return Reply.refused("the FairScheduler has no allocation file to reload");
          }
          loader.reloadAllocations();
        } finally {
          fileField.set(loader, own);
        }
      }
    } catch (Exception e) {
      Throwable t = e;
      while (t.getCause() != null && (t.getMessage() == null || t.getMessage().isEmpty())) {
        t = t.getCause();
      }
      return Reply.refused(t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage());
    }
    return drain();
  }

  /** An operator's node-label change, applied as the RM applies it: to the RMNodeLabelsManager,
   *  which sends the scheduler a NodeLabelsUpdateSchedulerEvent for the nodes it changes. `op` is
   *  "add" (`names` with `exclusive`), "remove" (`names`) or "replace" (`names` are hosts, each
   *  with port `ports[i]`, and `values[i]` its label, "" for none). A refusal is answered with
   *  Hadoop's message and changes nothing. */
  @Override
  public Reply nodeLabels(long now, String op, String[] names, boolean[] exclusive, int[] ports,
      String[] values) {
    at(now);
    try {
      if (op.equals("add")) {
        List<NodeLabel> add = new ArrayList<>();
        for (int i = 0; i < names.length; i++) {
          add.add(NodeLabel.newInstance(names[i], exclusive[i]));
        }
        labels.addToCluserNodeLabels(add);
      } else if (op.equals("remove")) {
        labels.removeFromClusterNodeLabels(new HashSet<>(Arrays.asList(names)));
      } else {
        Map<NodeId, Set<String>> map = new HashMap<>();
        for (int i = 0; i < names.length; i++) {
          Set<String> set = new HashSet<>();
          if (!values[i].isEmpty()) {
            set.add(values[i]);
          }
          map.put(NodeId.newInstance(names[i], ports[i]), set);
        }
        labels.replaceLabelsOnNode(map);
      }
    } catch (IOException e) {
      return Reply.refused(e.getMessage());
    }
    for (Node node : nodes.values()) {
      Set<String> current = labels.getLabelsOnNode(node.id);
      node.labels.clear();
      if (current != null) {
        node.labels.addAll(current);
      }
    }
    return drain();
  }

  /** Milliseconds between two preemption-policy passes; 0 when no policy runs. */
  @Override
  public long preemptionIntervalMs() {
    return capacityPreemption == null ? 0 : capacityPreemption.getMonitoringInterval();
  }

  /** The scheduler's update interval (Fair's fair-share recomputation); 0 when it has none. */
  @Override
  public long updateIntervalMs() {
    if (scheduler instanceof FairScheduler) {
      return conf.getLong("yarn.scheduler.fair.update-interval-ms", 500);
    }
    return 0;
  }

  private void at(long now) {
    clock.now = EPOCH_MS + now;
    if (fairPreemption != null && !fairPreemption.kills.isEmpty()) {
      fairPreemption.killDue();
    }
  }

  // --- nodes ---------------------------------------------------------------------
  @Override
  public Reply addNode(long now, String emuId, String host, int port, String rack,
      long memory, int vcores, String[] extraNames, long[] extraValues, String[] nodeLabels)
      throws Exception {
    at(now);
    NodeId id = NodeId.newInstance(host, port);
    // Container tokens name the node's address; emu's hosts are not in DNS.
    NetUtils.addStaticResolution(host, "127.0.0.1");
    Set<String> names = new HashSet<>();
    if (nodeLabels != null && nodeLabels.length > 0) {
      List<NodeLabel> fresh = new ArrayList<>();
      for (String spec : nodeLabels) {
        String name = spec;
        boolean exclusive = true;
        int paren = spec.indexOf('(');
        if (paren >= 0) {
          name = spec.substring(0, paren).trim();
          exclusive = !spec.substring(paren).replace(" ", "").contains("exclusive=false");
        }
        names.add(name);
        if (!labels.containsNodeLabel(name)) {
          fresh.add(NodeLabel.newInstance(name, exclusive));
        }
      }
      if (!fresh.isEmpty()) {
        labels.addToCluserNodeLabels(fresh);
      }
      labels.replaceLabelsOnNode(Collections.singletonMap(id, names));
    }
    Node node = new Node(id, emuId, host, rack, resource(memory, vcores, extraNames, extraValues), names);
    node.proxy = nodeProxy(node);
    nodes.put(emuId, node);
    nodesById.put(id, node);
    lastBeat.put(id, now);
    labels.activateNode(id, node.total);
    drain();
    scheduler.handle(new NodeAddedSchedulerEvent(node.proxy));
    return drain();
  }

  @Override
  public Reply removeNode(long now, String emuId) {
    at(now);
    Node node = nodes.remove(emuId);
    if (node == null) {
      return null;
    }
    nodesById.remove(node.id);
    lastBeat.remove(node.id);
    scheduler.handle(new NodeRemovedSchedulerEvent(node.proxy));
    labels.deactivateNode(node.id);
    return drain();
  }

  @Override
  public Reply updateNodeResource(long now, String emuId, long memory, int vcores, String[] extraNames,
      long[] extraValues) {
    at(now);
    Node node = nodes.get(emuId);
    if (node == null) {
      return null;
    }
    node.total = resource(memory, vcores, extraNames, extraValues);
    scheduler.handle(new NodeResourceUpdateSchedulerEvent(node.proxy, ResourceOption.newInstance(node.total, -1)));
    return drain();
  }

  /** A node heartbeat: containers it started and finished since the last, then a scheduling pass. */
  @Override
  public Reply nodeUpdate(long now, String emuId, String[] launched, String[] completed, int[] exits,
      String[] diagnostics) {
    at(now);
    Node node = nodes.get(emuId);
    if (node == null) {
      return null;
    }
    if ((launched != null && launched.length > 0) || (completed != null && completed.length > 0)) {
      List<ContainerStatus> up = new ArrayList<>();
      List<ContainerStatus> done = new ArrayList<>();
      if (launched != null) {
        for (String cid : launched) {
          up.add(ContainerStatus.newInstance(ContainerId.fromString(cid), ContainerState.RUNNING, "",
              ContainerExitStatus.INVALID));
        }
      }
      if (completed != null) {
        for (int i = 0; i < completed.length; i++) {
          done.add(ContainerStatus.newInstance(ContainerId.fromString(completed[i]), ContainerState.COMPLETE,
              diagnostics[i], exits[i]));
        }
      }
      node.updates.add(new UpdatedContainerInfo(up, done, new ArrayList<>()));
    }
    lastBeat.put(node.id, now);
    if (multiNode != null) {
      try {
        multiNode.stampHeartbeats();
      } catch (IllegalAccessException x) {
        throw new IllegalStateException(x);
      }
    }
    scheduler.handle(new NodeUpdateSchedulerEvent(node.proxy));
    return drain();
  }

  // --- apps and attempts -------------------------------------------------------------
  @Override
  public Reply addApp(long now, String appId, String queue, String user, int priority, long amMemory,
      int amVcores, String[] extraNames, long[] extraValues, String labelExpression, boolean unmanaged)
      throws ReflectiveOperationException {
    at(now);
    ApplicationId id = ApplicationId.fromString(appId);
    ApplicationSubmissionContext asc = ApplicationSubmissionContext.newInstance(id, appId, queue,
        Priority.newInstance(priority), null, unmanaged, false, 2,
        resource(amMemory, amVcores, extraNames, extraValues), "MAPREDUCE");
    if (labelExpression != null && !labelExpression.isEmpty()) {
      asc.setNodeLabelExpression(labelExpression);
    }
    ResourceRequest amAsk = ResourceRequest.newInstance(Priority.newInstance(0), ResourceRequest.ANY,
        asc.getResource(), 1, true, labelExpression == null || labelExpression.isEmpty() ? null : labelExpression);
    // An unmanaged AM's app has no AM request (RMAppManager makes none for one).
    App app = new App(id, user, unmanaged ? null : Collections.singletonList(amAsk), asc);
    app.proxy = appProxy(app);
    apps.put(id, app);
    rmApps.put(id, app.proxy);
    ApplicationPlacementContext placement;
    try {
      placement = context.getQueuePlacementManager().placeApplication(asc, user);
    } catch (Exception e) {
      forget(id);
      out.rejected(appId, clean(e.getMessage()));
      return drain();
    }
    // A null placement keeps the submitted queue; the FairScheduler rejects such an app itself.
    if (placement != null) {
      asc.setQueue(placement.getFullQueuePath());
    }
    if (amAsk.getNodeLabelExpression() == null) {
      // RMAppManager.validateAndCreateResourceRequest normalizes the AM's ask
      // with its queue (SchedulerUtils.normalizeNodeLabelExpressionInRequest).
      app.queueLabel = queueDefaultLabel(asc.getQueue());
      amAsk.setNodeLabelExpression(app.queueLabel);
    }
    try {
      // ... and validates it (its size, a label the queue may not use): a
      // submission that fails is refused before the scheduler sees the app.
      ResourceRequest check = ResourceRequest.clone(amAsk);
      SchedulerUtils.normalizeAndValidateRequest(check, scheduler.getMaximumResourceCapability(asc.getQueue()),
          asc.getQueue(), false, context, null, YarnConfiguration.areNodeLabelsEnabled(conf));
    } catch (InvalidResourceRequestException e) {
      forget(id);
      out.rejected(appId, clean(e.getMessage()));
      return drain();
    }
    scheduler.handle(new AppAddedSchedulerEvent(id, placement != null ? placement.getFullQueuePath() : queue, user,
        false, null, Priority.newInstance(priority), placement));
    Reply answer = drain();
    noteSubmissionStamps();
    if (!scheduler.getSchedulerApplications().containsKey(id)) {
      forget(id);  // rejected
    }
    return answer;
  }

  /** A queue's default-node-label-expression, or null (none, or no such queue). */
  private String queueDefaultLabel(String queue) {
    try {
      QueueInfo info = scheduler.getQueueInfo(queue, false, false);
      String label = info == null ? null : info.getDefaultNodeLabelExpression();
      return label == null || label.trim().isEmpty() ? null : label.trim();
    } catch (Exception e) {
      return null;
    }
  }

  private void forget(ApplicationId id) {
    apps.remove(id);
    rmApps.remove(id);
  }

  @Override
  public Reply addAttempt(long now, String attemptId) {
    at(now);
    ApplicationAttemptId id = ApplicationAttemptId.fromString(attemptId);
    App app = apps.get(id.getApplicationId());
    Attempt attempt = new Attempt(id, context);
    attempt.proxy = attemptProxy(app, attempt);
    app.attempts.put(id, attempt);
    app.currentAttempt = id;
    scheduler.handle(new AppAttemptAddedSchedulerEvent(id, false));
    return drain();
  }

  @Override
  public Reply removeAttempt(long now, String attemptId, String finalState) {
    at(now);
    ApplicationAttemptId id = ApplicationAttemptId.fromString(attemptId);
    App app = apps.get(id.getApplicationId());
    if (app == null || !app.attempts.containsKey(id)) {
      return null;
    }
    scheduler.handle(new AppAttemptRemovedSchedulerEvent(id, RMAppAttemptState.valueOf(finalState), false));
    return drain();
  }

  @Override
  public Reply removeApp(long now, String appId, String finalState) {
    at(now);
    ApplicationId id = ApplicationId.fromString(appId);
    if (!apps.containsKey(id)) {
      return null;
    }
    scheduler.handle(new AppRemovedSchedulerEvent(id, RMAppState.valueOf(finalState)));
    Reply answer = drain();
    forget(id);
    return answer;
  }

  /** The AM's ask for its own container (RMAppAttemptImpl's ScheduleTransition). */
  @Override
  public Reply requestAm(long now, String attemptId) {
    at(now);
    ApplicationAttemptId id = ApplicationAttemptId.fromString(attemptId);
    App app = apps.get(id.getApplicationId());
    List<ResourceRequest> asks = new ArrayList<>();
    for (ResourceRequest r : app.amRequests) {
      asks.add(ResourceRequest.clone(r));
    }
    scheduler.allocate(id, asks, null, new ArrayList<>(), null, null, new ContainerUpdates());
    return drain();
  }

  @Override
  public Reply allocate(long now, String attemptId, int[] priorities, String[] names, long[] memory, int[] vcores,
      String[] extraNames, long[][] extraValues, int[] counts, boolean[] relax, String[] labelExpressions,
      String[] releases, String[] blacklistAdd, String[] blacklistRemove) {
    at(now);
    ApplicationAttemptId id = ApplicationAttemptId.fromString(attemptId);
    App app = apps.get(id.getApplicationId());
    List<ResourceRequest> asks = new ArrayList<>();
    if (priorities != null) {
      for (int i = 0; i < priorities.length; i++) {
        String label = labelExpressions == null ? null : labelExpressions[i];
        if (label == null && ResourceRequest.ANY.equals(names[i]) && app != null) {
          // As the RM's ApplicationMasterService normalizes an ask
          // (SchedulerUtils.normalizeNodeLabelExpressionInRequest): an
          // off-switch ask without an expression takes the app's.
          label = app.context.getNodeLabelExpression();
          if (label == null) {
            // then the queue's default-node-label-expression, as
            // RMServerUtils.normalizeAndValidateRequests does.
            label = app.queueLabel;
          }
        }
        ResourceRequest r = ResourceRequest.newInstance(Priority.newInstance(priorities[i]), names[i],
            resource(memory[i], vcores[i], extraNames, extraValues == null ? null : extraValues[i]), counts[i], relax[i],
            label);
        asks.add(r);
      }
    }
    List<ContainerId> release = new ArrayList<>();
    if (releases != null) {
      for (String cid : releases) {
        release.add(ContainerId.fromString(cid));
      }
    }
    Allocation a = scheduler.allocate(id, asks, null, release,
        blacklistAdd == null ? null : java.util.Arrays.asList(blacklistAdd),
        blacklistRemove == null ? null : java.util.Arrays.asList(blacklistRemove), new ContainerUpdates());
    settle();
    Resource limit = a.getResourceLimit();
    if (limit != null) {
      out.headroom(limit.getMemorySize(), limit.getVirtualCores());
    }
    TreeMap<String, Boolean> preempt = new TreeMap<>();
    if (a.getStrictContainerPreemptions() != null) {
      for (ContainerId c : a.getStrictContainerPreemptions()) {
        preempt.put(c.toString(), true);
      }
    }
    if (a.getContainerPreemptions() != null) {
      for (ContainerId c : a.getContainerPreemptions()) {
        preempt.put(c.toString(), true);
      }
    }
    for (String c : preempt.keySet()) {
      out.preempt(c);
    }
    return answer();
  }

  @Override
  public Reply expireContainer(long now, String cid) {
    at(now);
    scheduler.handle(new ContainerExpiredSchedulerEvent(ContainerId.fromString(cid)));
    return drain();
  }

  /** What the scheduler's threads would do by `now`: Fair's update; the preemption policy's pass. */
  @Override
  public Reply update(long now) throws ReflectiveOperationException {
    at(now);
    scheduler.update();
    if (fairPreemption != null) {
      fairPreemption.preempt();
    }
    return drain();
  }

  @Override
  public Reply editSchedule(long now) {
    at(now);
    if (capacityPreemption != null) {
      capacityPreemption.editSchedule();
    }
    return drain();
  }

  /**
   * Each node-label partition as the CapacityScheduler sees it, for emu's per-partition gauges:
   * the label manager's resource of the partition ("" the default one), then the root's and
   * every leaf queue's ResourceUsage.getUsed and getPending in it. Null unless the scheduler is
   * the CapacityScheduler and some node has a label.
   */
  @Override
  public Partitions partitionUsage() {
    if (!(scheduler instanceof CapacityScheduler) || labels.getClusterNodeLabelNames().isEmpty()) {
      return null;
    }
    List<String> partitions = new ArrayList<>();
    partitions.add(RMNodeLabelsManager.NO_LABEL);
    partitions.addAll(new TreeSet<>(labels.getClusterNodeLabelNames()));
    Resource cluster = scheduler.getClusterResource();
    CSQueue root = ((CapacityScheduler) scheduler).getRootQueue();
    Partitions answer = new Partitions();
    answer.partition = partitions.toArray(new String[0]);
    answer.partitionMemory = new long[partitions.size()];
    answer.partitionVcores = new int[partitions.size()];
    List<Integer> index = new ArrayList<>();
    List<String> queues = new ArrayList<>();
    List<Resource> used = new ArrayList<>();
    List<Resource> pending = new ArrayList<>();
    for (int i = 0; i < partitions.size(); i++) {
      String p = partitions.get(i);
      Resource total = labels.getResourceByLabel(p, cluster);
      answer.partitionMemory[i] = total.getMemorySize();
      answer.partitionVcores[i] = total.getVirtualCores();
      int before = queues.size();
      queueUsage(p, root, queues, used, pending);
      for (int j = before; j < queues.size(); j++) {
        index.add(i);
      }
    }
    answer.usagePartition = Reply.ints(index);
    answer.usageQueue = queues.toArray(new String[0]);
    int n = queues.size();
    answer.usedMemory = new long[n];
    answer.usedVcores = new int[n];
    answer.pendingMemory = new long[n];
    answer.pendingVcores = new int[n];
    for (int j = 0; j < n; j++) {
      answer.usedMemory[j] = used.get(j).getMemorySize();
      answer.usedVcores[j] = used.get(j).getVirtualCores();
      answer.pendingMemory[j] = pending.get(j).getMemorySize();
      answer.pendingVcores[j] = pending.get(j).getVirtualCores();
    }
    return answer;
  }

  private static void queueUsage(String partition, CSQueue q, List<String> queues, List<Resource> used,
      List<Resource> pending) {
    List<CSQueue> children = q.getChildQueues();
    boolean leaf = children == null || children.isEmpty();
    if (leaf || q.getParent() == null) {
      queues.add(q.getQueuePath());
      used.add(q.getQueueResourceUsage().getUsed(partition));
      pending.add(q.getQueueResourceUsage().getPending(partition));
    }
    if (!leaf) {
      for (CSQueue child : children) {
        queueUsage(partition, child, queues, used, pending);
      }
    }
  }

  @Override
  public Capability maximumAllocation(String queue) {
    Resource r = queue == null ? scheduler.getMaximumResourceCapability() : scheduler.getMaximumResourceCapability(queue);
    Capability answer = new Capability();
    answer.memory = r.getMemorySize();
    answer.vcores = r.getVirtualCores();
    answer.extraNames = extraNames(r);
    answer.extraValues = extraValues(r);
    return answer;
  }

  /** The names of a resource's types beyond memory and vcores. */
  private static String[] extraNames(Resource r) {
    return Arrays.stream(r.getResources()).skip(2).map(ResourceInformation::getName).toArray(String[]::new);
  }

  /** The values of a resource's types beyond memory and vcores, as extraNames orders them. */
  private static long[] extraValues(Resource r) {
    return Arrays.stream(r.getResources()).skip(2).mapToLong(ResourceInformation::getValue).toArray();
  }

  @Override
  public void close() {
    try {
      scheduler.stop();
    } catch (RuntimeException e) {
      // a scheduler never started has nothing to stop
    }
    containerTokens.stop();
    nmTokens.stop();
  }

  // --- what the scheduler did -------------------------------------------------------------
  /** What the scheduler did since the last answer; null when nothing. */
  private Reply drain() {
    settle();
    return answer();
  }

  /** The records so far as the call's answer, and a fresh builder for the next call. */
  private Reply answer() {
    Reply r = out.reply();
    if (r != null) {
      out = new Reply.Builder();
    }
    return r;
  }

  /** Handle the events of a call and those they lead to, recording what the scheduler did. */
  private void settle() {
    Event e;
    // Placements are pulled once the events of a call are handled; pulling
    // sends events of its own (ACQUIRED), handled in the next round.
    do {
      if (asyncPasses != null) {
        try {
          asyncPasses.commit();
        } catch (ReflectiveOperationException x) {
          throw new IllegalStateException(x);
        }
      }
      while ((e = dispatcher.queue.poll()) != null) {
        handle(e);
      }
      if (!allocatedTo.isEmpty()) {
        pullAllocated();
      }
    } while (!dispatcher.queue.isEmpty());
  }

  private void handle(Event e) {
    if (e instanceof SchedulerEvent) {
      scheduler.handle((SchedulerEvent) e);
    } else if (e instanceof RMAppAttemptContainerFinishedEvent) {
      RMAppAttemptContainerFinishedEvent f = (RMAppAttemptContainerFinishedEvent) e;
      ContainerStatus s = f.getContainerStatus();
      out.finished(s.getContainerId().toString(), s.getExitStatus(), clean(s.getDiagnostics()));
    } else if (e instanceof RMAppAttemptEvent) {
      RMAppAttemptEvent a = (RMAppAttemptEvent) e;
      if (a.getType() == RMAppAttemptEventType.CONTAINER_ALLOCATED) {
        allocatedTo.add(a.getApplicationAttemptId());
      }
    } else if (e instanceof RMNodeCleanContainerEvent) {
      RMNodeCleanContainerEvent c = (RMNodeCleanContainerEvent) e;
      Node n = nodesById.get(c.getNodeId());
      if (n != null) {
        out.cleanup(n.emuId, c.getContainerId().toString());
      }
    } else if (e instanceof RMAppEvent) {
      RMAppEvent a = (RMAppEvent) e;
      if (a.getType() == RMAppEventType.APP_ACCEPTED) {
        String queue = acceptedQueue(a.getApplicationId());
        out.accepted(a.getApplicationId().toString(), queue);
      } else if (a.getType() == RMAppEventType.APP_REJECTED) {
        out.rejected(a.getApplicationId().toString(), clean(a.getDiagnosticMsg()));
      }
    }
  }

  private String acceptedQueue(ApplicationId id) {
    SchedulerApplication<?> app = scheduler.getSchedulerApplications().get(id);
    if (app == null || app.getQueue() == null) {
      return "";
    }
    String name = app.getQueue().getQueueName();
    if (app.getQueue() instanceof org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CSQueue) {
      name = ((org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CSQueue) app.getQueue()).getQueuePath();
    }
    return name;
  }

  /** A container as the scheduler placed it, until it is written into the answer. */
  private static final class Placement {
    final Container container;
    final String attempt;
    final String node;
    final String locality;
    final boolean am;

    Placement(Container container, String attempt, String node, String locality, boolean am) {
      this.container = container;
      this.attempt = attempt;
      this.node = node;
      this.locality = locality;
      this.am = am;
    }

    void writeTo(Reply.Builder out) {
      Resource r = container.getResource();
      out.placed(container.getId().toString(), attempt, node, r.getMemorySize(), r.getVirtualCores(),
          extraNames(r), extraValues(r), container.getPriority().getPriority(), locality, am);
    }
  }

  /** Containers placed since the last call: pulled at once, as the RM pulls an AM's container,
   *  and written in the order the scheduler placed them (across apps, as its
   *  CONTAINER_ALLOCATED events came), not app by app. */
  private void pullAllocated() {
    List<ApplicationAttemptId> events = new ArrayList<>(allocatedTo);
    allocatedTo.clear();
    Map<ApplicationAttemptId, ArrayDeque<Placement>> placed = new LinkedHashMap<>();
    for (ApplicationAttemptId id : events) {
      if (!placed.containsKey(id)) {
        placed.put(id, pull(id));
      }
    }
    for (ApplicationAttemptId id : events) {
      Placement p = placed.get(id).poll();
      if (p != null) {
        p.writeTo(out);
      }
    }
    for (ArrayDeque<Placement> rest : placed.values()) {
      for (Placement p : rest) {
        p.writeTo(out);
      }
    }
  }

  /** An attempt's newly allocated containers, pulled, in its allocation order. */
  private ArrayDeque<Placement> pull(ApplicationAttemptId id) {
    ArrayDeque<Placement> pulled = new ArrayDeque<>();
    SchedulerApplicationAttempt sa = scheduler.getApplicationAttempt(id);
    App app = apps.get(id.getApplicationId());
    if (sa == null || app == null) {
      return pulled;
    }
    Attempt attempt = app.attempts.get(id);
    // Read each placement's locality before the pull: pulling acquires the containers, and
    // RMContainerImpl's AcquiredTransition clears the ContainerRequest it is read from.
    Map<ContainerId, String> localities = new HashMap<>();
    for (RMContainer rmc : newlyAllocated(sa)) {
      Node n = nodesById.get(rmc.getAllocatedNode());
      localities.put(rmc.getContainerId(), locality(rmc, n));
    }
    for (Container c : sa.pullNewlyAllocatedContainers()) {
      RMContainer rmc = scheduler.getRMContainer(c.getId());
      boolean am = false;
      // An unmanaged AM has no container: every container is a task's.
      if (attempt != null && attempt.master == null && rmc != null && !app.context.getUnmanagedAM()) {
        attempt.master = c;
        ((RMContainerImpl) rmc).setAMContainer(true);
        am = true;
      }
      Node n = nodesById.get(c.getNodeId());
      pulled.add(new Placement(c, id.toString(), n == null ? c.getNodeId().toString() : n.emuId,
          localities.getOrDefault(c.getId(), "OFF_SWITCH"), am));
    }
    return pulled;
  }

  private static Field newlyAllocatedField;

  /** SchedulerApplicationAttempt's newlyAllocatedContainers (protected, no getter): the
   *  placements the next pullNewlyAllocatedContainers returns. */
  @SuppressWarnings("unchecked")
  private static List<RMContainer> newlyAllocated(SchedulerApplicationAttempt sa) {
    try {
      if (newlyAllocatedField == null) {
        Field f = SchedulerApplicationAttempt.class.getDeclaredField("newlyAllocatedContainers");
        f.setAccessible(true);
        newlyAllocatedField = f;
      }
      return new ArrayList<>((List<RMContainer>) newlyAllocatedField.get(sa));
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  /** NODE_LOCAL, RACK_LOCAL or OFF_SWITCH: which of the app's requests the container answered
   *  (AppSchedulingInfo keeps the node, rack and any requests of a node-local placement). */
  private static String locality(RMContainer rmc, Node n) {
    if (rmc == null || rmc.getContainerRequest() == null || n == null) {
      return "OFF_SWITCH";
    }
    List<ResourceRequest> used = rmc.getContainerRequest().getResourceRequests();
    if (used == null || used.isEmpty()) {
      return "OFF_SWITCH";
    }
    String name = used.get(0).getResourceName();
    if (ResourceRequest.ANY.equals(name)) {
      return "OFF_SWITCH";
    }
    if (name.equals(n.host) || name.equals(n.id.toString())) {
      return "NODE_LOCAL";
    }
    return "RACK_LOCAL";
  }

  /** A message on one line, as emu's outputs carry a diagnostic (null: none). */
  private static String clean(String s) {
    if (s == null) {
      return "";
    }
    return s.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
  }

  private static Resource resource(long memory, int vcores, String[] extraNames, long[] extraValues) {
    Resource r = Resource.newInstance(memory, vcores);
    if (extraNames != null && extraValues != null) {
      for (int i = 0; i < extraNames.length; i++) {
        r.setResourceValue(extraNames[i], extraValues[i]);
      }
    }
    return r;
  }

  // --- the RM entities the scheduler reads ----------------------------------------------------
  private static Object zero(Class<?> t) {
    if (t == boolean.class) return false;
    if (t == int.class) return 0;
    if (t == long.class) return 0L;
    if (t == float.class) return 0f;
    if (t == double.class) return 0d;
    if (t == List.class) return new ArrayList<>();
    if (t == Set.class) return new HashSet<>();
    if (t == Map.class) return new HashMap<>();
    return null;
  }

  private RMNode nodeProxy(Node node) {
    ResourceUtilization none = ResourceUtilization.newInstance(0, 0, 0f);
    org.apache.hadoop.net.Node netNode = new NodeBase(node.host, node.rack);
    InvocationHandler h = (proxy, m, args) -> {
      switch (m.getName()) {
        case "getNodeID": return node.id;
        case "getHostName": return node.host;
        case "getRackName": return node.rack;
        case "getNode": return netNode;
        case "getNodeAddress": return node.id.toString();
        case "getHttpAddress": return node.host + ":8042";
        case "getCommandPort": return node.id.getPort();
        case "getHttpPort": return 8042;
        case "getTotalCapability":
        case "getPhysicalResource": return node.total;
        case "getState": return NodeState.RUNNING;
        case "getNodeLabels": return node.labels;
        case "getHealthReport": return "";
        case "getNodeManagerVersion": return "3";
        case "getAggregatedContainersUtilization":
        case "getNodeUtilization": return none;
        case "getRMContext": return context;
        case "pullContainerUpdates": {
          List<UpdatedContainerInfo> taken = new ArrayList<>(node.updates);
          node.updates.clear();
          return taken;
        }
        case "hashCode": return node.id.hashCode();
        case "equals": return proxy == args[0];
        case "toString": return node.id.toString();
        default: return zero(m.getReturnType());
      }
    };
    return (RMNode) Proxy.newProxyInstance(RMNode.class.getClassLoader(), new Class<?>[] {RMNode.class}, h);
  }

  private RMApp appProxy(App app) {
    InvocationHandler h = (proxy, m, args) -> {
      switch (m.getName()) {
        case "getApplicationId": return app.id;
        case "getUser": return app.user;
        case "getQueue": return app.context.getQueue();
        case "getName": return app.id.toString();
        case "getApplicationSubmissionContext": return app.context;
        case "getAMResourceRequests": return app.amRequests;
        case "getCurrentAppAttempt":
          return app.currentAttempt == null ? null : app.attempts.get(app.currentAttempt).proxy;
        case "getAppAttempts": {
          Map<ApplicationAttemptId, RMAppAttempt> m2 = new HashMap<>();
          for (Attempt a : app.attempts.values()) m2.put(a.id, a.proxy);
          return m2;
        }
        case "getRMAppAttempt": {
          Attempt a = app.attempts.get(args[0]);
          return a == null ? null : a.proxy;
        }
        case "getState": return RMAppState.RUNNING;
        case "getApplicationType": return "MAPREDUCE";
        case "getApplicationTags": return new HashSet<String>();
        case "getAppNodeLabelExpression":
        case "getAmNodeLabelExpression": return app.context.getNodeLabelExpression();
        case "getApplicationPriority": return app.context.getPriority();
        case "getStartTime":
        case "getSubmitTime": return EPOCH_MS;
        case "hashCode": return app.id.hashCode();
        case "equals": return proxy == args[0];
        case "toString": return app.id.toString();
        default: return zero(m.getReturnType());
      }
    };
    return (RMApp) Proxy.newProxyInstance(RMApp.class.getClassLoader(), new Class<?>[] {RMApp.class}, h);
  }

  private RMAppAttempt attemptProxy(App app, Attempt attempt) {
    InvocationHandler h = (proxy, m, args) -> {
      switch (m.getName()) {
        case "getAppAttemptId": return attempt.id;
        case "getMasterContainer": return attempt.master;
        case "getSubmissionContext": return app.context;
        case "getAppAttemptState": return RMAppAttemptState.RUNNING;
        case "getRMAppAttemptMetrics": return attempt.metrics;
        case "hashCode": return attempt.id.hashCode();
        case "equals": return proxy == args[0];
        case "toString": return attempt.id.toString();
        default: return zero(m.getReturnType());
      }
    };
    return (RMAppAttempt) Proxy.newProxyInstance(RMAppAttempt.class.getClassLoader(), new Class<?>[] {RMAppAttempt.class}, h);
  }
}
