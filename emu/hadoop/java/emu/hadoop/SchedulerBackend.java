package emu.hadoop;

import java.util.ArrayList;
import java.util.List;

/**
 * What emu's Python scheduler (emu/rm/scheduler/hadoop.py) may ask of the
 * Java driver around a Hadoop scheduler, and the shape of every answer: the
 * declaration of that contract. javac holds SchedulerDriver to it;
 * emu/hadoop/contract.py mirrors it as typing.Protocols, which mypy holds
 * the Python caller to, and tests/unit/test_hadoop_contract.py reads this
 * file and fails when the mirror differs in a method, a parameter or a
 * reply field.
 *
 * Every method that lets the scheduler act takes `now`, emu's simulated
 * time in milliseconds, and answers with a Reply: what the scheduler did
 * during the call, or null when it did nothing (the usual heartbeat), which
 * costs the least to cross the bridge.
 *
 * Replies are columns (one array per field) rather than objects per record:
 * reading a Java object's field from Python is a call across the bridge,
 * so a reply costs one read per column, however many containers it holds.
 */
public interface SchedulerBackend {
  /** Milliseconds between two of Fair's update passes; 0 when the scheduler has none. */
  long updateIntervalMs();

  /** Milliseconds between two preemption-policy passes; 0 when no policy runs. */
  long preemptionIntervalMs();

  /** Milliseconds between two passes of the auto-created queue deletion policy; 0 when it does not run. */
  long queueDeletionIntervalMs();

  /** Milliseconds between two asynchronous scheduling passes (CapacityScheduler's
   *  schedule-asynchronously.scheduling-interval-ms); 0 when it schedules on node heartbeats. */
  long asyncIntervalMs();

  /** Passes per tick (schedule-asynchronously.maximum-threads, at least 1); 0 when not asynchronous. */
  int asyncThreads();

  /** How many nodes hold a reservation. */
  int reservedNodes();

  /** Milliseconds between two runs of the multi-node sorters emu drives (the greatest common divisor
   *  of their sorting intervals); 0 when multi-node placement is off or no sorter sorts on an interval. */
  long nodeSortIntervalMs();

  /** What an asynchronous pass draws its start among: the nodes, or with multi-node placement the
   *  partitions holding nodes. */
  int asyncBound();

  /** The multi-node sorters whose interval divides `now` re-sort the nodes (MultiNodeSorter.reSortClusterNodes). */
  Reply sortNodes(long now) throws Exception;

  /** One tick of asynchronous scheduling: CapacityScheduler.schedule once per start, each the index
   *  that emu drew for that thread's pass in ClusterNodeTracker.getAllNodes (or, with multi-node
   *  placement, in its getPartitions). */
  Reply asyncPass(long now, int[] starts) throws Exception;

  /** A node registers: its resource, and labels as `name` or `name(exclusive=false)`. */
  Reply addNode(long now, String emuId, String host, int port, String rack, long memory, int vcores,
      String[] extraNames, long[] extraValues, String[] nodeLabels) throws Exception;

  Reply removeNode(long now, String emuId);

  Reply updateNodeResource(long now, String emuId, long memory, int vcores, String[] extraNames,
      long[] extraValues);

  /** A node heartbeat: containers it started and finished since the last, then a scheduling pass. */
  Reply nodeUpdate(long now, String emuId, String[] launched, String[] completed, int[] exits,
      String[] diagnostics);

  /**
   * A submission, placed by the RM's placement rules; answered with an Accepted or a Rejected record.
   * An unmanaged AM's app asks for no AM container (a federation's secondary sub-cluster apps).
   */
  Reply addApp(long now, String appId, String queue, String user, int priority, long amMemory, int amVcores,
      String[] extraNames, long[] extraValues, String labelExpression, boolean unmanaged) throws Exception;

  Reply addAttempt(long now, String attemptId);

  Reply removeAttempt(long now, String attemptId, String finalState);

  Reply removeApp(long now, String appId, String finalState);

  /** The AM's ask for its own container (RMAppAttemptImpl's ScheduleTransition). */
  Reply requestAm(long now, String attemptId);

  /** An AM's allocate: its asks as columns (one entry per ResourceRequest), releases and
   *  blacklist changes. The reply also carries the headroom and the containers to give back. */
  Reply allocate(long now, String attemptId, int[] priorities, String[] names, long[] memory, int[] vcores,
      String[] extraNames, long[][] extraValues, int[] counts, boolean[] relax, String[] labelExpressions,
      String[] releases, String[] blacklistAdd, String[] blacklistRemove);

