package emu.fidelity;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.security.PrivilegedExceptionAction;
import java.util.Collections;

import com.google.inject.servlet.GuiceFilter;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.api.YarnClientApplication;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.webapp.WebApp;
import org.apache.hadoop.yarn.webapp.util.WebAppUtils;

/**
 * What a real YARN ResourceManager answers on its REST API, for checking
 * emu's answers field by field (emu.fidelity.rest_schema).
 *
 * <p>Starts a MiniYARNCluster (one RM, one NM) with the scheduler class given,
 * submits an application whose AM is this class (run with --am, on a small
 * heap, in the AM container the NM launches) and waits until that AM has
 * registered and holds one more container: the app is RUNNING with an AM
 * container like a real job's (an unmanaged AM would hide the fields YARN
 * derives from the AM container), and its queue and node have something
 * allocated. Then it GETs the RM web service paths and prints them as one
 * JSON object {path: response} on stdout, the app's id written as {id} in the
 * paths. Given several scheduler
 * classes it does so for each in turn, in one JVM (a warm JVM starts the next
 * cluster in a fraction of the first one's time), one line per scheduler.
 * Everything is bounded by one deadline; any failure prints one line starting
 * "RestProbe:" on stderr and exits non-zero.
 *
 * <p>Usage: RestProbe TIMEOUT_SECONDS SCHEDULER_CLASS...
 */
public final class RestProbe {
  private static final String[] PATHS = {
    "/ws/v1/cluster/info",
    "/ws/v1/cluster/metrics",
    "/ws/v1/cluster/scheduler",
    "/ws/v1/cluster/nodes",
    "/ws/v1/cluster/apps",
    "/ws/v1/cluster/apps/{id}",
    "/ws/v1/cluster/apps/{id}/appattempts",
  };

  private RestProbe() {}