  Reply expireContainer(long now, String cid);

  /** What the scheduler's threads would do by `now`: Fair's update; Fair's preemption thread. */
  Reply update(long now) throws Exception;

  /** One pass of the Capacity preemption policy. */
  Reply editSchedule(long now);

  /** One pass of AutoCreatedQueueDeletionPolicy. */
  Reply deleteExpiredQueues(long now) throws Exception;

  /** An admin's queue refresh; a refusal is a Reply whose `refusal` says why, and changes nothing. */
  Reply refreshQueues(long now, String[] keys, String[] values, String allocationFile);

  /** An operator's node-label change ("add", "remove" or "replace"); a refusal as for refreshQueues. */
  Reply nodeLabels(long now, String op, String[] names, boolean[] exclusive, int[] ports, String[] values);

  /** Each node-label partition as the CapacityScheduler sees it; null unless it is the
   *  CapacityScheduler and some node has a label. */
  Partitions partitionUsage();

  /** The largest container the scheduler grants in `queue` (null: anywhere). */
  Capability maximumAllocation(String queue);

  /** Stop the scheduler and its timers (the RM's end). */
  void close();

  /**
   * What the scheduler did during one call, in the order it did it. `order`
   * holds one letter per record; the n-th letter of a kind is row n of that
   * kind's columns:
   *
   *   P placed       placed*      a container the scheduler placed
   *   F finished     finished*    a container the scheduler ended (YARN's exit status, diagnostics)
   *   C cleanup      cleanup*     a stop order to a node's NM
   *   A accepted     accepted*    an app accepted, in the queue it was placed in ("" unknown)
   *   R rejected     rejected*    an app rejected, with YARN's message
   *   H headroom     headroom*    the AM's headroom (allocate; at most one)
   *   X preempt      preempt      a container the AM is asked to give back (allocate)
   *
   * `refusal` is set, and nothing else, when an admin change is refused.
   * Diagnostics and messages are on one line each, as emu's outputs carry them.
   */
  final class Reply {
    public String order = "";
    public String refusal;

    public String[] placedContainer;
    public String[] placedAttempt;
    public String[] placedNode;
    public long[] placedMemory;
    public int[] placedVcores;
    /** The resource types beyond memory and vcores (the same for every container of a run). */
    public String[] placedExtraNames;
    /** placedExtraNames.length values per container, container after container. */
    public long[] placedExtraValues;
    public int[] placedPriority;
    /** NODE_LOCAL, RACK_LOCAL or OFF_SWITCH. */
    public String[] placedLocality;
    public boolean[] placedAm;

    public String[] finishedContainer;
    public int[] finishedExitStatus;
    public String[] finishedDiagnostics;

    public String[] cleanupNode;
    public String[] cleanupContainer;

    public String[] acceptedApp;
    public String[] acceptedQueue;

    public String[] rejectedApp;
    public String[] rejectedMessage;

    public long headroomMemory;
    public int headroomVcores;

    public String[] preempt;

    /** Records as they come; `reply()` turns them into columns. One builder per reply. */
    static final class Builder {
      private final StringBuilder order = new StringBuilder();
      private final List<String> placedContainer = new ArrayList<>();
      private final List<String> placedAttempt = new ArrayList<>();
      private final List<String> placedNode = new ArrayList<>();
      private final List<Long> placedMemory = new ArrayList<>();
      private final List<Integer> placedVcores = new ArrayList<>();
      private String[] placedExtraNames = new String[0];
      private final List<Long> placedExtraValues = new ArrayList<>();
      private final List<Integer> placedPriority = new ArrayList<>();
      private final List<String> placedLocality = new ArrayList<>();
      private final List<Boolean> placedAm = new ArrayList<>();
      private final List<String> finishedContainer = new ArrayList<>();
      private final List<Integer> finishedExitStatus = new ArrayList<>();
      private final List<String> finishedDiagnostics = new ArrayList<>();
      private final List<String> cleanupNode = new ArrayList<>();
      private final List<String> cleanupContainer = new ArrayList<>();
      private final List<String> acceptedApp = new ArrayList<>();
      private final List<String> acceptedQueue = new ArrayList<>();
      private final List<String> rejectedApp = new ArrayList<>();
      private final List<String> rejectedMessage = new ArrayList<>();
      private long headroomMemory;
      private int headroomVcores;
      private final List<String> preempt = new ArrayList<>();