  public static void main(String[] args) {
    if (args.length < 2) {
      System.err.println("RestProbe: usage: RestProbe TIMEOUT_SECONDS SCHEDULER_CLASS...");
      System.exit(2);
    }
    if (args[0].equals("--am") && args.length == 3) {
      try {
        applicationMaster(args[1], Long.parseLong(args[2]));
      } catch (Throwable e) {
        e.printStackTrace();
        System.exit(1);
      }
      return;
    }
    final long timeoutS;
    try {
      timeoutS = Long.parseLong(args[0]);
    } catch (NumberFormatException e) {
      System.err.println("RestProbe: TIMEOUT_SECONDS must be a number, got " + args[0]);
      System.exit(2);
      return;
    }
    // Hadoop's services log to stdout in places; only the results go there.
    final PrintStream out = System.out;
    System.setOut(System.err);
    Thread watchdog = new Thread(() -> {
      try {
        Thread.sleep(timeoutS * 1000);
      } catch (InterruptedException e) {
        return;
      }
      System.err.println("RestProbe: timed out after " + timeoutS + " s");
      Runtime.getRuntime().halt(3);
    }, "rest-probe-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
    final long deadline = System.currentTimeMillis() + timeoutS * 1000;
    // Clusters started one after another in this JVM register the same
    // metrics sources; mini-cluster mode lets them.
    DefaultMetricsSystem.setMiniClusterMode(true);
    String current = args[1];
    try {
      for (int i = 1; i < args.length; i++) {
        current = args[i];
        out.println(probe(current, deadline));
        out.flush();
        QueueMetrics.clearQueueMetrics();
        DefaultMetricsSystem.shutdown();
      }
      Runtime.getRuntime().halt(0);
    } catch (Throwable e) {
      Throwable root = e;
      while (root.getCause() != null && root.getCause() != root) {
        root = root.getCause();
      }
      System.err.println("RestProbe: " + current + ": " + e
          + (root != e ? " (caused by " + root + ")" : ""));
      Runtime.getRuntime().halt(1);
    }
  }

  private static String probe(String schedulerClass, long deadline) throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, schedulerClass);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 128);
    conf.setInt(YarnConfiguration.NM_PMEM_MB, 4096);
    conf.setInt(YarnConfiguration.NM_VCORES, 4);
    conf.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 100);
    conf.setBoolean(YarnConfiguration.TIMELINE_SERVICE_ENABLED, false);
    conf.setBoolean(YarnConfiguration.NM_DISK_HEALTH_CHECK_ENABLE, false);
    // The AM is a small JVM; the NM must not kill it for its virtual memory.
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    // One leaf queue for the CapacityScheduler, as capacity-scheduler.xml ships it.
    conf.set("yarn.scheduler.capacity.root.queues", "default");
    conf.set("yarn.scheduler.capacity.root.default.capacity", "100");

    MiniYARNCluster cluster = new MiniYARNCluster("emu-rest-probe", 1, 1, 1);
    cluster.init(conf);
    cluster.start();
    try {
      if (!cluster.waitForNodeManagersToConnect(remaining(deadline))) {
        throw new IllegalStateException("the NodeManager did not register with the RM");
      }
      YarnConfiguration live = new YarnConfiguration(cluster.getConfig());
      String web = WebAppUtils.getRMWebAppURLWithScheme(live);
      serveRmWebServices(cluster.getResourceManager());
      // Submitted as a user of its own: the FairScheduler places an app in
      // a queue named after its user, and a probe run as root would ask
      // for the root queue itself.
      ApplicationId appId = UserGroupInformation.createRemoteUser("emu")
          .doAs((PrivilegedExceptionAction<ApplicationId>) () -> runApp(live, deadline));
      StringBuilder json = new StringBuilder("{");
      String sep = "";
      for (String path : PATHS) {
        String body = get(web + path.replace("{id}", appId.toString()));
        json.append(sep).append('"').append(path).append("\":").append(body);
        sep = ",";
      }
      return json.append('}').toString();
    } finally {
      try {
        cluster.stop();
      } catch (Throwable ignored) {
        // The answer is already in hand; a noisy shutdown changes nothing.
      }
    }
  }

  /**
   * Points Guice's servlet filter back at the RM's web services. Every YARN
   * web app (the RM's and each NM's) installs a GuiceFilter by class name, and
   * such filters share one static pipeline: the last web app started, an
   * NM's, would otherwise answer on the RM's port too (404 for /ws/v1/cluster).
   * In a real cluster each daemon has its own JVM, so this restores what a
   * client of a real RM sees; the NMs' own pages are not probed.
   */
  private static void serveRmWebServices(ResourceManager rm) throws Exception {
    Method getWebapp = ResourceManager.class.getDeclaredMethod("getWebapp");
    getWebapp.setAccessible(true);
    WebApp webapp = (WebApp) getWebapp.invoke(rm);
    Field filterField = WebApp.class.getDeclaredField("guiceFilter");
    filterField.setAccessible(true);
    GuiceFilter filter = (GuiceFilter) filterField.get(webapp);
    Field injected = GuiceFilter.class.getDeclaredField("injectedPipeline");
    injected.setAccessible(true);
    Object pipeline = injected.get(filter);
    if (pipeline == null) {
      throw new IllegalStateException("the RM web app's Guice filter has no pipeline");
    }
    Field shared = GuiceFilter.class.getDeclaredField("pipeline");
    shared.setAccessible(true);
    shared.set(null, pipeline);
  }

  private static long remaining(long deadline) {
    return Math.max(1, deadline - System.currentTimeMillis());
  }

  /**
   * A submitted app whose AM (this class, with --am, in a container the NM
   * launches) has registered and holds one more container: the app RUNNING,
   * with an AM container, as a real job's would be.
   */
  private static ApplicationId runApp(final YarnConfiguration conf, final long deadline)
      throws Exception {
    YarnClient client = YarnClient.createYarnClient();
    client.init(conf);
    client.start();
    YarnClientApplication app = client.createApplication();
    ApplicationSubmissionContext ctx = app.getApplicationSubmissionContext();
    final ApplicationId appId = ctx.getApplicationId();
    ctx.setApplicationName("emu-rest-probe");
    ctx.setApplicationType("YARN");
    ctx.setQueue("default");
    ctx.setPriority(Priority.newInstance(0));
    ctx.setResource(Resource.newInstance(512, 1));
    ctx.setMaxAppAttempts(1);
    String java = System.getProperty("java.home") + "/bin/java";
    String cp = System.getProperty("java.class.path");
    String command = java + " -Xmx96m -XX:TieredStopAtLevel=1 -cp '" + cp + "' "
        + RestProbe.class.getName() + " --am "
        + conf.get(YarnConfiguration.RM_SCHEDULER_ADDRESS) + " " + deadline
        + " 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr";
    ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(
        Collections.emptyMap(), Collections.emptyMap(), Collections.singletonList(command),
        Collections.emptyMap(), null, Collections.emptyMap()));
    client.submitApplication(ctx);
    try {
      waitUntilRunning(client, appId, deadline);
    } finally {
      client.stop();
    }
    return appId;
  }

  private static void waitUntilRunning(YarnClient client, ApplicationId appId, long deadline)
      throws Exception {
    while (true) {
      ApplicationReport report = client.getApplicationReport(appId);
      YarnApplicationState state = report.getYarnApplicationState();
      if (state == YarnApplicationState.FAILED || state == YarnApplicationState.KILLED
          || state == YarnApplicationState.FINISHED) {
        throw new IllegalStateException(
            "the application " + state + ": " + report.getDiagnostics());
      }
      if (state == YarnApplicationState.RUNNING
          && report.getApplicationResourceUsageReport().getNumUsedContainers() >= 2) {
        return;
      }
      waitOrFail(deadline, "the application did not reach RUNNING with a container ("
          + state + ")");
    }
  }

  /**
   * The AM: registers with the RM (its AMRMToken comes in the container's
   * credentials), asks for one container, takes it, then heartbeats until
   * its NM kills it. Should the probe die without stopping the cluster, the
   * AM ends on its own: at the probe's deadline, or as soon as the RM stops
   * answering (within seconds, not YARN's default quarter hour of retries).
   */
  private static void applicationMaster(String schedulerAddress, long deadline)
      throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER_ADDRESS, schedulerAddress);
    conf.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_MAX_WAIT_MS, 5000);
    conf.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, 1000);
    AMRMClient<ContainerRequest> amrm = AMRMClient.createAMRMClient();
    amrm.init(conf);
    amrm.start();
    amrm.registerApplicationMaster("localhost", 0, "");
    amrm.addContainerRequest(new ContainerRequest(
        Resource.newInstance(256, 1), null, null, Priority.newInstance(1)));
    while (System.currentTimeMillis() < deadline) {
      AllocateResponse r = amrm.allocate(0.5f);
      for (org.apache.hadoop.yarn.api.records.Container c : r.getAllocatedContainers()) {
        amrm.removeContainerRequest(new ContainerRequest(
            c.getResource(), null, null, c.getPriority()));
      }
      Thread.sleep(200);
    }
    System.exit(0);
  }

  private static void waitOrFail(long deadline, String what) throws InterruptedException {
    if (System.currentTimeMillis() > deadline) {
      throw new IllegalStateException(what);
    }
    Thread.sleep(100);
  }

  private static String get(String url) throws IOException {
    HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
    c.setRequestProperty("Accept", "application/json");
    c.setConnectTimeout(10_000);
    c.setReadTimeout(30_000);
    int status = c.getResponseCode();
    InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream();
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    if (in != null) {
      in.transferTo(buf);
      in.close();
    }
    String body = buf.toString(StandardCharsets.UTF_8.name()).trim();
    if (status != 200 || !body.startsWith("{")) {
      throw new IOException("GET " + url + " answered " + status + ": "
          + body.substring(0, Math.min(200, body.length())));
    }
    return body;
  }
}