      boolean isEmpty() {
        return order.length() == 0;
      }

      void placed(String container, String attempt, String node, long memory, int vcores, String[] extraNames,
          long[] extraValues, int priority, String locality, boolean am) {
        order.append('P');
        placedContainer.add(container);
        placedAttempt.add(attempt);
        placedNode.add(node);
        placedMemory.add(memory);
        placedVcores.add(vcores);
        placedExtraNames = extraNames;
        for (long v : extraValues) {
          placedExtraValues.add(v);
        }
        placedPriority.add(priority);
        placedLocality.add(locality);
        placedAm.add(am);
      }

      void finished(String container, int exitStatus, String diagnostics) {
        order.append('F');
        finishedContainer.add(container);
        finishedExitStatus.add(exitStatus);
        finishedDiagnostics.add(diagnostics);
      }

      void cleanup(String node, String container) {
        order.append('C');
        cleanupNode.add(node);
        cleanupContainer.add(container);
      }

      void accepted(String app, String queue) {
        order.append('A');
        acceptedApp.add(app);
        acceptedQueue.add(queue);
      }

      void rejected(String app, String message) {
        order.append('R');
        rejectedApp.add(app);
        rejectedMessage.add(message);
      }

      void headroom(long memory, int vcores) {
        order.append('H');
        headroomMemory = memory;
        headroomVcores = vcores;
      }

      void preempt(String container) {
        order.append('X');
        preempt.add(container);
      }

      /** The records so far as a Reply; null when there are none. */
      Reply reply() {
        if (isEmpty()) {
          return null;
        }
        Reply r = new Reply();
        r.order = order.toString();
        r.placedContainer = strings(placedContainer);
        r.placedAttempt = strings(placedAttempt);
        r.placedNode = strings(placedNode);
        r.placedMemory = longs(placedMemory);
        r.placedVcores = ints(placedVcores);
        r.placedExtraNames = placedExtraNames;
        r.placedExtraValues = longs(placedExtraValues);
        r.placedPriority = ints(placedPriority);
        r.placedLocality = strings(placedLocality);
        r.placedAm = new boolean[placedAm.size()];
        for (int i = 0; i < r.placedAm.length; i++) {
          r.placedAm[i] = placedAm.get(i);
        }
        r.finishedContainer = strings(finishedContainer);
        r.finishedExitStatus = ints(finishedExitStatus);
        r.finishedDiagnostics = strings(finishedDiagnostics);
        r.cleanupNode = strings(cleanupNode);
        r.cleanupContainer = strings(cleanupContainer);
        r.acceptedApp = strings(acceptedApp);
        r.acceptedQueue = strings(acceptedQueue);
        r.rejectedApp = strings(rejectedApp);
        r.rejectedMessage = strings(rejectedMessage);
        r.headroomMemory = headroomMemory;
        r.headroomVcores = headroomVcores;
        r.preempt = strings(preempt);
        return r;
      }
    }

    static String[] strings(List<String> list) {
      return list.toArray(new String[0]);
    }

    static long[] longs(List<Long> list) {
      long[] out = new long[list.size()];
      for (int i = 0; i < out.length; i++) {
        out[i] = list.get(i);
      }
      return out;
    }

    static int[] ints(List<Integer> list) {
      int[] out = new int[list.size()];
      for (int i = 0; i < out.length; i++) {
        out[i] = list.get(i);
      }
      return out;
    }

    /** A reply that refuses an admin change. */
    static Reply refused(String why) {
      Reply r = new Reply();
      r.refusal = why;
      return r;
    }
  }

  /**
   * Each partition ("" the default one): the label manager's resource of it
   * (partition*), then the ResourceUsage of the root and every leaf queue in
   * it (usage*, usagePartition the index of its partition), the root first.
   */
  final class Partitions {
    public String[] partition;
    public long[] partitionMemory;
    public int[] partitionVcores;

    public int[] usagePartition;
    public String[] usageQueue;
    public long[] usedMemory;
    public int[] usedVcores;
    public long[] pendingMemory;
    public int[] pendingVcores;
  }

  /** An amount of every resource type: memory, vcores and the others by name. */
  final class Capability {
    public long memory;
    public int vcores;
    public String[] extraNames;
    public long[] extraValues;
  }
}
